"""What a file brings to an import or a listing (no bpy). KINDS has one Kind per kind of
thing an Oni file can hold: its name, the tags of the instances that say a file holds it, and
its reader (io/ reads, engine/ applies the engine's rules, e.g. which door leaf plays what).
bring() reads a file by them into a Brought; next, the importer (oni/blender/importer.py)
builds each kind the file holds with the builder of the same name (its BUILDERS), and
`--list` tabulates it. A new kind is its reader, its Kind here and its builder there.
"""

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.errors import ObanError
from ..core.files import read_head
from ..core.names import name_matcher
from .engine.doors import door_leaves, furniture_objects
from .io.characters.model import Character
from .io.characters.read import read_character, read_characters
from .io.container.container import (AKEV_TAG, BINA_TAG, DOOR_TAG, M3GM_TAG, OBAN_TAG, OBOA_TAG, OFGA_TAG, ONCC_TAG,
                                     ONLV_TAG, TRAC_TAG, TRAM_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG, TRIA_TAG, TRMA_TAG,
                                     TRTA_TAG, TXMP_TAG, looks_like_container, tag_name)
from .io.container.library import open_library
from .io.level.model import LevelContents
from .io.level.read import read_level
from .io.objects.model import Level, Texture, at_origin
from .io.objects.read import read_mesh_file, read_objects, read_texture_file
from .io.trams.files import read_trams
from .io.trams.xml_read import looks_like_tram_xml

EXTENSIONS = (".oban", ".oni", ".dat", ".xml")
XML_HEAD = 1 << 16   # bytes of an .xml file enough to see its first element
CONTAINER_HEAD = 12  # bytes of a file enough to tell an Oni container (looks_like_container)
OBANS_ALONE = frozenset({"obans"})   # what a file of no kind brings: a raw .OBAN, OniSplit's XML of one
LEVEL_ALONE = frozenset({"objects", "level", "classes"})   # what a cutscene's level brings of itself


@dataclass(frozen=True)
class Choices:
    """What the user asked for that changes what is read."""
    objects: bool = True          # placed objects, loose meshes and textures (Placed Objects)
    name_filter: str = ""         # a glob on instance names (Name Filter)
    animations: str = "ALL"       # of a character's collection: ALL, MATCHING (the filter), NONE
    level_alone: bool = False     # a cutscene's level: its environment, object lists and placed objects only


@dataclass
class Brought:
    """What one file brings, read and checked, before anything is made of it: a field per
    thing the kinds' readers read (named with the kinds that fill it; None or empty where
    the file holds none), and what follows from its kinds."""
    path: str
    kinds: frozenset                 # the kinds it brings, by name: those it holds, or OBANS_ALONE
    level: Level | None = None       # objects, level (door leaves, furniture), mesh: placed objects
    level_parts: LevelContents | None = None   # level: its environment, object lists and classes
    characters: list = field(default_factory=list)   # characters, bodies: (Character, its collection's TRAMs chosen)
    trams: list = field(default_factory=list)        # animations: TRAMs of no character of the file
    texture: Texture | None = None   # texture: a loose TXMP
    level_obans: list = field(default_factory=list)  # the OBANs of `level` no object uses (bring)

    @property
    def loose_mesh(self) -> bool:
        """`level` is a loose M3GM standing at the origin."""
        return "mesh" in self.kinds and self.level is not None

    @property
    def bare_body(self) -> bool:
        """`characters` is a TRBS on its own."""
        return "bodies" in self.kinds and "characters" not in self.kinds

    @property
    def parts_only(self) -> bool:
        """A character's collection, textures or pieces, or a door or furniture class: read
        with the character or level that links it."""
        return self.kinds in ({"character parts"}, {"classes"})

    @property
    def obans(self) -> bool:
        """Its OBANs are read by oban.read.read_files, a batch's together (a level's come with
        its placed objects)."""
        return "obans" in self.kinds and self.level is None


@dataclass(frozen=True)
class Kind:
    """One kind of thing a file can hold: an instance with data of one of `tags` says it is
    there; read(brought, choices, library) reads it into its field of `brought` (`library`: the
    file's, open for all its kinds, None for a file that is not an Oni container), None for a
    kind read with another. The importer's BUILDERS builds it by `name`. `placed`: read only
    with Placed Objects; `alone`: only in a file that holds no other kind (a loose mesh or
    texture .oni)."""
    name: str
    tags: frozenset
    read: Callable | None
    placed: bool = False
    alone: bool = False


def _objects(brought, choices, library):
    brought.level = read_objects(brought.path, library)


def _level(brought, choices, library):
    """The environment, object lists and classes; with placed objects, each door's leaves
    moved by their class's OBAN (the setups they replace, or placed by Bungie's rule) and,
    without an environment, the furniture's meshes."""
    parts = brought.level_parts = read_level(brought.path, library)
    if not choices.objects:
        return
    level = brought.level if brought.level is not None else Level([], [])
    leaves = door_leaves(parts, level.objects)
    replaced = {leaf.setup for leaf in leaves if leaf.setup >= 0}
    level.objects = [o for o in level.objects if o.setup not in replaced] + leaves
    if parts.environment is None:
        level.objects += furniture_objects(parts)
    brought.level = level if level.objects or brought.level is not None else None


def _characters(brought, choices, library):
    found = [read_character(brought.path, library)] if brought.bare_body else read_characters(brought.path, library)
    brought.characters = [(character, chosen(character, choices)) for character in found]


def _trams(brought, choices, library):
    reached = {tram.name for character, _ in brought.characters for tram in character.animations}
    brought.trams = [tram for tram in read_trams(brought.path, library) if tram.name not in reached]


