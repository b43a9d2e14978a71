"""Import: files read, every new object's transforms computed together, then each file's
objects built (or its animations given to the selected objects), all or nothing per file."""

from dataclasses import dataclass, field

import bpy

from ..engine import axes
from ..errors import ObanError
from ..oni.properties import PLACEMENT
from ..oni.reader import read_file
from . import actions, targets
from .cameras import new_camera
from .empties import new_empty

ENGINE_FPS = 60            # one frame per tick (docs/engine.md 3)
READING_SHARE = 0.2        # of the progress bar


@dataclass
class Built:
    obj: object
    error: float       # how far location/rotation/scale are from the exact matrices (relative)
    last_frame: int    # scene frame of the last distinct key
    note: str = ""     # why File Keys were not written (baked on every frame instead)


@dataclass
class Result:
    imported: list = field(default_factory=list)    # (path, Animation, object), in file order
    warnings: list = field(default_factory=list)    # "file: 'name': message"
    errors: list = field(default_factory=list)      # one message per failed file
    notes: list = field(default_factory=list)       # "file: 'name': message", for information

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
        motions = iter(_motions(fresh, settings))
    except Exception as error:  # a bug, or no memory: no new object can be made, nothing is
        result.errors += [f"{path}: could not be imported: {error!r}"
                          for path, jobs in planned if any(target is None for _, target in jobs)]
        planned = [(path, jobs) for path, jobs in planned if all(target is not None for _, target in jobs)]
        motions = iter(())
    last_frame = settings.frame_start
    for index, (path, jobs) in enumerate(planned):
        jobs = [(animation, target, None if target else next(motions)) for animation, target in jobs]
        done = READING_SHARE + (1 - READING_SHARE) * index / len(planned)
        try:
            built = _build_all(context, jobs, settings,
                               lambda share: report(done + (1 - READING_SHARE) * share / len(planned)))
        except Exception as error:  # a bug, not bad input: still nothing of this file is left
            result.errors.append(f"{path}: could not be imported: {error!r}")
        else:
            result.imported += [(path, animation, b.obj) for (animation, _, _), b in zip(jobs, built)]
            result.warnings += _warnings(path, jobs, built)
            result.notes += [f"{path}: '{a.name}': {b.note}" for (a, _, _), b in zip(jobs, built) if b.note]
            last_frame = max([last_frame] + [b.last_frame for b in built])
    report(1.0)
    if result.imported:
        _update_scene(context.scene, last_frame, settings)
        _select_only(context, result.objects)
    return result


def _motions(animations, settings):
    """What each new object is keyed with: the file's keys (KeyTransforms) with File Keys
    where they are exact, else every frame (Transforms; with a note why, in File Keys)."""
    camera = settings.target == "CAMERA"
    motions = [None] * len(animations)
    if settings.keys == "FILE":
        keys = axes.key_transforms_many(animations, settings.axes, settings.global_scale, camera)
        for i, k in enumerate(keys):
            k.reason = k.reason or _euler_reason(settings)
            motions[i] = k if not k.reason else None
    baked = [i for i, m in enumerate(motions) if m is None]
    for i, transforms in zip(baked, axes.transforms_many([animations[i] for i in baked], settings.axes,
                                                         settings.global_scale, camera)):
        if settings.keys == "FILE":
            transforms.note = f"baked on every frame: {keys[i].reason}"
        motions[i] = transforms
    return motions


def _euler_reason(settings):
    if settings.rotation_mode == "QUATERNION":
        return ""
    return f"the rotation mode is Euler {settings.rotation_mode}, whose angles do not blend as the engine's quaternions"


def _jobs(path, settings, selected):
    """(animation, target object or None for a new one) pairs; ObanError on bad input."""
    animations = read_file(path, settings.name_glob or None)
    if not animations:
        raise ObanError(path, "holds no OBAN instance" +
                        (f" matching '{settings.name_glob}'" if settings.name_glob else ""))
    if settings.target != "SELECTED":
        return [(a, None) for a in animations]
    return targets.assign(path, animations, selected)


def _warnings(path, jobs, built):
    messages = []
    for (animation, _, _), b in zip(jobs, built):
        messages += [f"{path}: '{animation.name}': {w}" for w in animation.warnings]
        if b.error > axes.BASE_TOLERANCE:
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


def _new_object(collection, name, settings):
    make = new_camera if settings.target == "CAMERA" else new_empty
    return make(collection, name, settings.global_scale)


class _Undo:
    """What building one animation changed, to take it back if the file fails. The
    custom properties are written last, so they need no undoing."""

    def __init__(self, obj, created):
        self.obj, self.created = obj, created
        data = obj.animation_data
        self.action = data.action if data else None
        self.rotation_mode = obj.rotation_mode
        self.had_placement = PLACEMENT in obj

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
                self.obj.pop(PLACEMENT, None)
        if action is not None:
            bpy.data.actions.remove(action)


def build(context, animation, obj, settings, motion=None):
    """Animate `obj` with `animation`: a new object with its `motion` (_motions), or (None)
    an object the user selected, which keeps its placement for Localized animations and
    its parent."""
    shown, period = actions.ticks(animation, settings)
    if motion is None:
        motion = _placed_motion(context, animation, obj, shown, settings)
    elif settings.playback != "FRAMES" and isinstance(motion, axes.Transforms):
        motion = motion.take(shown)
    obj.rotation_mode = settings.rotation_mode
    if isinstance(motion, axes.KeyTransforms):
        action = actions.animate_keys(obj, animation, motion, settings)
    else:
        action = actions.animate(obj, animation.name, motion, settings, period)
    actions.mark_door(action, animation, shown, settings.frame_start)
    actions.describe(obj, action, animation)
    return Built(obj, motion.error, settings.frame_start + len(shown) - 1, motion.note if isinstance(motion, axes.Transforms) else "")


def _placed_motion(context, animation, obj, shown, settings):
    if settings.keys == "FILE":
        keys = targets.placed_keys(context, animation, obj, settings)
        keys.reason = keys.reason or _euler_reason(settings)
        if not keys.reason:
            return keys
    transforms = targets.placed_transforms(context, animation, obj, shown, settings)
    if settings.keys == "FILE":
        transforms.note = f"baked on every frame: {keys.reason}"
    return transforms


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
