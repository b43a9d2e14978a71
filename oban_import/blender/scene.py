"""Scene building: each animation becomes an object (or drives a selected one) with its own action."""

import math
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy_extras.io_utils import axis_conversion

from .. import axes as oban_axes
from ..animation import LOCALIZED, RANDOM_START, properties, stored_data
from ..errors import ObanError
from ..playback import engine_frames, random_start_frame
from ..reader import read_file
from . import compat

ENGINE_FPS = 60            # one frame per tick (spec 6)
READING_SHARE = 0.2        # of the progress bar
CAMERA_FOV_Y = math.radians(45.0)  # Oni's vertical field of view
TRANSFORM_GROUP = "Object Transforms"
DOOR_MARKER = "door open"


def axes_matrix(axis_forward, axis_up):
    """Oni -> Blender change of basis for the orientation helper's choice."""
    return np.array(axis_conversion(from_forward=axis_forward, from_up=axis_up), dtype=np.float64)


@dataclass
class Settings:
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: oban_axes.DEFAULT_AXES)  # Oni -> Blender
    frame_start: int = 1
    rotation_mode: str = "QUATERNION"      # or an Euler order such as 'XYZ'
    update_scene_fps: bool = True
    update_scene_duration: bool = True
    name_glob: str = ""
    target: str = "EMPTY"                  # 'EMPTY', 'CAMERA' or 'SELECTED'
    playback: str = "FRAMES"               # 'FRAMES' (0 .. F-1) or 'ENGINE' (as the engine repeats it)
    random_start_seed: int = -1            # >= 0: RandomStart animations start at a seeded frame


