"""Scene building: each animation becomes an object with its own action."""

from dataclasses import dataclass, field

import bpy
import numpy as np

from .. import axes as oban_axes
from ..animation import properties
from ..errors import ObanError
from ..reader import read_file
from . import compat

ENGINE_FPS = 60  # one frame per tick (spec 6)
TRANSFORM_GROUP = "Object Transforms"


@dataclass
class Settings:
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: oban_axes.DEFAULT_AXES)  # Oni -> Blender
    frame_start: int = 1
    rotation_mode: str = "QUATERNION"      # or an Euler order such as 'XYZ'
    update_scene_fps: bool = True
    update_scene_duration: bool = True
    name_glob: str = ""


@dataclass
class Result:
    imported: list = field(default_factory=list)    # (path, Animation, object), in file order
    warnings: list = field(default_factory=list)    # "file: 'name': message"
    errors: list = field(default_factory=list)      # one message per failed file

    @property
    def objects(self):
        return [obj for _, _, obj in self.imported]


def import_files(context, paths, settings, progress=None):
    """Import every file; a file that fails adds nothing and the others still import.

    `progress(done, total)` is called after each file.
    """
    result = Result()
    for done, path in enumerate(paths, 1):
        try:
            planned = _read(path, settings)
            objects = _build_all(context, planned, settings)
        except ObanError as error:
            result.errors.append(str(error))
        except Exception as error:  # a bug, not bad input: still nothing of this file is left
            result.errors.append(f"{path}: could not be imported: {error!r}")
        else:
            result.imported += [(path, a, obj) for (a, _), obj in zip(planned, objects)]
            result.warnings += _warnings(path, planned)
        if progress:
            progress(done, len(paths))
    if result.imported:
        _update_scene(context.scene, [a for _, a, _ in result.imported], settings)
        _select_only(context, result.objects)
    return result


def _read(path, settings):
    """The file's animations with their Blender transforms; ObanError on bad input."""
    animations = read_file(path, settings.name_glob or None)
    if not animations:
        raise ObanError(path, "holds no OBAN instance" +
                        (f" matching '{settings.name_glob}'" if settings.name_glob else ""))
    return [(a, _transforms(a, settings)) for a in animations]


def _warnings(path, planned):
    messages = []
    for animation, transforms in planned:
        messages += [f"{path}: '{animation.name}': {w}" for w in animation.warnings]
        if transforms.base_error > oban_axes.BASE_TOLERANCE:
            messages.append(f"{path}: '{animation.name}': the base matrix has shear or a scale along "
                            f"rotated axes; location/rotation/scale hold it to within "
                            f"{transforms.base_error:.3g} (relative)")
    return messages


def _transforms(animation, settings):
    return oban_axes.object_transforms(animation, settings.axes, settings.global_scale)


def _build_all(context, planned, settings):
    """All objects of one file, or none: a failure removes what was made for it."""
    made = []
    try:
        for animation, transforms in planned:
            made.append(build_object(context.collection, animation, transforms, settings))
    except Exception:
        for obj in made:
            action = obj.animation_data.action
            bpy.data.objects.remove(obj)
            bpy.data.actions.remove(action)
        raise
    return made


def build_object(collection, animation, transforms, settings):
    obj = bpy.data.objects.new(animation.name, None)
    obj.empty_display_type = "ARROWS"
    obj.empty_display_size = 10.0 * settings.global_scale  # 10 Oni units, about a metre
    obj.rotation_mode = settings.rotation_mode
    collection.objects.link(obj)
    _animate(obj, animation, transforms, settings)
    for owner in (obj, obj.animation_data.action):
        for key, value in properties(animation).items():
            owner[key] = value
    return obj


def _animate(obj, animation, transforms, settings):
    """Keys on every frame for location, rotation and scale, LINEAR, written in bulk."""
    count = len(transforms.location)
    if settings.rotation_mode == "QUATERNION":
        rotation_path, rotation = "rotation_quaternion", oban_axes.quaternions(transforms.rotation)
    else:
        rotation_path, rotation = "rotation_euler", oban_axes.eulers(transforms.rotation, settings.rotation_mode)
    channels = [("location", transforms.location),
                (rotation_path, rotation),
                ("scale", np.broadcast_to(transforms.scale, (count, 3)))]
    specs = [(path, i, TRANSFORM_GROUP) for path, values in channels for i in range(values.shape[1])]
    _, fcurves = compat.new_object_action(obj, animation.name, specs)
    frames = np.arange(settings.frame_start, settings.frame_start + count, dtype=np.float32)
    columns = np.concatenate([values for _, values in channels], axis=1).astype(np.float32)
    for fcurve, column in zip(fcurves, columns.T):
        compat.fill_fcurve(fcurve, frames, column)
    # the rest pose is frame 0, so the object also stands right with no action evaluated
    obj.location = transforms.location[0]
    setattr(obj, rotation_path, rotation[0])
    obj.scale = transforms.scale


def _update_scene(scene, animations, settings):
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = ENGINE_FPS, 1.0
    if settings.update_scene_duration:
        last = settings.frame_start + max(a.frames for a in animations) - 1
        scene.frame_start = min(scene.frame_start, settings.frame_start)
        scene.frame_end = max(scene.frame_end, last)


def _select_only(context, objects):
    for obj in context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    context.view_layer.objects.active = objects[-1]
