"""An Oni import: every file read and checked first; then the new objects every file's
animations need are made together (in the order Blender files them fastest); then each
file is built, all or nothing: a file that fails takes back all it made, and the files
before it stay. What an import makes goes into one new collection named after the file
(or the batch); a mesh, material or image the batch reaches twice is made once."""

import os
from dataclasses import dataclass, field

import bpy

from ...blender.datablocks import (Snapshot, block_counts, fast_order, lay_out, new_collection, remove_if_empty,
                                   select_only)
from ...blender.scene import update_scene
from ...core.errors import ObanError
from ...core.files import PROGRESS_STEP, each_file
from ...core.report import Made, Report
from ..io.library import read_character, read_characters, read_mesh_file, read_objects, read_texture_file, read_trams
from ..io.characters import Character
from ..io.tram import Tram
from ..io.objects import Level, PlacedObject, Texture, at_origin
from ..io.oni_properties import PLACEMENT, descriptions
from ..io.reader import contents, level_of_raw_data, name_matcher, read_files
from . import characters, motion, placed, targets
from .cameras import new_camera
from .empties import new_empty
from .shared_blocks import SharedBlocks

READING_SHARE = 0.2        # of the progress bar


def import_files(context, paths, settings, progress=None) -> Report:
    """Import every file; a file that fails adds nothing and the others still import.
    `progress(fraction)` is called as the work goes on, with the share done (0 to 1)."""
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
    for read in _read_files(paths, settings, selected, lambda share: report(READING_SHARE * share)):
        if isinstance(read, ObanError):
            result.errors.append(str(read))
        else:
            files.append(read)
    try:
        new_objects = _NewObjects([a for f in files for a in f.new_animations()], settings)
    except Exception as error:  # a bug, or no memory: no new object can be made, and none is
        result.errors += [f"{f.path}: could not be imported: {error!r}" for f in files if f.new_animations()]
        files = [f for f in files if not f.new_animations()]
        new_objects = _NewObjects([], settings)
    files.sort(key=lambda f: bool(f.trams) and not f.characters)   # the batch's characters first: TRAMs go on them
    result.notes += _read_with_their_characters(files)
    collection = new_collection(context.scene, paths)
    shared = SharedBlocks(settings)
    result.last_frame = settings.frame_start
    trams_made = set()   # names of the TRAMs the import has made, with their characters
    try:
        for index, file in enumerate(files):
            done = READING_SHARE + (1 - READING_SHARE) * index / len(files)
            if index % PROGRESS_STEP == PROGRESS_STEP - 1:
                report(done)
            try:
                file.build(context, collection, new_objects, shared, settings,
                           lambda share: report(done + (1 - READING_SHARE) * share / len(files)), armatures,
                           trams_made)
            except Exception as error:  # a bug, not bad input: still nothing of this file is left
                result.errors.append(f"{file.path}: could not be imported: {error!r}")
                continue
            result.add(file.built)
            if file.characters or file.trams:   # where the next files' TRAMs may go, and what they need not make
                armatures += [m.block for m in file.built.made if isinstance(m.item, Character)]
                trams_made |= {m.item.name for m in file.built.made if isinstance(m.item, Tram)}
    finally:   # what a failure outside the files' own building left unused
        new_objects.remove_untaken()
        remove_if_empty(collection)
    report(1.0)
    result.counts = block_counts(since=before)
    if settings.side_by_side:
        lay_out([m.block for f in files if f.built is not None and f.stands_at_origin() for m in f.built.made
                 if isinstance(m.item, (Character, PlacedObject))], context)
    if result.made:
        update_scene(context.scene, settings, result.last_frame)
        select_only(context, result.blocks())
    return result


