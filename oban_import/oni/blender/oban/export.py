"""Export: an animated object's evaluated motion -> an OBAN the engine replays exactly.

Each object's world matrix is sampled on every frame the OBAN shows, its placement (a
selected object's, a placed object's origin) and the axis conversion and scale it was
imported with are undone (docs/engine.md 4, in reverse), and the fewest keys that the
engine's own interpolation turns back into every frame are chosen. The file is read back,
replayed by the engine's math and turned into Blender's world matrices the way an import
does; only if that matches the sampled matrices at every frame within the tolerance is it
written. An object imported by this add-on and left unchanged is written back exactly as
it was read.
"""

import numpy as np

from ....blender.compat import action_fcurves
from ....core.errors import ObanError
from ....core.files import output_path, write_checked
from ....core.report import Made, Report
from ...engine.fit_keys import animation_from_matrices
from ...engine.frames import frame_matrices
from ...engine.playback import engine_frames
from ...engine.rotations import relative_errors, split_rotation_scale
from ...engine.to_blender import blender_matrices, camera_matrices
from ...io.characters.properties import CHARACTER
from ...io.oban.properties import FIRST_FRAME, PIVOT, PLACEMENT, START_FRAME, from_properties, import_frame
from ...io.oban.read import read_file
from ...io.oban.record import LOCALIZED, LOOP, matrix_from_columns
from ...io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes
from ...io.objects.properties import OBJECT_ORIGIN
from .actions import action_of
from .targets import is_animated

FILES = {"oni": ("OBAN{name}.oni", oni_file_bytes),   # EXPORT_FORMATS of options
         "xml": ("OBAN{name}.xml", xml_bytes),
         "raw": ("{id:05d}-{name}.OBAN", raw_file_bytes)}
UNCHANGED = 1e-5   # relative: an imported object whose motion is within this is written as read


def animated_objects(objects):
    """The objects an OBAN export writes: animated ones, but an import's pivots (their child is
    the animation) and characters (an armature whose bones are parts, and what hangs on it:
    their animations are TRAMs, tram_export.py)."""
    return [obj for obj in objects if is_animated(obj) and PIVOT not in obj and not _of_character(obj)]


def _of_character(obj):
    while obj is not None:
        if CHARACTER in obj:
            return True
        obj = obj.parent
    return False


def export_objects(context, objects, directory, settings) -> Report:
    """Write one file per object: Made(file path, the animation read back from it, the
    object, its worst error over every frame, "unchanged import" where written as read).
    A failed object writes nothing; its error is in `errors`."""
    report = Report(files=len(objects), unit="objects")
    for obj in objects:
        try:
            motion = Motion(context, obj, settings)
            animation, unchanged = animation_of(motion, settings)
            path, back, error = _write(animation, motion, directory, settings)
        except ObanError as error:
            report.errors.append(str(error))
            continue
        report.made.append(Made(path, back, obj, error, "unchanged import" if unchanged else ""))
    report.counts = {"files": len(report.made)}
    return report


class Motion:
    """What an object's evaluated motion is to an export: its world matrix on the scene frame
    that shows each OBAN frame, in Blender's terms (`world`; `behind`: a Blender-space matrix
    the motion is taken from behind, e.g. how far a door moved its leaf) and in the engine's
    (`matrices`, M(f): its placement and the change of axes and scale undone)."""

    def __init__(self, context, obj, settings, behind=None):
        self.obj, self.label = obj, f"object '{obj.name}'"
        action = action_of(obj)
        self.described = from_properties(obj, action)
        self.flags = _flags(obj, action, self.described.flags)
        first, count = _frame_range(obj, context.scene, action, self.described.frames)
        if not 1 <= count <= 0xFFFF:
            raise ObanError(self.label, f"{count} frames to export; an OBAN holds 1 to 65535")
        self.first_frame = first
        self.ticks = _ticks(count, self.flags, int(obj.get(START_FRAME, 0)))
        self.world = _sample(context, obj, first + self.ticks)
        if behind is not None:
            self.world = np.linalg.inv(behind) @ self.world
        self.scale, self.axes = import_frame(obj, self.label, settings.global_scale, settings.axes)
        self.placement = self._placement()
        self.matrices = np.linalg.inv(self.placement[1]) @ _to_oni(np.linalg.inv(self.placement[0]) @ self.world,
                                                                   obj, self.axes, self.scale)

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


