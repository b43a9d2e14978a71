"""Characters back to the game (docs/characters.md, "Export"): each action of a character
armature as a TRAM, `.oni` or OniSplit XML.

Every part's matrix is sampled on every frame (the bones' evaluated pose, turned back by
their rest rotations, in the engine's axes and units), each part's rotation is taken from
its parent's, and the root's motion from the pelvis, from where it stands on frame 0 (the
game puts a character where it is: a TRAM moves it from there). An imported animation left unchanged
is written back as it was read, bit for bit; any other is fitted as keys with durations
(engine/fit_tram.py), with the metadata of the action's markers and properties. The file is
read back and replayed by the engine's math against the sampled matrices before it stays.
"""

import os
from dataclasses import dataclass

import bpy
import numpy as np

from ....blender.compat import action_fcurves
from ....blender.pose_values import bone_channel, keyed_poses
from ....core.errors import ObanError
from ....core.id_properties import unsigned32
from ....core.output_files import FileJob, OutputFile, file_name, write_job
from ....core.report import Made, Report, listed
from ...blender.characters.armature_body import ArmatureBody, armature_body, recorded_actions
from ...engine import poses
from ...engine.fit_tram import fit_tracks, root_motion_from
from ...engine.rotations import matrix_quaternions, relative_errors, split_rotation_scale, stored_from_hamilton
from ...engine.to_oni import oni_matrices
from ...io.import_frame import SOURCE_FILE
from ...io.trams.files import read_tram_file
from ...io.trams.properties import NAME, PREFIX, tram_from_properties, tram_properties
from ...io.trams.tram import OVERLAY, Tram
from ...io.trams.write import tram_oni_bytes
from ...io.trams.xml_write import tram_xml_bytes
from ..shared.as_read import motion_as_read
from ..shared.motion import sampled
from .action import described, events, tram_name

FILES = {"oni": ("TRAM{name}.oni", tram_oni_bytes), "xml": ("TRAM{name}.xml", tram_xml_bytes)}
RIGID = 1e-4           # a bone's local matrix off a rotation (scale, shear), or off its rest offset, by more: refused
MAX_FRAMES = 0xFFFF
SHOWN = "SHOWN"        # Actions: As Shown, the armature's motion as the scene shows it
FLOAT32_MAX = float(np.finfo(np.float32).max)


def actions_of(armatures, choice):
    """(armature, action) pairs to export: each armature as shown (SHOWN: action None), each
    armature's assigned action, or ("ALL") every
    action of its own (docs/characters.md, "Export"): those its imports made for it, the one
    assigned to it (with the slot it plays), those in its NLA tracks. An action of no armature
    goes to the first of `armatures` whose bones it moves; [notes] saying so where it moves
    several armatures' bones."""
    if choice == SHOWN:
        return [(armature, None) for armature in armatures], []
    if choice != "ALL":
        return [(armature, armature.animation_data.action) for armature in armatures
                if armature.animation_data and armature.animation_data.action], []
    scene = [obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.users_scene]
    owners = _owners(scene)
    bones = {armature: {f'pose.bones["{bpy.utils.escape_identifier(bone.name)}"]' for bone in armature.data.bones}
             for armature in scene}
    pairs, notes = [], []
    for action in bpy.data.actions:
        if action in owners:
            pairs += [(armature, action) for armature in armatures if armature in owners[action]]
            continue
        moved_paths = {curve.data_path.rpartition(".")[0] for curve in action_fcurves(action)}
        moved = [armature for armature in scene if moved_paths & bones[armature]]
        chosen = next((armature for armature in armatures if armature in moved), None)
        if chosen is None:
            continue
        pairs.append((chosen, action))
        if len(moved) > 1:
            notes.append(f"action '{action.name}' belongs to no armature and moves the bones of "
                         f"{', '.join(repr(armature.name) for armature in moved)}: written for '{chosen.name}'")
    return sorted(pairs, key=lambda pair: armatures.index(pair[0])), notes


def _owners(scene):
    """{action: [the armatures of the `scene` list whose own it is]} (actions_of's rule)."""
    owners = {}
    for armature in scene:
        data = armature.animation_data
        shown = [data.action, *(strip.action for track in data.nla_tracks for strip in track.strips)] \
            if data else []
        for action in recorded_actions(armature) + shown:
            if action is not None and armature not in owners.setdefault(action, []):
                owners[action].append(armature)
    return owners


