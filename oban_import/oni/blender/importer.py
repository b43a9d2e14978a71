"""An Oni import: every file read and checked first; then the new objects every file's
animations need are made together (in the order Blender files them fastest); then each
file is built, all or nothing: a file that fails takes back all it made, and the files
before it stay. What an import makes goes into one new collection named after the file
(or the batch); a mesh, material or image the batch reaches twice is made once."""

import os
from dataclasses import dataclass, field

import bpy

from ...blender.datablocks import Snapshot, block_counts, lay_out, new_collection, remove_if_empty, select_only
from ...blender.scene import update_scene
from ...core.errors import ObanError
from ...core.files import PROGRESS_STEP, each_file
from ...core.report import Made, Report
from ..io.characters.model import Character
from ..io.characters.read import characters_beside
from ..io.container.container import level_of_raw_data
from ..io.import_frame import SOURCE_FILE
from ..io.oban.properties import PLACEMENT
from ..io.oban.read import read_files
from ..io.objects.model import PlacedObject
from ..io.trams.tram import Tram
from ..plan import Brought, Choices, bring
from .characters import build as characters
from .level import environment, object_lists, placed
from .oban import motion as oban_motion
from .oban import targets as oban_targets
from .oban.actions import animated_of
from .oban.new_objects import NewObjects, remove_new
from .shared.blocks import SharedBlocks

READING_SHARE = 0.2        # of the progress bar


def import_files(context, paths, settings, progress=None, level_alone=False) -> Report:
    """Import every file; a file that fails adds nothing and the others still import: each
    read by _read_files (plan.bring, each kind it holds by the plan's reader), then built by
    _FileImport.build (each kind by its builder in BUILDERS). `progress(fraction)` is called
    as the work goes on, with the share done (0 to 1). `level_alone`: a level's environment,
    object lists and placed objects only (a cutscene brings what it plays)."""
    report = progress or (lambda fraction: None)
    result = Report(files=len(paths))
    before = block_counts()
    selected = list(context.selected_objects)
    armatures = [obj for obj in selected if obj.type == "ARMATURE"]   # where loose TRAMs go first
    selected = selected if settings.target == "SELECTED" else []
    owners = {path: level_of_raw_data(path) for path in paths}
    result.notes += [f"{path}: read with {os.path.basename(owner)}, whose data it holds"
                     for path, owner in owners.items() if owner]
    paths = [path for path in paths if not owners[path]]
    files = []
    for read in _read_files(paths, settings, selected, lambda share: report(READING_SHARE * share), level_alone):
        if isinstance(read, ObanError):
            result.errors.append(str(read))
        else:
            files.append(read)
    try:
        new_objects = NewObjects([a for f in files for a in f.new_animations()], settings)
    except Exception as error:  # a bug, or no memory: no new object can be made, and none is
        result.errors += [f"{f.path}: could not be imported: {error!r}" for f in files if f.new_animations()]
        files = [f for f in files if not f.new_animations()]
        new_objects = NewObjects([], settings)
    # the batch's characters first: TRAMs go on them
    files.sort(key=lambda f: bool(f.brought.trams) and not f.brought.characters)
    result.notes += _read_with_their_characters(files)
    collection = new_collection(context.scene, paths)
    shared = SharedBlocks(settings)
    result.last_frame = settings.frame_start
    trams_made, beside = set(), {}   # names of the TRAMs the import has made, with their characters; _Job.beside
    built = []                       # the files built whole (a failed one's data blocks are gone)
    try:
        for index, file in enumerate(files):
            done = READING_SHARE + (1 - READING_SHARE) * index / len(files)
            if index % PROGRESS_STEP == PROGRESS_STEP - 1:
                report(done)
            try:
                file.build(_Job(context, collection, new_objects, shared, settings,
                                lambda share: report(done + (1 - READING_SHARE) * share / len(files)), armatures,
                                trams_made, beside))
            except ObanError as error:   # found only as it is built (nothing of this file is left)
                result.errors.append(str(error))
                continue
            except Exception as error:  # a bug, not bad input: still nothing of this file is left
                result.errors.append(f"{file.path}: could not be imported: {error!r}")
                continue
            result.add(file.built)
            built.append(file)
            if file.brought.characters or file.brought.trams:   # where later TRAMs go, what they need not make
                armatures += [m.block for m in file.built.made if isinstance(m.item, Character)]
                trams_made |= {m.item.name for m in file.built.made if isinstance(m.item, Tram)}
    finally:   # what a failure outside the files' own building left unused
        new_objects.remove_untaken()
        remove_if_empty(collection)
    report(1.0)
    result.counts = block_counts(since=before)
    if settings.side_by_side:
        lay_out([m.block for f in built if f.stands_at_origin() for m in f.built.made
                 if isinstance(m.item, (Character, PlacedObject))], context)
    if result.made:
        update_scene(context.scene, settings, result.last_frame)
        select_only(context, result.blocks())
    return result