def _mesh(brought, choices, library):
    brought.level = Level([at_origin(read_mesh_file(brought.path, library))], [])


def _texture(brought, choices, library):
    brought.texture = read_texture_file(brought.path, library)


KINDS = (   # in the order they are read (a level's leaves join its placed objects) and built
    Kind("objects", frozenset({OBOA_TAG}), _objects, placed=True),
    Kind("level", frozenset({ONLV_TAG, AKEV_TAG, BINA_TAG}), _level),
    Kind("classes", frozenset({DOOR_TAG, OFGA_TAG}), None),   # read with the level whose object lists name them
    Kind("characters", frozenset({ONCC_TAG}), _characters),
    Kind("bodies", frozenset({TRBS_TAG}), _characters),
    Kind("animations", frozenset({TRAM_TAG}), _trams),
    Kind("character parts", frozenset({TRAC_TAG, TRCM_TAG, TRGA_TAG, TRIA_TAG, TRMA_TAG, TRTA_TAG}),
         None),   # read with the character that links them
    Kind("obans", frozenset({OBAN_TAG}), None),   # a level's with its objects, others by the importer and --list
    Kind("mesh", frozenset({M3GM_TAG}), _mesh, placed=True, alone=True),
    Kind("texture", frozenset({TXMP_TAG}), _texture, placed=True, alone=True),
)


def chosen(character: Character, choices: Choices) -> list:
    """The TRAMs of a character's collection to import: all, those matching the filter, none."""
    if choices.animations == "NONE":
        return []
    matches = name_matcher(choices.name_filter) if choices.animations == "MATCHING" else None
    return [tram for tram in character.animations if not matches or matches(tram.name)]


def bring(path: str, choices: Choices = Choices()) -> Brought:
    """What the file at `path` brings: the kinds it holds (a file of none brings its OBANs),
    each read by its reader (_readers); ObanError on bad input. An Oni container is opened
    once for all its kinds: what they share (a level's door classes and placed objects, the
    TRAMs of its characters and of the file) is read once. Next: the importer builds it
    (importer._FileImport.build), or `--list` tabulates it."""
    path = os.fspath(path)
    with _library(path) as library:
        brought = Brought(path, kinds=_kinds(_present(path, library)) or OBANS_ALONE)
        if choices.level_alone:   # the cutscene brings the characters, TRAMs and OBANs it plays
            brought.kinds = brought.kinds & LEVEL_ALONE
        for read in _readers(brought.kinds, choices):
            read(brought, choices, library)
    if brought.level is not None and not brought.loose_mesh:
        _filtered(brought, choices)
        if choices.level_alone:
            brought.level_obans = []
    return brought


def _readers(kinds: frozenset, choices: Choices) -> list:
    """The readers of `kinds`, in KINDS' order, each once (two kinds may share one); those of
    placed kinds only with Placed Objects."""
    return list(dict.fromkeys(kind.read for kind in KINDS if kind.name in kinds and kind.read is not None
                              and (choices.objects or not kind.placed)))


def _filtered(brought, choices):
    """A level's placed objects and the OBANs none of them plays, those matching the filter."""
    level, matches = brought.level, name_matcher(choices.name_filter)
    if matches:
        level.objects = [o for o in level.objects if matches(o.name)]
    brought.level_obans = [a for a in level.unused() if not matches or matches(a.name)]
    if matches and not level.objects and not brought.level_obans:
        raise ObanError(brought.path, f"holds no object or OBAN instance matching '{choices.name_filter}'")


def contents(path: str) -> frozenset:
    """The names of the kinds a file holds, by the tags of its instances with data; a
    kind marked `alone` only where no other is; {'animations'} for OniSplit's XML of a TRAM;
    empty for anything else (also for files that are not Oni containers, and without opening
    anything but .oni, .dat and .xml files, which only those can be)."""
    path = os.fspath(path)
    with _library(path) as library:
        return _kinds(_present(path, library))


def _kinds(present: set) -> frozenset:
    """The names of the kinds whose tags are among `present`, a kind marked `alone` only where
    no other is."""
    found = [kind.name for kind in KINDS if present & kind.tags and not kind.alone]
    if not found:
        found = [kind.name for kind in KINDS if present & kind.tags][:1]
    return frozenset(found)


def _check_tags(container):
    """ObanError for an instance tagged as one kind KINDS knows and named as another (swapped
    descriptors' tags): read by its tag, it would be taken for what it is not, or for nothing."""
    index = container.misnamed({tag for kind in KINDS for tag in kind.tags})
    if index is not None:
        said, tag = container.full_name(index)[:4], tag_name(container.tag_of(index))
        raise ObanError(container.path, f"{container.label(index)} is tagged {tag}, but its name says {said}")


@contextlib.contextmanager
def _library(path):
    """open_library's Library of a .oni or .dat file that is an Oni container, else None."""
    if os.path.splitext(path)[1].lower() not in (".oni", ".dat") or \
            not looks_like_container(read_head(path, CONTAINER_HEAD)[0]):
        yield None
        return
    with open_library(path) as library:
        yield library


def _present(path, library):
    """The tags of the instances with data in the file (TRAM_TAG alone for a TRAM's XML)."""
    if library is None:
        is_xml = os.path.splitext(path)[1].lower() == ".xml"
        return {TRAM_TAG} if is_xml and looks_like_tram_xml(read_head(path, XML_HEAD)[0]) else set()
    _check_tags(library.main)
    return library.main.tags_with_data()