def export_characters(context, armatures, directory, settings) -> Report:
    """Each chosen action of each armature as a TRAM file: Made(path, the TRAM read back, the
    armature, its worst relative error, "unchanged import" where written as read). An action
    that cannot be written writes nothing; its error is in `errors`. Actions that would write
    the same file are refused, each naming the others (docs/characters.md, "Export")."""
    report = Report(unit="actions")
    bodies = _bodies(armatures, settings, report)
    pairs, report.notes = actions_of(list(bodies), settings.character_actions)
    if settings.character_actions != SHOWN:
        report.notes += [note for note in map(_moved_otherwise, bodies) if note]
    report.errors += [f"armature '{armature.name}': no action to export" for armature in bodies
                      if not any(owner == armature for owner, _ in pairs)]
    _export_pairs(context, pairs, bodies, directory, settings, report)
    return report


def export_actions(context, pairs, directory, settings) -> Report:
    """Each (armature, action) of `pairs` as a TRAM file, as export_characters writes its own
    (a cutscene's strips: the actions it plays, not the armature's others)."""
    report = Report(unit="actions")
    bodies = _bodies(list(dict.fromkeys(armature for armature, _ in pairs)), settings, report)
    _export_pairs(context, [(a, action) for a, action in pairs if a in bodies], bodies, directory, settings, report)
    return report


def _bodies(armatures, settings, report) -> dict:
    bodies = {}
    for armature in armatures:
        try:
            bodies[armature] = armature_body(armature, settings.global_scale, settings.axes)
        except ObanError as error:
            report.errors.append(str(error))
    return bodies


def _export_pairs(context, pairs, bodies, directory, settings, report):
    report.files += len(pairs)
    jobs = [_Job(bodies[armature], action, f"action '{action.name}' of '{armature.name}'" if action is not None
                 else f"armature '{armature.name}' as shown") for armature, action in pairs]
    report.each(_one_file_each(jobs, directory, settings, report.errors), lambda job: _export(context, job, settings))
    report.counts = {"files": len(report.made)}


@dataclass
class _Job:
    """One action (or an armature as shown) to write for one armature: its properties as
    checked, its TRAM name and file."""
    body: ArmatureBody
    action: object             # None: the armature's motion as Blender shows it (SHOWN)
    label: str                 # how messages name it
    found: dict = None         # its tram_ properties (tram_action.described)
    name: str = ""             # the TRAM's name
    path: str = ""             # the file it writes

    @property
    def described_by(self):
        """What holds its tram_ properties and names it: the action, else the armature."""
        return self.action if self.action is not None else self.body.armature


def _moved_otherwise(armature) -> str:
    """A note where constraints or drivers move the armature's bones: its actions are sampled
    without them (_sample), as their keys move the bones."""
    constrained = list(dict.fromkeys(bone.name for bone, _ in _bone_constraints(armature)))
    driven = _bone_drivers(armature)
    if not constrained and not driven:
        return ""
    what = [f"constraints on {listed(constrained)}" if constrained else "",
            f"drivers on {listed(sorted({bone_channel(d.data_path)[0] for d in driven}))}" if driven else ""]
    return (f"armature '{armature.name}': {' and '.join(w for w in what if w)} move its bones: each action is "
            f"written as its own keys move them (Actions: As Shown writes the motion the scene shows)")


def _bone_constraints(armature) -> list:
    """(pose bone, constraint) of each constraint in effect (not muted) on the armature's bones."""
    return [(bone, constraint) for bone in armature.pose.bones for constraint in bone.constraints
            if not constraint.mute]


def _bone_drivers(armature) -> list:
    data = armature.animation_data
    return [d for d in data.drivers if not d.mute and bone_channel(d.data_path)[0] is not None] if data else []


def _one_file_each(jobs, directory, settings, errors):
    """The jobs whose file no other job would write (by the TRAM name each action says, sound or
    not) and whose properties are sound; the others' errors into `errors`."""
    pattern = FILES[settings.character_format][0]
    by_file = {}
    for job in jobs:   # one file a name, whatever the case (not every file system tells them apart)
        said = job.described_by.get(NAME)
        job.path = os.path.join(directory, file_name(pattern.format(name=said if isinstance(said, str) else
                                                                    job.described_by.name)))
        by_file.setdefault(os.path.basename(job.path).casefold(), []).append(job)
    alone = []
    for same in by_file.values():
        if len(same) == 1:
            alone += same
            continue
        for job in same:
            others = " and ".join(other.label for other in same if other is not job)
            errors.append(f"{job.label}: {others} would write {os.path.basename(job.path)} too; nothing written "
                          f"for them: give each its own TRAM name (the action's property '{NAME}')")
    sound = []
    for job in alone:
        try:
            job.found = described(job.described_by, job.label)
            job.name = tram_name(job.described_by, job.found, job.label)
        except ObanError as error:
            errors.append(str(error))
            continue
        sound.append(job)
    return sound


