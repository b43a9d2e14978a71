"""Import: files read, every new object's transforms computed together, then each file's
objects built (placed objects with meshes, Empties or Cameras for the OBANs, or its
animations given to the selected objects), all or nothing per file."""

from dataclasses import dataclass, field

import bpy

from ..engine import axes
from ..errors import ObanError
from ..files import PROGRESS_STEP, each_file
from ..oni.library import read_mesh_file, read_objects, read_texture_file
from ..oni.objects import Level, Texture, at_origin
from ..oni.properties import PLACEMENT
from ..oni.reader import name_matcher, object_kind, read_files
from . import motion, placed, targets
from .cameras import new_camera
from .datablocks import Snapshot
from .empties import new_empty
from .images import new_image, pack

ENGINE_FPS = 60            # one frame per tick (docs/engine.md 3)
READING_SHARE = 0.2        # of the progress bar


@dataclass
class Result:
    imported: list = field(default_factory=list)    # (path, Animation, object), in file order
    placed: list = field(default_factory=list)      # (path, PlacedObject, object), in file order
    images: list = field(default_factory=list)      # (path, image) of loose textures
    warnings: list = field(default_factory=list)    # "file: 'name': message"
    errors: list = field(default_factory=list)      # one message per failed file
    notes: list = field(default_factory=list)       # "file: 'name': message", for information

    @property
    def objects(self):
        return [obj for _, _, obj in self.imported + self.placed]


@dataclass
class _Plan:
    """What one file brings, read and checked before anything is built."""
    path: str
    jobs: list                      # (animation, target object or None for a new one)
    level: Level | None = None      # placed objects: a level's, an OBOA .oni's, a loose M3GM at the origin
    texture: Texture | None = None  # a loose TXMP: an image


def import_files(context, paths, settings, progress=None):
    """Import every file; a file that fails adds nothing and the others still import.

    Files are read first, then the transforms of every new object are computed together
    (a chunk of frames at a time), then each file's objects are built. `progress(fraction)`
    is called as the work goes on, with the share done (0 to 1).
    """
    report = progress or (lambda fraction: None)
    result = Result()
    selected = list(context.selected_objects) if settings.target == "SELECTED" else []
    plans = []
    for plan in _plans(paths, settings, selected, lambda share: report(READING_SHARE * share)):
        if isinstance(plan, ObanError):
            result.errors.append(str(plan))
        else:
            plans.append(plan)
    fresh = [animation for plan in plans for animation, target in plan.jobs if target is None]
    try:
        motions = iter(motion.motions_of(fresh, settings, camera=settings.target == "CAMERA"))
    except Exception as error:  # a bug, or no memory: no new object can be made, nothing is
        result.errors += [f"{plan.path}: could not be imported: {error!r}"
                          for plan in plans if any(target is None for _, target in plan.jobs)]
        plans = [plan for plan in plans if all(target is not None for _, target in plan.jobs)]
        motions = iter(())
    collection = context.collection   # once: each look-up goes through Blender's context
    last_frame = settings.frame_start
    for index, plan in enumerate(plans):
        jobs = [(animation, target, None if target else next(motions)) for animation, target in plan.jobs]
        done = READING_SHARE + (1 - READING_SHARE) * index / len(plans)
        if index % PROGRESS_STEP == PROGRESS_STEP - 1:
            report(done)
        try:
            level, built, image = _build_file(context, collection, plan, jobs, settings,
                                              lambda share: report(done + (1 - READING_SHARE) * share / len(plans)))
        except Exception as error:  # a bug, not bad input: still nothing of this file is left
            result.errors.append(f"{plan.path}: could not be imported: {error!r}")
            continue
        path = plan.path
        result.imported += [(path, animation, b.obj) for (animation, _, _), b in zip(jobs, built)]
        result.warnings += _warnings(path, jobs, built)
        built_all = [(a.name, b) for (a, _, _), b in zip(jobs, built)]
        if level is not None:
            result.placed += [(path, p, obj) for p, obj, _ in level.built]
            result.warnings += level.warnings
            built_all += [(p.name, b) for p, _, b in level.built]
            last_frame = max(last_frame, level.last_frame)
        if image is not None:
            result.images.append((path, image))
        result.notes += [f"{path}: '{name}': {b.note}" for name, b in built_all if b.note]
        last_frame = max([last_frame] + [b.last_frame for b in built])
    report(1.0)
    if result.imported or result.placed:
        _update_scene(context.scene, last_frame, settings)
        _select_only(context, result.objects)
    return result


