"""An object's motion as an OBAN (docs/engine.md 4, in reverse), for every export that writes
one: the OBAN export, a level's re-animated door leaves and placed objects. Its evaluated world
matrix is sampled on every frame the OBAN shows, its placement (a selected object's, a placed
object's origin) and the import's axes and scale undone (engine/to_oni.py), and the fewest
keys the engine's own interpolation turns back into every frame within the tolerance are
chosen (engine/fit_keys.py); a motion still as read (as_read.py) is the animation read."""

import numpy as np

from ....blender.compat import action_fcurves
from ....blender.fcurve_values import keyed_matrices
from ....core.errors import ObanError
from ...blender.oban.actions import action_of
from ...engine.fit_keys import animation_from_matrices
from ...engine.frames import frame_matrices
from ...engine.playback import engine_frames
from ...engine.rotations import relative_errors, split_rotation_scale
from ...engine.to_blender import blender_matrices, camera_matrices
from ...engine.to_oni import oni_camera_matrices, oni_matrices
from ...io.import_frame import FIRST_FRAME, START_FRAME, import_frame
from ...io.oban.properties import PLACEMENT, from_properties
from ...io.oban.record import LOCALIZED, LOOP, matrix_from_columns
from ...io.objects.properties import OBJECT_ORIGIN
from .as_read import motion_as_read

STEADY = 1e-5   # relative: a scale that changes less than this over the motion, or shear under it, is none


class Motion:
    """What an object's evaluated motion is to an export: its world matrix on the scene frame
    that shows each OBAN frame (`frames`), in Blender's terms (`world`; `behind`: a Blender-space
    matrix the motion is taken from behind, e.g. how far a door moved its leaf) and in the
    engine's (`matrices`, M(f): its placement and the change of axes and scale undone).
    `scale`, `axes`: where the object does not say how it was imported. Made by motions(),
    which samples many objects' together."""

    def __init__(self, obj, scene, scale: float, axes):
        self.obj, self.label = obj, f"object '{obj.name}'"
        action = action_of(obj)
        self.described = from_properties(obj, action)
        self.flags = _flags(obj, action, self.described.flags)
        first, count = _frame_range(obj, scene, action, self.described.frames)
        if not 1 <= count <= 0xFFFF:
            raise ObanError(self.label, f"{count} frames to export; an OBAN holds 1 to 65535")
        self.first_frame = first
        self.ticks = _ticks(count, self.flags, int(obj.get(START_FRAME, 0)))
        self.frames = first + self.ticks
        self.scale, self.axes = import_frame(obj, self.label, scale, axes)
        self.placement = self._placement()

    def take(self, world, behind=None) -> "Motion":
        """Itself, its world matrices (F, 4, 4) on its `frames` given."""
        self.world = world if behind is None else np.linalg.inv(behind) @ world
        to_oni = oni_camera_matrices if self.obj.type == "CAMERA" else oni_matrices
        self.matrices = np.linalg.inv(self.placement[1]) @ to_oni(np.linalg.inv(self.placement[0]) @ self.world,
                                                                  self.axes, self.scale)
        return self

    def _placement(self):
        """(Blender-space, engine-space) matrices a Localized motion plays behind: a selected
        object's placement, or a placed object's origin; identities otherwise."""
        blender, engine = np.eye(4), np.eye(4)
        if self.flags & LOCALIZED and PLACEMENT in self.obj:
            blender = np.array(self.obj[PLACEMENT], np.float64).reshape(4, 4)
        elif self.flags & LOCALIZED and OBJECT_ORIGIN in self.obj:
            engine = matrix_from_columns(np.array(self.obj[OBJECT_ORIGIN], np.float64))
        return blender, engine

    def replayed(self, animation):
        """The world matrices an import of `animation` gives this object, at the sampled
        frames: the forward path of docs/engine.md 4, independent of the export's."""
        engine = self.placement[1] @ frame_matrices(animation)
        if self.obj.type == "CAMERA":
            world = camera_matrices(engine, self.axes, self.scale)
        else:
            world = blender_matrices(engine, self.axes, self.scale)
        return self.placement[0] @ world

    def measure(self):
        """(left, right) with world = left . M . right: how the key fitting measures its errors
        where they are checked, in Blender's world."""
        right = np.eye(4)
        if self.obj.type == "CAMERA":   # T(sA.t).[A.L] = [sA 0; 0 1] . M . [I/s 0; 0 1]
            right[:3, :3] /= self.scale
        else:
            right[:3, :3] = self.axes.T / self.scale      # A is a signed permutation: A^-1 = A^T
        left = np.eye(4)
        left[:3, :3] = self.scale * self.axes
        return self.placement[0] @ left @ self.placement[1], right


def animation_of(motion, tolerance: float):
    """(the OBAN that replays the motion (motions()'s: a Motion, or the ObanError raised here)
    within `tolerance`, whether it is the imported animation unchanged)."""
    if isinstance(motion, ObanError):
        raise motion
    described, matrices = motion.described, motion.matrices
    described.name = described.name or motion.obj.name
    stored = described.animation()
    if stored is not None and stored.frames == len(matrices) and \
            motion_as_read(relative_errors(motion.replayed(stored), motion.world)):
        return stored, True
    base = described.base_matrix if described.base_matrix is not None else base_matrix(matrices, motion.label)
    animation, _ = animation_from_matrices(
        described.name, matrices, base, motion.flags,
        ticks_per_frame=described.ticks_per_frame,
        door_open_frame=described.door_open_frame,
        tolerance=tolerance, measure=motion.measure())
    if animation.warnings:   # shear, a changing scale, or keys that cannot replay it within the tolerance
        raise ObanError(motion.label, f"{animation.warnings[0]}; nothing written")
    if stored is not None:
        animation.record_header = stored.record_header
    return animation, False