@dataclass
class _Job:
    """What every file of an import is built with."""
    context: object
    collection: object           # the import's collection
    new_objects: NewObjects
    shared: SharedBlocks
    settings: object
    progress: object             # progress(share of this file done)
    armatures: list              # where this file's own TRAMs may go (characters.onto_armature)
    trams_made: set              # names of the TRAMs the import made already, with their character: not again
    beside: dict                 # folder -> the characters in it (read.characters_beside), read once a batch


@dataclass
class _FileImport:
    """One file: what it brings (read and checked before anything is made) and the objects its
    OBANs move. `build` adds all of it to the scene (what it made in `built`) or, failing,
    takes all of it back."""
    brought: Brought
    animations: list = field(default_factory=list)   # (OBAN, the selected object it moves, or None: a new one)
    built: Report = field(default=None, init=False)       # what the last build made
    _new: list = field(default=None, init=False)          # (object, action) made for it
    _selected: list = field(default=None, init=False)     # _SelectedObjectState of each selected object it moved
    _snapshot: Snapshot | None = field(default=None, init=False)

    @property
    def path(self):
        return self.brought.path

    def stands_at_origin(self):
        """Whether what it makes would stand at the origin: a character, a loose mesh."""
        return bool(self.brought.characters) or self.brought.loose_mesh

    def new_animations(self):
        return [animation for animation, target in self.animations if target is None]

    def build(self, job: _Job):
        """Each kind the file brings built by its builder (_builders), or none of it."""
        self.built, self._new, self._selected = Report(last_frame=job.settings.frame_start), [], []
        # a snapshot costs a look at every data block: only where more than objects are made
        b = self.brought
        more = b.level is not None or b.level_parts is not None or b.texture is not None or b.characters or b.trams
        self._snapshot = Snapshot() if more else None
        mark = job.shared.mark()
        try:
            for builder in _builders(self.brought.kinds):
                builder(self, job)
        except Exception:
            self._take_back()
            job.shared.forget_since(mark)
            raise

    def _take_back(self):
        for state in reversed(self._selected):
            state.restore()
        for obj, action in reversed(self._new):   # the pivots (made last) before their children
            remove_new(obj, action)
        if self._snapshot is not None:
            self._snapshot.remove()


def _level(file, job):
    """A level's environment, then its object lists (whose door Empties its door leaves go
    under), then its placed objects; of an OBOA .oni or a loose mesh, the placed objects."""
    parts, doors = file.brought.level_parts, {}
    if parts is not None and parts.environment is not None and job.settings.environment:
        file.built.made += environment.import_environment(parts, file.path, job.settings, job.collection, job.shared)
    if parts is not None and job.settings.object_lists:
        made, doors = object_lists.import_object_lists(parts, file.path, job.settings, job.collection)
        file.built.made += made
    if parts is not None:
        file.built.warnings += [f"{file.path}: {warning}" for warning in parts.warnings]
    if file.brought.level is not None:
        file.built.add(placed.import_level(job.context, file.brought.level, file.path, job.settings, job.collection,
                                           job.shared, doors=doors))


def _characters(file, job):
    """Each character: its armature, part meshes and chosen TRAMs (characters.import_character)."""
    for character, chosen in file.brought.characters:
        file.built.add(characters.import_character(job.context, character, file.path, job.settings, job.collection,
                                                   job.shared, chosen))


def _trams(file, job):
    """Onto the selected armatures, the batch's characters, this file's (those the import made
    already with their character are not made again)."""
    trams = [tram for tram in file.brought.trams if tram.name not in job.trams_made]
    file.built.notes += [f"{file.path}: '{tram.name}': imported with its character already"
                         for tram in file.brought.trams if tram.name in job.trams_made]
    if trams:
        armatures = list(job.armatures) + [m.block for m in file.built.made if isinstance(m.item, Character)]
        file.built.add(characters.onto_armature(job.context, trams, file.path, armatures, job.settings,
                                                job.collection, job.shared,
                                                characters_beside(file.path, job.beside)))


def _animations(file, job):
    """The file's OBANs, each on its selected object or on a new one of the pool."""
    moved = [(animation, target, None) if target is not None else (animation, *job.new_objects.take(file._new))
             for animation, target in file.animations]
    built, source = file.built, os.path.abspath(file.path)
    for done, (animation, obj, new) in enumerate(moved):
        if done and done % PROGRESS_STEP == 0:
            job.progress(done / len(moved))
        if new is None:
            file._selected.append(_SelectedObjectState(obj))
            made = oban_motion.build(job.context, animation, obj, job.settings, made=file._new)
        else:
            job.collection.objects.link(obj)
            made = oban_motion.build(job.context, animation, obj, job.settings, new.motion, new.action, new.described,
                                     made=file._new, collection=job.collection)
        built.made.append(Made(file.path, animation, obj, made.error, made.note))
        (animated_of(obj) or obj)[SOURCE_FILE] = source
        built.last_frame = max(built.last_frame, made.last_frame)
        built.warnings += oban_motion.warnings(file.path, animation.name, animation.warnings, made)
        if made.note:
            built.notes.append(f"{file.path}: '{animation.name}': {made.note}")


