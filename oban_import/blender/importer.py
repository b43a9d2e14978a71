"""Import: files read, every new object's transforms computed together, every new object
and its action made (in the order Blender files them fastest), then each file's objects
built (placed objects with meshes, Empties or Cameras for the OBANs, or its animations
given to the selected objects), all or nothing per file."""

from dataclasses import dataclass, field

import bpy

from ..engine import axes
from ..errors import ObanError
from ..files import PROGRESS_STEP, each_file
from ..oni.library import read_mesh_file, read_objects, read_texture_file
from ..oni.objects import Level, Texture, at_origin
from ..oni.properties import PLACEMENT, descriptions
from ..oni.reader import name_matcher, object_kind, read_files
from . import motion, placed, targets
from .cameras import new_camera
from .datablocks import Snapshot, fast_order, select_only
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
class _Job:
    """One animation to build: on a selected object, or on a new one made for it."""
    animation: object
    obj: object
    created: bool
    motion: object = None      # a new object's: from motions_of()
    action: object = None      # a new object's new, empty action
    described: tuple = None    # a new object's: oni.properties.descriptions()


@dataclass
class _Plan:
    """What one file brings, read and checked before anything is built."""
    path: str
    jobs: list                      # (animation, target object or None for a new one)
    level: Level | None = None      # placed objects: a level's, an OBOA .oni's, a loose M3GM at the origin
    texture: Texture | None = None  # a loose TXMP: an image


