"""Export: an animated object's evaluated motion -> an OBAN the engine replays exactly.

Each object's world matrix is sampled on every frame, the axis conversion and scale
are undone (docs/engine.md 4, in reverse), and the fewest keys that the engine's own
interpolation turns back into every frame are written as .oni, OniSplit XML or a
raw instance file, then read back and checked frame by frame. An object imported
by this add-on and left unchanged is written back exactly as it was read.
"""

import os
from dataclasses import dataclass

import numpy as np

from ..engine.frames import frame_matrices
from ..engine.keys import animation_from_matrices
from ..engine.rotations import relative_errors, split_rotation_scale
from ..errors import ObanError
from ..oni.oban import LOCALIZED, LOOP
from ..oni.properties import PLACEMENT, from_properties
from ..oni.reader import read_file
from ..oni.writer import oni_file_bytes, raw_file_bytes, xml_bytes
from .compat import action_fcurves
from .targets import is_animated

FILES = {"oni": ("OBAN{name}.oni", oni_file_bytes),   # EXPORT_FORMATS of options
         "xml": ("OBAN{name}.xml", xml_bytes),
         "raw": ("{id:05d}-{name}.OBAN", raw_file_bytes)}
UNCHANGED = 1e-5   # relative: an imported object whose motion is within this is written as read


@dataclass
class Written:
    name: str
    path: str
    frames: int
    keys: int
    error: float          # worst relative error over every frame, read back from the file
    unchanged: bool       # written exactly as imported
    warnings: list        # what the key reduction found (frames it could not hold within tolerance)


def animated_objects(objects):
    return [obj for obj in objects if is_animated(obj)]


def export_objects(context, objects, directory, settings):
    """Write one file per object; returns (written, errors). A failed object writes nothing."""
    written, errors = [], []
    for obj in objects:
        try:
            animation, matrices, unchanged = animation_of(context, obj, settings)
            written.append(_write(animation, matrices, unchanged, directory, settings))
        except ObanError as error:
            errors.append(str(error))
    return written, errors


def animation_of(context, obj, settings):
    """(the OBAN that replays `obj`'s evaluated motion, the engine matrices it must give,
    whether it is the imported animation unchanged)."""
    label = f"object '{obj.name}'"
    action = _action(obj)
    described = from_properties(obj, action)
    first, count = _frame_range(context.scene, action, described.frames)
    if not 1 <= count <= 0xFFFF:
        raise ObanError(label, f"{count} frames to export; an OBAN holds 1 to 65535")
    world = _sample(context, obj, first, count)
    flags = _flags(obj, action, described.flags)
    if LOCALIZED & flags and PLACEMENT in obj:
        world = np.linalg.inv(np.array(obj[PLACEMENT], np.float64).reshape(4, 4)) @ world
    matrices = _to_oni(world, obj, settings)
    described.name = described.name or obj.name
    stored = described.animation()
    if stored is not None and stored.frames == count and \
            _relative_error(frame_matrices(stored), matrices) < UNCHANGED:
        return stored, matrices, True
    base = described.base_matrix if described.base_matrix is not None else _base_matrix(matrices, label)
    animation, _ = animation_from_matrices(
        described.name, matrices, base, flags,
        ticks_per_frame=described.ticks_per_frame,
        door_open_frame=described.door_open_frame,
        tolerance=settings.tolerance)
    if stored is not None:
        animation.record_header = stored.record_header
    return animation, matrices, False


def _action(obj):
    return obj.animation_data.action if obj.animation_data else None


def _frame_range(scene, action, frames):
    """(first scene frame, frame count): the action's range, else the scene's; an
    imported object keeps its frame count."""
    if action is not None:
        first, last = (int(round(v)) for v in action.frame_range)
    else:
        first, last = scene.frame_start, scene.frame_end
    return first, frames if frames is not None else last - first + 1


def _sample(context, obj, first, count):
    """obj's evaluated world matrix on each of `count` scene frames from `first`."""
    scene = context.scene
    current = scene.frame_current
    matrices = np.empty((count, 4, 4))
    try:
        for i in range(count):
            scene.frame_set(first + i)
            matrices[i] = np.array(obj.evaluated_get(context.evaluated_depsgraph_get()).matrix_world)
    finally:
        scene.frame_set(current)
    if not np.isfinite(matrices).all():
        frame = first + int(np.argmax(~np.isfinite(matrices).all(axis=(1, 2))))
        raise ObanError(f"object '{obj.name}'", f"non-finite world matrix at frame {frame}")
    return matrices


def _to_oni(world, obj, settings):
    """docs/engine.md 4 in reverse: Blender world matrices -> the engine's M(f)."""
    axes = np.asarray(settings.axes, np.float64)
    inverse = np.linalg.inv(axes)
    m = np.zeros_like(world)
    m[:, 3, 3] = 1.0
    m[:, :3, 3] = world[:, :3, 3] @ inverse.T / settings.global_scale
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


def _relative_error(got, wanted):
    return float(relative_errors(got, wanted).max())


def _write(animation, matrices, unchanged, directory, settings):
    """Write atomically, then read the file back and compare every frame with `matrices`."""
    pattern, to_bytes = FILES[settings.format]
    file_name = pattern.format(name=animation.name, id=animation.record_header[0])
    path = os.path.join(directory, file_name.replace("/", "_").replace("\\", "_"))
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(to_bytes(animation))
    os.replace(temporary, path)
    back = read_file(path)[0]
    return Written(animation.name, path, back.frames, len(back.keys),
                   _relative_error(frame_matrices(back), matrices), unchanged, animation.warnings)