@dataclass
class _FileImport:
    """One file: what it brings, read and checked before anything is made. `build` adds all
    of it to the scene (what it made in `built`) or, failing, takes all of it back."""
    path: str
    animations: list = field(default_factory=list)   # (OBAN, the selected object it moves, or None: a new one)
    level: Level | None = None      # placed objects: a level's, an OBOA .oni's, a loose M3GM at the origin
    texture: Texture | None = None  # a loose TXMP: an image
    characters: list = field(default_factory=list)   # (Character, the TRAMs of its collection chosen)
    trams: list = field(default_factory=list)        # TRAMs of no character of the file: onto an armature
    loose_mesh: bool = False        # `level` is a loose M3GM at the origin
    parts_only: bool = False        # a character's collection, textures or pieces: read with the character
    bare_body: bool = False         # `characters` is a TRBS on its own
    built: Report = field(default=None, init=False)       # what the last build made
    _new: list = field(default=None, init=False)          # (object, action) made for it
    _selected: list = field(default=None, init=False)     # _SelectedObjectState of each selected object it moved
    _snapshot: Snapshot | None = field(default=None, init=False)

    def stands_at_origin(self):
        """Whether what it makes would stand at the origin: a character, a loose mesh."""
        return bool(self.characters) or self.loose_mesh

    def new_animations(self):
        return [animation for animation, target in self.animations if target is None]

    def build(self, context, collection, new_objects, shared, settings, progress, armatures=(), trams_made=()):
        """`armatures`: where this file's own TRAMs may go (characters.onto_armature); those of
        `trams_made` (names) the import made already, with their character, are not made again."""
        self.built, self._new, self._selected = Report(last_frame=settings.frame_start), [], []
        # a snapshot costs a look at every data block: only where more than objects are made
        more = self.level is not None or self.texture is not None or self.characters or self.trams
        self._snapshot = Snapshot() if more else None
        mark = shared.mark()
        try:
            self._build(context, collection, new_objects, shared, settings, progress, armatures, trams_made)
        except Exception:
            self._take_back()
            shared.forget_since(mark)
            raise

    def _build(self, context, collection, new_objects, shared, settings, progress, armatures, trams_made):
        moved = [(animation, target, None) if target is not None else (animation, *new_objects.take(self._new))
                 for animation, target in self.animations]
        if self.level is not None:
            self.built.add(placed.import_level(context, self.level, self.path, settings, collection, shared))
        for character, chosen in self.characters:
            self.built.add(characters.import_character(context, character, self.path, settings, collection, shared,
                                                       chosen))
        trams = [tram for tram in self.trams if tram.name not in trams_made]
        self.built.notes += [f"{self.path}: '{tram.name}': imported with its character already"
                             for tram in self.trams if tram.name in trams_made]
        if trams:   # onto the selected armatures, the batch's characters, this file's
            armatures = list(armatures) + [m.block for m in self.built.made if isinstance(m.item, Character)]
            self.built.add(characters.onto_armature(context, trams, self.path, armatures, settings, collection,
                                                    shared))
        for done, (animation, obj, new) in enumerate(moved):
            if done and done % PROGRESS_STEP == 0:
                progress(done / len(moved))
            if new is None:
                self._selected.append(_SelectedObjectState(obj))
                built = motion.build(context, animation, obj, settings, made=self._new)
            else:
                collection.objects.link(obj)
                built = motion.build(context, animation, obj, settings, new.motion, new.action, new.described,
                                     made=self._new, collection=collection)
            self.built.made.append(Made(self.path, animation, obj, built.error, built.note))
            self.built.last_frame = max(self.built.last_frame, built.last_frame)
            self.built.warnings += motion.warnings(self.path, animation.name, animation.warnings, built)
            if built.note:
                self.built.notes.append(f"{self.path}: '{animation.name}': {built.note}")
        if self.texture is not None:
            self.built.made.append(Made(self.path, self.texture, shared.image(self.texture)))
            shared.pack_images()

    def _take_back(self):
        for state in reversed(self._selected):
            state.restore()
        for obj, action in reversed(self._new):   # the pivots (made last) before their children
            _remove_new(obj, action)
        if self._snapshot is not None:
            self._snapshot.remove()


@dataclass
class _NewObject:
    motion: object       # motion.motions_of()'s
    action: object       # a new, empty action made for it
    described: tuple     # its custom properties: oni.io.oni_properties.descriptions()'s


class _NewObjects:
    """The new object (Empty or Camera) and empty action of every animation that needs one,
    made before anything is built, in the order Blender files them fastest; handed out in
    file order with its motion and description, computed as they are taken. Once computing
    one failed, every later take fails alike (each file that needs one is refused, with the
    cause). `remove_untaken` removes what a failure left unused."""

    def __init__(self, animations, settings):
        self.made = iter(_make_objects([a.name for a in animations], settings))
        self.motions = motion.motions_of(animations, settings, camera=settings.target == "CAMERA", written=True)
        self.descriptions = descriptions(animations)
        self.error = None

    def take(self, taken):
        """(object, _NewObject) of the next animation; the object and action are added to
        `taken` first, so that whoever takes them also removes them."""
        if self.error is None:
            try:
                moved_by, described = next(self.motions), next(self.descriptions)
            except Exception as error:   # a bug, or no memory
                self.error = error
        if self.error is not None:
            raise self.error
        obj, action = next(self.made)
        taken.append((obj, action))
        return obj, _NewObject(moved_by, action, described)

    def remove_untaken(self):
        for obj, action in self.made:
            _remove_new(obj, action)