def animation_of(motion, settings):
    """(the OBAN that replays the motion, whether it is the imported animation unchanged)."""
    described, matrices = motion.described, motion.matrices
    described.name = described.name or motion.obj.name
    stored = described.animation()
    if stored is not None and stored.frames == len(matrices) and \
            relative_errors(motion.replayed(stored), motion.world).max() < UNCHANGED:
        return stored, True
    base = described.base_matrix if described.base_matrix is not None else _base_matrix(matrices, motion.label)
    animation, _ = animation_from_matrices(
        described.name, matrices, base, motion.flags,
        ticks_per_frame=described.ticks_per_frame,
        door_open_frame=described.door_open_frame,
        tolerance=settings.tolerance, measure=motion.measure())
    if animation.warnings:   # shear, a changing scale, or keys that cannot replay it within the tolerance
        raise ObanError(motion.label, f"{animation.warnings[0]}; nothing written")
    if stored is not None:
        animation.record_header = stored.record_header
    return animation, False


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


def _sample(context, obj, scene_frames):
    """obj's evaluated world matrix on each of these scene frames."""
    scene = context.scene
    current = scene.frame_current
    matrices = np.empty((len(scene_frames), 4, 4))
    try:
        for i, frame in enumerate(scene_frames.tolist()):
            scene.frame_set(frame)
            matrices[i] = np.array(obj.evaluated_get(context.evaluated_depsgraph_get()).matrix_world)
    finally:
        scene.frame_set(current)
    if not np.isfinite(matrices).all():
        frame = scene_frames[int(np.argmax(~np.isfinite(matrices).all(axis=(1, 2))))]
        raise ObanError(f"object '{obj.name}'", f"non-finite world matrix at frame {frame}")
    return matrices


def _to_oni(world, obj, axes, scale):
    """docs/engine.md 4 in reverse: Blender world matrices -> the engine's M(f)."""
    axes = np.asarray(axes, np.float64)
    inverse = np.linalg.inv(axes)
    m = np.zeros_like(world)
    m[:, 3, 3] = 1.0
    m[:, :3, 3] = world[:, :3, 3] @ inverse.T / scale
    if obj.type == "CAMERA":
        m[:, :3, :3] = inverse @ world[:, :3, :3]
    else:
        m[:, :3, :3] = inverse @ world[:, :3, :3] @ axes
    return m


def _flags(obj, action, flags):
    """The stored flags, else Loop for a cycling action."""
    if flags is not None:
        return flags
    cycles = action is not None and any(
        m.type == "CYCLES" for c in action_fcurves(action, obj) for m in c.modifiers)
    return LOOP if cycles else 0


def _base_matrix(matrices, label):
    """The motion's constant scale (identity when there is none); a scale that changes
    over time, or shear, cannot be held by an OBAN."""
    _, scale, error = split_rotation_scale(matrices[:, :3, :3])
    worst = int(np.argmax(np.abs(scale - scale[0]).max(axis=1)))
    if np.abs(scale[worst] - scale[0]).max() > 1e-5 * np.abs(scale[0]).max():
        raise ObanError(label, f"its scale changes over time (frame {worst} of the range: "
                               f"{np.round(scale[worst], 6).tolist()} after {np.round(scale[0], 6).tolist()}); "
                               "an OBAN holds one constant scale")
    if error > 1e-5:
        raise ObanError(label, f"its matrix has shear (relative {error:.3g}), which an OBAN cannot hold")
    base = np.zeros(12, np.float32)
    base[[0, 4, 8]] = scale[0]
    return base


def _write(animation, motion, directory, settings):
    """Write atomically what, read back and replayed, gives the sampled world matrices within
    the tolerance at every frame; refuse it (ObanError, no file) otherwise. (path, the
    animation read back, its worst relative error)."""
    pattern, to_bytes = FILES[settings.file_format]
    file_name = pattern.format(name=animation.name, id=animation.record_header[0])
    path = output_path(directory, file_name)

    def check(temporary):
        back = read_file(temporary)[0]
        back.name = animation.name
        errors = relative_errors(motion.replayed(back), motion.world)
        worst = int(np.argmax(errors))
        if errors[worst] > settings.tolerance:
            raise ObanError(motion.label, f"frame {motion.first_frame + int(motion.ticks[worst])}: the file would "
                                          f"replay it off by {errors[worst]:.3g}, more than the tolerance "
                                          f"{settings.tolerance:g}; nothing written")
        return back, float(errors[worst])

    back, worst = write_checked(path, to_bytes(animation), check)
    return path, back, worst