def _engine(body, pose):
    """(F, P, 4, 4) engine part matrices from Blender pose matrices (F, P, 4, 4): each bone's
    turned back by its rest rotation, then in the engine's axes and units."""
    unturned = np.tile(np.eye(4), (len(body.names), 1, 1))
    unturned[:, :3, :3] = np.swapaxes(body.rest[:, :3, :3], 1, 2)
    return oni_matrices(pose @ unturned, body.axes, body.scale)


def _export(context, job, settings):
    """Made of the job's TRAM file: as read where the motion is unchanged, else fitted."""
    body, action, label, found = job.body, job.action, job.label, job.found
    if action is not None:
        _check_keys(action, body, label)
    first, count = _frame_range(body, action, found) if action is not None else \
        (context.scene.frame_start, context.scene.frame_end - context.scene.frame_start + 1)
    if not 1 <= count <= MAX_FRAMES:
        raise ObanError(label, f"{count} frames; a TRAM holds 1 to {MAX_FRAMES}")
    markers = events(action, found, first, body.names, label) if action is not None else []
    world = _engine(body, _sample(context, body, action, first, count, label))
    world[..., [0, 2], 3] -= world[0, 0, [0, 2], 3] - body.translations[0, [0, 2]]   # frame 0 over the origin
    rotations, locations = _local_motion(world, body, label, first)
    stored = _stored(found, markers, body)
    unchanged = stored is not None and stored.frames == count and \
        motion_as_read(relative_errors(poses.animation_matrices(body, stored).reshape(-1, 4, 4),
                                       world.reshape(-1, 4, 4)))
    tram = stored if unchanged else _fitted(job, markers, rotations, locations, settings.character_tolerance)
    source = action.get(SOURCE_FILE) if action is not None else None
    return _write(tram, body, world, job.path, settings, label, unchanged, [source] if isinstance(source, str) else [])


def _frame_range(body, action, found):
    """(first scene frame, frame count): the action's manual frame range where it has one; an
    imported animation's own (longer where keys were added after its end); else from the
    first key to the last."""
    if action.use_frame_range:
        start, end = round(action.frame_start), round(action.frame_end)
        return start, end - start + 1
    ends = [curve.keyframe_points[i].co[0] for curve in action_fcurves(action) if len(curve.keyframe_points)
            for i in (0, -1)]
    start, end = (round(min(ends)), round(max(ends))) if ends and np.isfinite(ends).all() else (1, 1)
    if NAME in found and PREFIX + "frames" in found and body.first_frame is not None:
        return body.first_frame, max(found[PREFIX + "frames"], end - body.first_frame + 1)
    return start, end - start + 1


def _check_keys(action, body, label):
    """ObanError naming the bone, the channel and the frame of the first key (or handle) of
    the action's curves on the parts' bones that is not finite (_finite)."""
    parts = set(body.names)
    for curve in action_fcurves(action):
        bone, channel = bone_channel(curve.data_path)
        points = curve.keyframe_points
        if bone not in parts or not len(points):
            continue
        keys = np.empty((3, len(points), 2), np.float32)
        for values, name in zip(keys, ("co", "handle_left", "handle_right")):
            points.foreach_get(name, values.ravel())
        bad = np.flatnonzero(~_finite(keys).all(axis=(0, 2)))
        if len(bad):
            raise ObanError(label, f"bone '{bone}': its {channel}[{curve.array_index}] key {bad[0]} "
                                   f"(on frame {keys[0, bad[0], 0]:g}) is not finite")


def _finite(values):
    """Whether each value is finite and short of float32's largest, where Blender puts an infinity
    set through a key's value (and evaluates one to)."""
    return np.abs(values) < FLOAT32_MAX