@dataclass
class Built:
    obj: object
    error: float       # how far location/rotation/scale are from the exact matrices (relative)
    last_frame: int    # scene frame of the last distinct key


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

    Files are read first, then the transforms of every new object are computed together
    (a chunk of frames at a time), then each file's objects are built. `progress(fraction)`
    is called as the work goes on, with the share done (0 to 1).
    """
    report = progress or (lambda fraction: None)
    result = Result()
    selected = list(context.selected_objects) if settings.target == "SELECTED" else []
    planned = []
    for index, path in enumerate(paths):
        try:
            planned.append((path, _jobs(path, settings, selected)))
        except ObanError as error:
            result.errors.append(str(error))
        report(READING_SHARE * (index + 1) / len(paths))
    fresh = [animation for _, jobs in planned for animation, target in jobs if target is None]
    try:
        transforms = iter(list(oban_axes.transforms_many(fresh, settings.axes, settings.global_scale,
                                                         camera=settings.target == "CAMERA")))
    except Exception as error:  # a bug, or no memory: no new object can be made, nothing is
        result.errors += [f"{path}: could not be imported: {error!r}"
                          for path, jobs in planned if any(target is None for _, target in jobs)]
        planned = [(path, jobs) for path, jobs in planned if all(target is not None for _, target in jobs)]
        transforms = iter(())
    last_frame = settings.frame_start
    for index, (path, jobs) in enumerate(planned):
        jobs = [(animation, target, None if target else next(transforms)) for animation, target in jobs]
        done = READING_SHARE + (1 - READING_SHARE) * index / len(planned)
        try:
            built = _build_all(context, jobs, settings,
                               lambda share: report(done + (1 - READING_SHARE) * share / len(planned)))
        except Exception as error:  # a bug, not bad input: still nothing of this file is left
            result.errors.append(f"{path}: could not be imported: {error!r}")
        else:
            result.imported += [(path, animation, b.obj) for (animation, _, _), b in zip(jobs, built)]
            result.warnings += _warnings(path, jobs, built)
            last_frame = max([last_frame] + [b.last_frame for b in built])
    report(1.0)
    if result.imported:
        _update_scene(context.scene, last_frame, settings)
        _select_only(context, result.objects)
    return result


def _jobs(path, settings, selected):
    """(animation, target object or None for a new one) pairs; ObanError on bad input."""
    animations = read_file(path, settings.name_glob or None)
    if not animations:
        raise ObanError(path, "holds no OBAN instance" +
                        (f" matching '{settings.name_glob}'" if settings.name_glob else ""))
    if settings.target != "SELECTED":
        return [(a, None) for a in animations]
    if not selected:
        raise ObanError(path, "target is the selected objects, but no object is selected")
    if len(animations) == 1:
        return [(animations[0], obj) for obj in selected]
    by_name = {obj.get("oban_name", obj.name): obj for obj in selected}
    jobs = [(a, by_name[a.name]) for a in animations if a.name in by_name]
    if not jobs:
        raise ObanError(path, f"none of its {len(animations)} animations is named like a selected object")
    return jobs


def _warnings(path, jobs, built):
    messages = []
    for (animation, _, _), b in zip(jobs, built):
        messages += [f"{path}: '{animation.name}': {w}" for w in animation.warnings]
        if b.error > oban_axes.BASE_TOLERANCE:
            messages.append(f"{path}: '{animation.name}': shear or a scale along rotated axes that "
                            f"location/rotation/scale cannot hold; held to within {b.error:.3g} (relative)")
    return messages


def _build_all(context, jobs, settings, progress):
    """All objects of one file, or none: a failure undoes what was done for it."""
    steps, built = [], []
    try:
        for done, (animation, target, transforms) in enumerate(jobs):
            if done and done % 16 == 0:
                progress(done / len(jobs))
            created = target is None
            obj = _new_object(context.collection, animation.name, settings) if created else target
            steps.append(_Undo(obj, created))
            built.append(build(context, animation, obj, settings, transforms))
    except Exception:
        for step in reversed(steps):
            step.undo()
        raise
    return built


class _Undo:
    """What building one animation changed, to take it back if the file fails. The
    custom properties are written last, so they need no undoing."""

    def __init__(self, obj, created):
        self.obj, self.created = obj, created
        data = obj.animation_data
        self.action = data.action if data else None
        self.rotation_mode = obj.rotation_mode
        self.had_placement = "oban_placement" in obj

    def undo(self):
        data = self.obj.animation_data
        action = data.action if data and data.action is not self.action else None
        if self.created:
            camera = self.obj.data
            bpy.data.objects.remove(self.obj)
            if camera is not None:
                bpy.data.cameras.remove(camera)
        else:
            if data:
                data.action = self.action
            self.obj.rotation_mode = self.rotation_mode
            if not self.had_placement:
                self.obj.pop("oban_placement", None)
        if action is not None:
            bpy.data.actions.remove(action)


def build(context, animation, obj, settings, transforms=None):
    """Animate `obj` with `animation`: a new object with its `transforms` at frames
    0 .. F - 1, or (None) an object the user selected, which keeps its placement for
    Localized animations and its parent."""
    ticks, period = _ticks(animation, settings)
    if transforms is None:
        transforms = _placed_transforms(context, animation, obj, ticks, settings)
    elif settings.playback != "FRAMES":
        transforms = transforms.take(ticks)
    obj.rotation_mode = settings.rotation_mode
    action = _animate(obj, animation.name, transforms, settings, period)
    if animation.door_open_frame and animation.door_open_frame in ticks:
        marker = action.pose_markers.new(DOOR_MARKER)
        marker.frame = settings.frame_start + ticks.index(animation.door_open_frame)
    described = properties(animation)
    obj.id_properties_ensure().update(described)
    action.id_properties_ensure().update(described | stored_data(animation))
    return Built(obj, transforms.error, settings.frame_start + len(ticks) - 1)


def _ticks(animation, settings):
    """The OBAN frame shown at each key, and the period after which they repeat (None: hold)."""
    if settings.playback == "FRAMES":
        return range(animation.frames), None
    start = 0
    if animation.has(RANDOM_START) and settings.random_start_seed >= 0:
        start = random_start_frame(animation.frames, f"{settings.random_start_seed}:{animation.name}")
    return engine_frames(animation.frames, animation.flags, start)


def _new_object(collection, name, settings):
    if settings.target == "CAMERA":
        camera = bpy.data.cameras.new(name)
        camera.sensor_fit = "VERTICAL"
        camera.angle_y = CAMERA_FOV_Y
        camera.clip_start = 1.0 * settings.global_scale
        camera.clip_end = 20000.0 * settings.global_scale
        obj = bpy.data.objects.new(name, camera)
    else:
        obj = bpy.data.objects.new(name, None)
        obj.empty_display_type = "ARROWS"
        obj.empty_display_size = 10.0 * settings.global_scale  # 10 Oni units, about a metre
    collection.objects.link(obj)
    return obj


def _placed_transforms(context, animation, obj, ticks, settings):
    """World matrices W(f) for an existing object: a Localized animation plays relative to
    the object's placement (kept in 'oban_placement', so importing again does not compound
    it); a parented object gets the parent-space keys that produce W(f)."""
    world = next(oban_axes.transforms_many([animation], settings.axes, settings.global_scale,
                                           camera=obj.type == "CAMERA")).matrices()[list(ticks)]
    if animation.has(LOCALIZED):
        if "oban_placement" not in obj:
            obj["oban_placement"] = [v for row in obj.matrix_world for v in row]
        world = np.array(obj["oban_placement"], np.float64).reshape(4, 4) @ world
    if obj.parent is not None:
        world = np.linalg.inv(_parent_matrices(context, obj, len(ticks), settings)) @ world
    return oban_axes.decompose(world)


def _parent_matrices(context, obj, count, settings):
    """parent world . parent inverse at each key's scene frame (evaluated only if it moves)."""
    def current():
        return np.array(obj.parent.matrix_world) @ np.array(obj.matrix_parent_inverse)
    if not is_animated(obj.parent):
        return current()[None]
    scene, frame = context.scene, context.scene.frame_current
    matrices = []
    for i in range(count):
        scene.frame_set(settings.frame_start + i)
        matrices.append(current())
    scene.frame_set(frame)
    return np.array(matrices)