def _plans(paths, settings, selected, progress):
    """What each file brings (a _Plan), or the ObanError that refuses it, in file order.
    Files of OBANs alone are read last, together (read_files checks them in one pass)."""
    plans = each_file(paths, lambda path: _placed_plan(path, settings), lambda share: progress(0.5 * share))
    pending = [index for index, plan in enumerate(plans) if plan is None]
    read = read_files([paths[i] for i in pending], settings.name_glob or None,
                      lambda share: progress(0.5 + 0.5 * share))
    for index, animations in zip(pending, read):
        try:
            plans[index] = _Plan(paths[index], _jobs(paths[index], animations, settings, selected))
        except ObanError as error:
            plans[index] = error
    return plans


def _placed_plan(path, settings):
    """With the Objects option (not for selected targets), what a file of placed objects
    brings: its placed objects, loose mesh or texture, and its OBANs no object uses;
    None for a file of OBANs alone. ObanError on bad input."""
    kind = object_kind(path) if settings.objects and settings.target != "SELECTED" else None
    if kind == "texture":
        return _Plan(path, [], texture=read_texture_file(path))
    if kind == "mesh":
        return _Plan(path, [], level=Level([at_origin(read_mesh_file(path))], []))
    if kind == "objects":
        level = read_objects(path)
        matches = name_matcher(settings.name_glob)
        if matches:
            level.objects = [o for o in level.objects if matches(o.name)]
        animations = [a for a in level.unused() if not matches or matches(a.name)]
        if not level.objects and not animations:
            raise ObanError(path, f"holds no object or OBAN instance matching '{settings.name_glob}'")
        return _Plan(path, [(a, None) for a in animations], level=level)
    return None


def _build_file(context, collection, plan, jobs, settings, progress):
    """A file's placed objects (a LevelResult, or None), its animations' objects and its
    image (or None); all or nothing (_build_all takes back its own objects; a snapshot,
    which costs a look at every data block, only where there is more)."""
    if plan.level is None and plan.texture is None:
        return None, _build_all(context, collection, jobs, settings, progress), None
    snapshot = Snapshot()
    try:
        level = placed.import_level(context, plan.level, plan.path, settings) if plan.level else None
        built = _build_all(context, collection, jobs, settings, progress)
        image = None
        if plan.texture is not None:
            image = new_image(plan.texture)
            pack(image, plan.texture)
    except Exception:
        snapshot.remove()
        raise
    return level, built, image


def _jobs(path, animations, settings, selected):
    """(animation, target object or None for a new one) pairs of a file's animations (as
    read_files gives them: a list, or the ObanError refusing the file); ObanError on bad input."""
    if isinstance(animations, ObanError):
        raise animations
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


def _build_all(context, collection, jobs, settings, progress):
    """All objects of one file (the new ones in `collection`), or none: a failure undoes
    what was done for it."""
    steps, built = [], []
    try:
        for done, (animation, target, transforms) in enumerate(jobs):
            if done and done % PROGRESS_STEP == 0:
                progress(done / len(jobs))
            created = target is None
            obj = _new_object(collection, animation.name, settings) if created else target
            steps.append(_Undo(obj, created))
            built.append(motion.build(context, animation, obj, settings, transforms))
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

    POSE = ("location", "rotation_quaternion", "rotation_euler", "scale")   # what write_keys sets

    def __init__(self, obj, created):
        self.obj, self.created = obj, created
        if created:   # removed whole
            return
        data = obj.animation_data
        self.had_animation_data = data is not None
        self.action = data.action if data else None
        self.rotation_mode = obj.rotation_mode
        self.pose = [tuple(getattr(obj, name)) for name in self.POSE]
        self.had_placement = PLACEMENT in obj

    def undo(self):
        data = self.obj.animation_data
        if self.created:
            action, camera = data.action if data else None, self.obj.data
            bpy.data.objects.remove(self.obj)
            if camera is not None:
                bpy.data.cameras.remove(camera)
        else:
            action = data.action if data and data.action is not self.action else None
            if not self.had_animation_data:
                self.obj.animation_data_clear()
            elif data:
                data.action = self.action
            self.obj.rotation_mode = self.rotation_mode
            for name, value in zip(self.POSE, self.pose):
                setattr(self.obj, name, value)
            if not self.had_placement:
                self.obj.pop(PLACEMENT, None)
        if action is not None:
            bpy.data.actions.remove(action)


def _update_scene(scene, last_frame, settings):
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = ENGINE_FPS, 1.0
    if settings.update_scene_duration:
        scene.frame_start = min(scene.frame_start, settings.frame_start)
        scene.frame_end = max(scene.frame_end, last_frame)


def _select_only(context, objects):
    for obj in context.view_layer.objects:
        if obj is not None:   # an object removed since the view layer last synced
            obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    context.view_layer.objects.active = objects[-1]