def _texture(file, job):
    """A loose texture: its image, packed (SharedBlocks.image)."""
    if file.brought.texture is not None:
        file.built.made.append(Made(file.path, file.brought.texture, job.shared.image(file.brought.texture)))
        job.shared.pack_images()


BUILDERS = {   # how each kind of plan.KINDS is built: by its name, in the same order
    "objects": _level,
    "level": _level,
    "classes": None,              # read with the level whose object lists name them
    "characters": _characters,
    "bodies": _characters,
    "animations": _trams,
    "character parts": None,      # read with the character that links them
    "obans": _animations,         # also a level's that no object plays
    "mesh": _level,
    "texture": _texture,
}


def _builders(kinds: frozenset) -> list:
    """The builders of `kinds` (Brought.kinds), in BUILDERS' order, each once."""
    return [builder for builder in dict.fromkeys(BUILDERS[name] for name in BUILDERS if name in kinds) if builder]


def _read_files(paths, settings, selected, progress, level_alone=False):
    """What each file brings (a _FileImport), or the ObanError that refuses it, in file
    order. The OBANs of files that are not levels are read last, together (read_files checks
    them in one pass)."""
    choices = Choices(objects=settings.objects and settings.target != "SELECTED", name_filter=settings.name_filter,
                      animations=settings.character_animations, level_alone=level_alone)
    read = each_file(paths, lambda path: bring(path, choices), lambda share: progress(0.5 * share))
    files = [r if isinstance(r, ObanError) else _FileImport(r, [(a, None) for a in r.level_obans]) for r in read]
    pending = [index for index, r in enumerate(read) if not isinstance(r, ObanError) and r.obans]
    found = read_files([paths[i] for i in pending], settings.name_filter or None,
                       lambda share: progress(0.5 + 0.5 * share))
    for index, animations in zip(pending, found):
        try:
            files[index].animations = _targets(files[index].brought, animations, settings, selected)
        except ObanError as error:
            files[index] = error
    return files


def _read_with_their_characters(files):
    """Notes for what a batch's characters read already: a collection's, textures' or body's
    pieces in files of their own, and a bare body a character of the batch has (not made twice)."""
    brought = [f.brought for f in files]
    bodies = {character.body.name for b in brought if not b.bare_body for character, _ in b.characters}
    notes = [f"{b.path}: a door or furniture class: read with the level whose object lists name it"
             if b.kinds == {"classes"} else
             f"{b.path}: a character's collection, textures or body pieces: read with the character that links them"
             for b in brought if b.parts_only]
    for b in brought:
        if b.bare_body and b.characters[0][0].body.name in bodies:
            notes.append(f"{b.path}: '{b.characters[0][0].name}': the body of a character of this import, made with it")
            b.characters = []
    return notes


def _targets(brought, animations, settings, selected):
    """(animation, the selected object it moves, or None for a new one) of a file's
    animations (as read_files gives them: a list, or the ObanError refusing the file);
    ObanError on bad input, or for a file with nothing to import."""
    path = brought.path
    if isinstance(animations, ObanError):
        raise animations
    if not animations:
        if brought.characters or brought.trams or brought.parts_only:
            return []
        raise ObanError(path, "holds no OBAN instance" +
                        (f" matching '{settings.name_filter}'" if settings.name_filter else ""))
    if settings.target != "SELECTED":
        return [(a, None) for a in animations]
    return oban_targets.assign(path, animations, selected)


class _SelectedObjectState:
    """A selected object as it was before an animation was built on it, to put back if its
    file fails. The custom properties are written last, so they need no putting back."""

    POSE = ("location", "rotation_quaternion", "rotation_euler", "scale")   # what write_keys sets

    def __init__(self, obj):
        self.obj = obj
        self.parent, self.parent_inverse = obj.parent, obj.matrix_parent_inverse.copy()   # a pivot changes them
        data = obj.animation_data
        self.had_animation_data = data is not None
        self.action = data.action if data else None
        self.rotation_mode = obj.rotation_mode
        self.pose = [tuple(getattr(obj, name)) for name in self.POSE]
        self.had_placement = PLACEMENT in obj

    def restore(self):
        data = self.obj.animation_data
        action = data.action if data and data.action is not self.action else None
        if not self.had_animation_data:
            self.obj.animation_data_clear()
        elif data:
            data.action = self.action
        self.obj.parent, self.obj.matrix_parent_inverse = self.parent, self.parent_inverse
        self.obj.rotation_mode = self.rotation_mode
        for name, value in zip(self.POSE, self.pose):
            setattr(self.obj, name, value)
        if not self.had_placement:
            self.obj.pop(PLACEMENT, None)
        if action is not None:
            bpy.data.actions.remove(action)