def _make_objects(names, settings):
    """(object, empty action) for each new object, in the order of `names`, all made
    together in the order Blender files them fastest (datablocks.fast_order); on failure,
    none."""
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


def _read_files(paths, settings, selected, progress):
    """What each file brings (a _FileImport), or the ObanError that refuses it, in file
    order. The OBANs of files that are not levels are read last, together (read_files checks
    them in one pass)."""
    read = each_file(paths, lambda path: _read_contents(path, settings), lambda share: progress(0.5 * share))
    pending = [index for index, r in enumerate(read) if not isinstance(r, ObanError) and r[1]]
    found = read_files([paths[i] for i in pending], settings.name_filter or None,
                       lambda share: progress(0.5 + 0.5 * share))
    files = [r if isinstance(r, ObanError) else r[0] for r in read]
    for index, animations in zip(pending, found):
        try:
            file = files[index]
            file.animations = _targets(file, animations, settings, selected)
        except ObanError as error:
            files[index] = error
    return files


def _read_contents(path, settings):
    """(what a file brings besides the OBANs read_files reads: placed objects with the OBANs no
    object uses, a loose mesh or texture, characters, TRAMs; whether it has OBANs for
    read_files). ObanError on bad input."""
    kinds = contents(path)
    file = _FileImport(path)
    objects = settings.objects and settings.target != "SELECTED"
    if objects and "texture" in kinds:
        file.texture = read_texture_file(path)
    elif objects and "mesh" in kinds:
        file.level, file.loose_mesh = Level([at_origin(read_mesh_file(path))], []), True
    elif objects and "objects" in kinds:
        level = read_objects(path)
        matches = name_matcher(settings.name_filter)
        if matches:
            level.objects = [o for o in level.objects if matches(o.name)]
        file.animations = [(a, None) for a in level.unused() if not matches or matches(a.name)]
        if not level.objects and not file.animations:
            raise ObanError(path, f"holds no object or OBAN instance matching '{settings.name_filter}'")
        file.level = level
    if kinds & {"characters", "bodies"}:
        found = read_characters(path) if "characters" in kinds else [read_character(path)]
        file.characters = [(character, _chosen(character.animations, settings)) for character in found]
        file.bare_body = "characters" not in kinds
    if "animations" in kinds:
        reached = {tram.name for character, _ in file.characters for tram in character.animations}
        file.trams = [tram for tram in read_trams(path) if tram.name not in reached]
    if kinds == {"character parts"}:
        file.parts_only = True
    obans = not kinds or ("obans" in kinds and file.level is None)
    return file, obans


def _read_with_their_characters(files):
    """Notes for what a batch's characters read already: a collection's, textures' or body's
    pieces in files of their own, and a bare body a character of the batch has (not made twice)."""
    bodies = {character.body.name for f in files if not f.bare_body for character, _ in f.characters}
    notes = [f"{f.path}: a character's collection, textures or body pieces: read with the character that links them"
             for f in files if f.parts_only]
    for f in files:
        if f.bare_body and f.characters[0][0].body.name in bodies:
            notes.append(f"{f.path}: '{f.characters[0][0].name}': the body of a character of this import, made with it")
            f.characters = []
    return notes


def _chosen(trams, settings):
    """The TRAMs of a character's collection to import: all, those matching the filter, none."""
    if settings.character_animations == "NONE":
        return []
    matches = name_matcher(settings.name_filter) if settings.character_animations == "MATCHING" else None
    return [tram for tram in trams if not matches or matches(tram.name)]


def _targets(file, animations, settings, selected):
    """(animation, the selected object it moves, or None for a new one) of a file's
    animations (as read_files gives them: a list, or the ObanError refusing the file);
    ObanError on bad input, or for a file with nothing to import."""
    path = file.path
    if isinstance(animations, ObanError):
        raise animations
    if not animations:
        if file.characters or file.trams or file.parts_only:
            return []
        raise ObanError(path, "holds no OBAN instance" +
                        (f" matching '{settings.name_filter}'" if settings.name_filter else ""))
    if settings.target != "SELECTED":
        return [(a, None) for a in animations]
    return targets.assign(path, animations, selected)


def _remove_new(obj, action):
    """A new object made for an animation (with its camera) and its action; None: not made."""
    if obj is not None:
        camera = obj.data
        bpy.data.objects.remove(obj)
        if camera is not None:
            bpy.data.cameras.remove(camera)
    if action is not None:
        bpy.data.actions.remove(action)


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