def _sample(context, body, action, first, count, label):
    """(F, P, 4, 4) the bones' evaluated pose matrices (armature space) on each frame: with
    `action` assigned alone (the NLA tracks, the bones' constraints and drivers muted) over a
    pose at rest (bones it does not key stay at rest), from its keys where they alone make them
    (blender/pose_values.py), else sampled; None: as the scene shows them."""
    if action is None:
        return _checked(body, _sampled(context, body, first, count), first, label)
    armature = body.armature
    data = armature.animation_data or armature.animation_data_create()
    assigned, nla = data.action, data.use_nla
    slot = getattr(data, "action_slot", None)
    muted = [constraint for _, constraint in _bone_constraints(armature)] + _bone_drivers(armature)
    try:
        for bone in armature.pose.bones:
            bone.location, bone.rotation_quaternion, bone.scale = (0, 0, 0), (1, 0, 0, 0), (1, 1, 1)
            bone.rotation_euler, bone.rotation_axis_angle = (0, 0, 0), (0, 0, 1, 0)
        data.action, data.use_nla = action, False
        if hasattr(data, "action_slot") and action.slots:
            data.action_slot = action.slots[0]
        for item in muted:
            item.mute = True
        pose = keyed_poses(context.scene, armature, body.names, first + np.arange(count))
        return _checked(body, pose if pose is not None else _sampled(context, body, first, count), first, label)
    finally:
        for item in muted:
            item.mute = False
        data.action, data.use_nla = assigned, nla
        if slot is not None:
            data.action_slot = slot


def _sampled(context, body, first, count):
    """(F, P, 4, 4) the parts' bones' evaluated pose matrices from scene frame `first` on, as
    the scene shows them."""
    armature = body.armature
    order = [armature.pose.bones.find(name) for name in body.names]
    every = np.empty((count, len(armature.pose.bones) * 16), np.float32)

    def read(f, depsgraph):
        armature.evaluated_get(depsgraph).pose.bones.foreach_get("matrix", every[f])
    sampled(context, first + np.arange(count), read)
    return np.swapaxes(every.reshape(count, -1, 4, 4)[:, order], 2, 3).astype(np.float64)   # stored by columns


def _checked(body, pose, first, label):
    """`pose`, the parts' pose matrices from scene frame `first` on; ObanError naming the first
    bone that is not finite."""
    bad = np.argwhere(~_finite(pose).all(axis=(2, 3)))
    if len(bad):      # the first frame, then the first part (a parent before its children)
        frame, part = bad[0]
        raise ObanError(label, f"bone '{body.names[part]}' is not finite at frame {first + frame} "
                               f"(an F-curve modifier, a driver or a constraint makes it so)")
    return pose


def _local_motion(world, body, label, first):
    """Each part's rotation (F, P, 4, stored quaternions) from its parent's matrix, and the root's
    (x, height, z) at every frame; ObanError where a bone scales, shears or leaves its parent."""
    parents = body.parents
    frame_of = np.repeat(np.arange(len(world)), len(parents))
    root = np.tile(np.eye(4), (len(world), 1, 1))
    root[:, :3, 3] = world[:, 0, :3, 3] - body.translations[0]          # C[f] = T(location + height)
    above = np.where(parents[None, :, None, None] >= 0, world[:, np.maximum(parents, 0)], root[:, None])
    local = _affine_inverses(above.reshape(-1, 4, 4)).reshape(above.shape) @ world   # T(TRTA[p]) . R(q[p])
    rotation, scale, errors = split_rotation_scale(local[..., :3, :3].reshape(-1, 3, 3), per_matrix=True)
    bad = np.flatnonzero((errors > RIGID) | (np.abs(scale - 1.0).max(axis=1) > RIGID))
    if len(bad):      # the first frame, then the first bone
        raise ObanError(label, f"bone '{body.names[bad[0] % len(parents)]}' scales or shears at frame "
                               f"{first + frame_of[bad[0]]}; a TRAM only turns parts")
    drift = np.abs(local[..., :3, 3] - body.translations).max(axis=2)
    drift[:, 0] = 0.0                                                     # the root moves: its root motion
    size = np.maximum(np.abs(body.translations).max(axis=1), 1.0)
    if (drift > RIGID * size).any():
        frame, part = np.argwhere(drift > RIGID * size)[0]
        raise ObanError(label, f"bone '{body.names[part]}' moves away from its parent at frame {first + frame}; "
                               f"a TRAM only turns parts")
    quaternions = stored_from_hamilton(matrix_quaternions(rotation)).reshape(len(world), len(parents), 4)
    locations = root[:, :3, 3]
    return quaternions, locations