def sampled(context, frames, read) -> None:
    """read(i, depsgraph) with the scene on each of `frames` in turn (Blender evaluates one
    frame at a time), the scene's frame put back after."""
    scene = context.scene
    current = scene.frame_current
    try:
        for i, frame in enumerate(np.asarray(frames).tolist()):
            scene.frame_set(frame)
            read(i, context.evaluated_depsgraph_get())
    finally:
        scene.frame_set(current)


def motions(context, requests, scale: float, axes) -> list:
    """[a Motion, or the ObanError that refuses it] of each (object, behind or None) of
    `requests`, their world matrices sampled together: the scene set once a frame for them all
    (each frame Blender sets evaluates the whole scene)."""
    found = []
    for obj, _ in requests:
        try:
            found.append(Motion(obj, context.scene, scale, axes))
        except ObanError as error:
            found.append(error)
    live = [k for k, motion in enumerate(found) if isinstance(motion, Motion)]
    worlds = world_matrices(context, [found[k].obj for k in live], [found[k].frames for k in live])
    for k, world in zip(live, worlds):
        found[k] = world if isinstance(world, ObanError) else found[k].take(world, requests[k][1])
    return found


def world_matrices(context, objects, frames) -> list:
    """[(F, 4, 4) each object's evaluated world matrix on each of its scene `frames`, or the
    ObanError naming the first frame where it is not finite]: from its keys where they alone
    make it (blender/fcurve_values.py), else sampled: every frame any of those needs set once,
    the objects that need it read there."""
    found = [keyed_matrices(context.scene, obj, own) for obj, own in zip(objects, frames)]
    rest = [k for k, world in enumerate(found) if world is None]
    if rest:
        for k, world in zip(rest, _sampled_matrices(context, [objects[k] for k in rest], [frames[k] for k in rest])):
            found[k] = world
    for k, (obj, own, world) in enumerate(zip(objects, frames, found)):
        bad = ~np.isfinite(world).all(axis=(1, 2))
        if bad.any():
            found[k] = ObanError(f"object '{obj.name}'", f"non-finite world matrix at frame {own[np.argmax(bad)]}")
    return found


def _sampled_matrices(context, objects, frames) -> list:
    """[(F, 4, 4) each object's evaluated world matrix on each of its scene `frames`], the scene
    set once on every frame any of them needs."""
    wanted, at = np.unique(np.concatenate(frames), return_inverse=True)
    owner = np.repeat(np.arange(len(objects)), [len(own) for own in frames])
    by_frame = np.argsort(at, kind="stable")
    bounds = np.searchsorted(at[by_frame], np.arange(len(wanted) + 1))
    flat = np.empty((len(at), 4, 4))

    def read(i, depsgraph):
        for row in by_frame[bounds[i]:bounds[i + 1]].tolist():
            flat[row] = np.array(objects[owner[row]].evaluated_get(depsgraph).matrix_world)
    sampled(context, wanted, read)
    return np.split(flat, np.cumsum([len(own) for own in frames])[:-1])


def _frame_range(obj, scene, action, frames):
    """(first scene frame, frame count): an imported object's frame 0 and frame count; else
    the action's range, else the scene's."""
    if FIRST_FRAME in obj and frames is not None:
        return int(obj[FIRST_FRAME]), frames
    if action is not None:
        first, last = (int(round(v)) for v in action.frame_range)
    else:
        first, last = scene.frame_start, scene.frame_end
    return first, frames if frames is not None else last - first + 1


def _ticks(frames, flags, start):
    """The scene frame (from the first) that shows each OBAN frame: the first tick of the
    engine's playback from `start` (an import's random start) that shows it; a frame never
    shown (before the start of an animation that does not repeat) takes the start's."""
    if not start:
        return np.arange(frames)
    shown, _ = engine_frames(frames, flags, start)
    first_tick = np.zeros(frames, np.int64)
    first_tick[shown[::-1]] = np.arange(len(shown))[::-1]   # the earliest tick wins
    return first_tick


def _flags(obj, action, flags):
    """The stored flags, else Loop for a cycling action."""
    if flags is not None:
        return flags
    cycles = action is not None and any(
        m.type == "CYCLES" for c in action_fcurves(action, obj) for m in c.modifiers)
    return LOOP if cycles else 0


def base_matrix(matrices, label, steady=STEADY):
    """The motion's constant scale (identity when there is none); a scale that changes
    over time (relative to it: more than `steady`), or shear, cannot be held by an OBAN."""
    _, scale, error = split_rotation_scale(matrices[:, :3, :3])
    worst = int(np.argmax(np.abs(scale - scale[0]).max(axis=1)))
    if np.abs(scale[worst] - scale[0]).max() > steady * np.abs(scale[0]).max():
        raise ObanError(label, f"its scale changes over time (frame {worst} of the range: "
                               f"{np.round(scale[worst], 6).tolist()} after {np.round(scale[0], 6).tolist()}); "
                               "an OBAN holds one constant scale")
    if error > STEADY:
        raise ObanError(label, f"its matrix has shear (relative {error:.3g}), which an OBAN cannot hold")
    base = np.zeros(12, np.float32)
    base[[0, 4, 8]] = scale[0]
    return base