def import_files(context, paths, settings, progress=None):
    """Import every file; a file that fails adds nothing and the others still import.

    Files are read first, then every new object and its action are made, then each file's
    objects are built; the new objects' transforms are computed together as the build
    takes them, a chunk of frames at a time (one chunk held at a time). `progress(fraction)`
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
        made = iter(_new_objects([animation.name for animation in fresh], settings))
    except Exception as error:  # a bug, or no memory: no new object can be made, nothing is
        result.errors += [f"{plan.path}: could not be imported: {error!r}"
                          for plan in plans if any(target is None for _, target in plan.jobs)]
        plans = [plan for plan in plans if all(target is not None for _, target in plan.jobs)]
        made = iter(())
    fresh_parts = (made, _Taken(motion.motions_of(fresh, settings, camera=settings.target == "CAMERA", written=True)),
                   _Taken(descriptions(fresh)))
    collection = context.collection   # once: each look-up goes through Blender's context
    last_frame = settings.frame_start
    try:
        for index, plan in enumerate(plans):
            done = READING_SHARE + (1 - READING_SHARE) * index / len(plans)
            if index % PROGRESS_STEP == PROGRESS_STEP - 1:
                report(done)
            jobs = []
            try:
                level, built, image = _build_file(context, collection, plan, jobs, fresh_parts, settings,
                                                  lambda share: report(done + (1 - READING_SHARE) * share / len(plans)))
            except Exception as error:  # a bug, not bad input: still nothing of this file is left
                result.errors.append(f"{plan.path}: could not be imported: {error!r}")
                continue
            last_frame = max(last_frame, _add_file(result, plan.path, jobs, level, built, image))
    finally:   # what a failure outside the files' own building left unused
        for obj, action in made:
            _remove_new(obj, action)
    report(1.0)
    if result.imported or result.placed:
        _update_scene(context.scene, last_frame, settings)
        select_only(context, result.objects)
    return result


def _add_file(result, path, jobs, level, built, image):
    """Add what one file built to `result`; returns its last scene frame."""
    last_frame = 0
    for job, b in zip(jobs, built):   # one loop: a file often holds one animation
        result.imported.append((path, job.animation, b.obj))
        last_frame = max(last_frame, b.last_frame)
        if b.note:
            result.notes.append(f"{path}: '{job.animation.name}': {b.note}")
    result.warnings += _warnings(path, jobs, built)
    if level is not None:
        result.placed += [(path, p, obj) for p, obj, _ in level.built]
        result.warnings += level.warnings
        result.notes += [f"{path}: '{p.name}': {b.note}" for p, _, b in level.built if b.note]
        last_frame = max(last_frame, level.last_frame)
    if image is not None:
        result.images.append((path, image))
    return last_frame


def _new_objects(names, settings):
    """(object, empty action) for each new object, in the order of `names`, made before
    anything is built, in the order Blender files them fastest (datablocks.fast_order)."""
    make = new_camera if settings.target == "CAMERA" else new_empty
    objects, actions = [None] * len(names), [None] * len(names)
    try:
        for i in fast_order(max(len(bpy.data.objects), len(bpy.data.actions)), names):
            objects[i] = make(names[i], settings.global_scale)
            actions[i] = bpy.data.actions.new(names[i])
    except Exception:
        for obj, action in zip(objects, actions):
            _remove_new(obj, action)
        raise
    return list(zip(objects, actions))


def _take_jobs(plan, jobs, made, motions, described):
    """Add the plan's _Jobs to `jobs`; each new object is the next of `made`, moves by
    the next of `motions` and is described by the next of `described` (taken first: if
    they fail, no new object is left out of `jobs`)."""
    for animation, target in plan.jobs:
        if target is not None:
            jobs.append(_Job(animation, target, False))
        else:
            moved_by, described_by = next(motions), next(described)
            obj, action = next(made)
            jobs.append(_Job(animation, obj, True, moved_by, action, described_by))


class _Taken:
    """The items of an iterator computed as they are taken; once it fails, every later
    take fails alike (each file that needs one is refused, with the cause)."""

    def __init__(self, items):
        self.items, self.error = iter(items), None

    def __next__(self):
        if self.error is None:
            try:
                return next(self.items)
            except Exception as error:   # a bug, or no memory
                self.error = error
        raise self.error


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


def _build_file(context, collection, plan, jobs, fresh_parts, settings, progress):
    """A file's placed objects (a LevelResult, or None), its animations' objects (its
    _Jobs added to `jobs`, the new ones taken from `fresh_parts`: see _take_jobs) and its
    image (or None); all or nothing: on failure what each selected object's animation
    changed is taken back, the new objects are removed, and (a snapshot costs a look at
    every data block, so only where there is more) what the level or the texture made."""
    snapshot = Snapshot() if plan.level is not None or plan.texture is not None else None
    steps = []
    try:
        _take_jobs(plan, jobs, *fresh_parts)
        level = placed.import_level(context, plan.level, plan.path, settings) if plan.level else None
        built = _build_all(context, collection, jobs, settings, steps, progress)
        image = None
        if plan.texture is not None:
            image = new_image(plan.texture)
            pack(image, plan.texture)
    except Exception:
        for step in reversed(steps):
            step.undo()
        for job in jobs:
            if job.created:
                _remove_new(job.obj, job.action)
        if snapshot is not None:
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
    for job, b in zip(jobs, built):
        animation = job.animation
        if animation.warnings:
            messages += [f"{path}: '{animation.name}': {w}" for w in animation.warnings]
        if b.error > axes.BASE_TOLERANCE:
            messages.append(f"{path}: '{animation.name}': shear or a scale along rotated axes that "
                            f"location/rotation/scale cannot hold; held to within {b.error:.3g} (relative)")
    return messages


def _build_all(context, collection, jobs, settings, steps, progress):
    """The animations' objects of one file (the new ones linked to `collection`), each
    selected one adding to `steps` (an _Undo) what takes it back."""
    built = []
    for done, job in enumerate(jobs):
        if done and done % PROGRESS_STEP == 0:
            progress(done / len(jobs))
        if job.created:
            collection.objects.link(job.obj)
        else:
            steps.append(_Undo(job.obj))
        built.append(motion.build(context, job.animation, job.obj, settings, job.motion, job.action, job.described))
    return built


def _remove_new(obj, action):
    """A new object made for an animation (with its camera) and its action; None: not made."""
    if obj is not None:
        camera = obj.data
        bpy.data.objects.remove(obj)
        if camera is not None:
            bpy.data.cameras.remove(camera)
    if action is not None:
        bpy.data.actions.remove(action)


class _Undo:
    """What building one animation changed on a selected object, to take it back if the
    file fails. The custom properties are written last, so they need no undoing."""

    POSE = ("location", "rotation_quaternion", "rotation_euler", "scale")   # what write_keys sets

    def __init__(self, obj):
        self.obj = obj
        data = obj.animation_data
        self.had_animation_data = data is not None
        self.action = data.action if data else None
        self.rotation_mode = obj.rotation_mode
        self.pose = [tuple(getattr(obj, name)) for name in self.POSE]
        self.had_placement = PLACEMENT in obj

    def undo(self):
        data = self.obj.animation_data
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