def _affine_inverses(matrices):
    """(n, 4, 4) the inverses of affine matrices [A | t]: [A^-1 | -A^-1 t], A^-1 the adjugate's
    rows (cross products of A's columns) over the determinant; zeros for a singular one (a bone
    scaled to nothing: its children scale). np.linalg.inv makes a LAPACK call a matrix, which
    BLAS threads on a busy machine make tens of times slower (seconds for a cutscene's TRAMs)."""
    columns = np.swapaxes(matrices[:, :3, :3], 1, 2)
    rows = np.stack([np.cross(columns[:, 1], columns[:, 2]), np.cross(columns[:, 2], columns[:, 0]),
                     np.cross(columns[:, 0], columns[:, 1])], axis=1)
    determinants = np.einsum("ij,ij->i", columns[:, 0], rows[:, 0])[:, None, None]
    inverses = np.zeros(matrices.shape)
    np.divide(rows, determinants, out=inverses[:, :3, :3], where=determinants != 0)
    inverses[:, :3, 3] = -(inverses[:, :3, :3] @ matrices[:, :3, 3:])[:, :, 0]
    inverses[:, 3, 3] = 1.0
    return inverses


def _stored(found, markers, body):
    """The TRAM an unedited import would write: its description and stored motion, or None
    (no import's, or a stored motion that does not parse: the motion is fitted then)."""
    if NAME not in found:
        return None
    try:
        return tram_from_properties(found, markers, body.names)
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def _fitted(job, markers, rotations, locations, tolerance):
    """A TRAM fitted to the motion, with the metadata the action's properties and markers give
    (an authored action: its name, frames, 6-byte keys, the rest 0)."""
    body, found = job.body, job.found
    if job.action is not None and not any(len(curve.keyframe_points) for curve in action_fcurves(job.action)):
        raise ObanError(job.label, "has no keys")
    frames = len(rotations)
    flags = unsigned32(found.get(PREFIX + "flags", 0))
    key_size = 16 if flags & OVERLAY else found.get(PREFIX + "key_size", 6)
    moved = poses.part_mask(unsigned32(found.get(PREFIX + "used_parts", 0) | found.get(PREFIX + "replaced_parts", 0)),
                            len(body.names))
    still = ~moved if flags & OVERLAY else None      # the engine plays an overlay's other parts at rest
    tracks = fit_tracks(rotations, key_size, tolerance, body.parents, body.translations, locations, still)
    heights, velocities = root_motion_from(locations)
    if flags & OVERLAY:
        heights, velocities = np.zeros(frames, np.float32), np.zeros((frames, 2), np.float32)
    base = Tram(name=job.name, frames=frames, key_size=key_size, flags=flags,
                used_parts=0, replaced_parts=0, heights=heights, velocities=velocities, tracks=tracks)
    described = tram_properties(base) | found | {NAME: job.name, PREFIX + "frames": frames,
                                                 PREFIX + "key_size": key_size}
    if len(described[PREFIX + "positions"]) not in (0, 4 * frames):
        described[PREFIX + "positions"] = []          # the AI's reach per frame: of another length, dropped
    try:
        return tram_from_properties(described, markers, body.names, tracks, heights, velocities)
    except ValueError as error:
        raise ObanError(job.label, str(error)) from None


def _write(tram, body, world, path, settings, label, unchanged, sources):
    """Write what, read back and replayed, gives the sampled part matrices within the
    tolerance at every frame (core/output_files.py); refuse it (ObanError, no file) otherwise."""
    try:
        data = FILES[settings.character_format][1](tram)
    except ValueError as error:
        raise ObanError(label, f"cannot be written: {error}") from None

    def check(temporary):
        back = read_tram_file(temporary)
        replayed = poses.animation_matrices(body, back)
        errors = relative_errors(replayed.reshape(-1, 4, 4), world.reshape(-1, 4, 4)).reshape(world.shape[:2])
        frame, part = np.unravel_index(int(errors.argmax()), errors.shape)
        if errors[frame, part] > settings.character_tolerance and not unchanged:
            raise ObanError(label, f"frame {frame}, bone '{body.names[part]}': the file would replay it off by "
                                   f"{errors[frame, part]:.3g}, more than the tolerance "
                                   f"{settings.character_tolerance:g}")
        return back, float(errors.max())

    job = FileJob(body.armature, label, [OutputFile(os.path.basename(path), data, check)], sources=sources)
    [written] = write_job(job, os.path.dirname(path), replace_sources=settings.replace_sources)
    back, worst = written.item
    back.name = tram.name
    return Made(written.path, back, body.armature, worst, "unchanged import" if unchanged else "")