def is_animated(obj):
    """Keyed, driven, constrained, or under a parent that is."""
    while obj is not None:
        data = obj.animation_data
        if data and (data.action or len(data.drivers)) or len(obj.constraints):
            return True
        obj = obj.parent
    return False


def _animate(obj, name, transforms, settings, period):
    """Keys for location, rotation and scale on every tick, LINEAR, written in bulk; with a
    period, a closing key equal to the first and a Cycles modifier repeat them forever."""
    if period is not None:
        transforms = transforms.take(list(range(len(transforms.columns))) + [0])
    if settings.rotation_mode == "QUATERNION":
        rotation_path, columns = "rotation_quaternion", transforms.columns
    else:
        rotation_path = "rotation_euler"
        euler = oban_axes.eulers(oban_axes.quaternion_matrices(transforms.quaternion), settings.rotation_mode)
        columns = np.concatenate([transforms.location, euler, transforms.scale], axis=1)
    sizes = (("location", 3), (rotation_path, columns.shape[1] - 6), ("scale", 3))
    specs = [(path, i, TRANSFORM_GROUP) for path, size in sizes for i in range(size)]
    action, fcurves = compat.new_object_action(obj, name, specs)
    frames = settings.frame_start + np.arange(len(columns), dtype=np.float32)
    compat.fill_fcurves(fcurves, frames, columns)
    if period is not None:
        for fcurve in fcurves:
            fcurve.modifiers.new("CYCLES")
    # the rest pose is the first key, so the object also stands right with no action evaluated
    first = columns[0].tolist()
    obj.location, obj.scale = first[:3], first[-3:]
    setattr(obj, rotation_path, first[3:-3])
    return action


def _update_scene(scene, last_frame, settings):
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = ENGINE_FPS, 1.0
    if settings.update_scene_duration:
        scene.frame_start = min(scene.frame_start, settings.frame_start)
        scene.frame_end = max(scene.frame_end, last_frame)


def _select_only(context, objects):
    for obj in context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    context.view_layer.objects.active = objects[-1]
