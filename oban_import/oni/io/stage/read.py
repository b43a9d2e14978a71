"""read_stage: what a level's script names (docs/stage.md): its characters, script characters,
flags, films, placed objects' and gunk's script ids, and its dialogue sounds, looked up in the
level and in the shared `level0_Final.dat` beside it (as the game holds both at once)."""

import os

from ....core.errors import ObanError
from ..container.container import BINA_TAG, OBOA_TAG, ONLV_TAG, Container, u32_at
from ..container.library import Library, open_library
from ..level.object_lists import is_object_list, read_object_list
from ..level.onlv import read_onlv
from ..objects.oboa import parse_oboa
from ..objects.read import empty_setup
from .characters import characters_of, flags_of, script_characters_at
from .film import film_at
from .model import AISA_TAG, FILM_TAG, OSBD_TAG, SNDD_TAG, DialogSound, Stage
from .script_quads import script_quads_at
from .sounds import group_sounds, impulse_group, sound_data_at

SHARED = "level0_Final.dat"
AISA_LINK = 0x5C          # the ONLV's link to its script characters
IMPULSE_SUFFIX, GROUP_SUFFIX = ".imp", ".grp"


def read_stage(path, library: Library | None = None, sounds=None) -> Stage:
    """The Stage of the level .dat at `path` (`library`: open_library's). `sounds`: the
    dialogue sounds to read by name (a script's sound_dialog_play arguments); None reads every
    impulse sound of the level and of the shared level beside it. ObanError where the file holds
    no level (ONLV) or any part read is at fault."""
    path = os.fspath(path)
    with open_library(path, library) as library:
        c, start = library.main, len(library.warnings)
        onlv = c.first(ONLV_TAG)
        if onlv is None:
            raise ObanError(path, "holds no level (ONLV): a cutscene plays in a level .dat")
        links = read_onlv(library, c, onlv)
        stage = Stage(level=c.short_name(onlv))
        aisa = library.follow(c, u32_at(c.instance(onlv, ONLV_TAG)[0], AISA_LINK), AISA_TAG, onlv, "characters")
        if aisa is not None:
            stage.script_characters = script_characters_at(library, *aisa)
        for i in c.with_data(BINA_TAG):
            if is_object_list(c, i):
                objects, warnings = read_object_list(c, i)
                for warning in warnings:
                    library.warn(warning)
                stage.characters += characters_of(objects, c.path, c.label(i))
                stage.flags += flags_of(objects, c.path, c.label(i))
        stage.films = {film.name: film for film in (film_at(c, i) for i in c.with_data(FILM_TAG))}
        if links.objects is not None:
            stage.object_script_ids = _object_script_ids(*links.objects)
        if links.environment is not None:
            stage.script_quads, stage.quad_flags = script_quads_at(library, *links.environment)
        containers = [c] + _shared(library, path)
        names = _impulse_names(library, containers) if sounds is None else list(dict.fromkeys(sounds))
        for name in names:
            sound = _dialog(library, containers, name)
            if sound is not None:
                stage.sounds[name] = sound
        stage.warnings = library.warnings[start:]
        return stage


def _object_script_ids(c: Container, index: int) -> dict:
    """{script id: the index of the first setup in use with it} of the OBOA at `index`."""
    found = {}
    for n, record in enumerate(parse_oboa(c.instance(index, OBOA_TAG)[0], c.path, c.label(index))):
        if not empty_setup(record):
            found.setdefault(int(record["script_id"]), n)
    return found


def _shared(library: Library, path: str) -> list:
    """The container of the shared level beside the file read ([] without one, or when it is that file)."""
    shared = os.path.join(os.path.dirname(os.path.abspath(path)), SHARED)
    if not os.path.isfile(shared) or os.path.samefile(shared, path):
        return []
    return [library.open(shared)]


def _impulse_names(library, containers) -> list:
    """The names of every impulse sound (OSBD NAME.imp) with data in the containers, in order."""
    names = []
    for c in containers:
        names += [full[4:-len(IMPULSE_SUFFIX)] for full in library.named(c, OSBD_TAG) if full.endswith(IMPULSE_SUFFIX)]
    return list(dict.fromkeys(names))


def _find(library, containers, tag: bytes, full_name: str):
    """(container, index) of the first instance of `tag` named `full_name` in the containers, or None."""
    for c in containers:
        index = library.named(c, tag).get(full_name)
        if index is not None:
            return c, index
    return None


def _dialog(library, containers, name: str) -> DialogSound | None:
    """The dialogue sound `name`: its impulse, group and permutations' sound data (a part not
    found: a warning; the impulse not found: None)."""
    impulse = _find(library, containers, OSBD_TAG, f"OSBD{name}{IMPULSE_SUFFIX}")
    if impulse is None:   # the cutscene names it missing, with the tick and line that play it
        return None
    group = impulse_group(*impulse)
    found = _find(library, containers, OSBD_TAG, f"OSBD{group}{GROUP_SUFFIX}")
    if found is None:
        library.warn(f"dialogue sound {name!r}: its group OSBD{group}{GROUP_SUFFIX} is not found: it lasts no time")
        return DialogSound(name=name, group=group, permutations=(), ticks=0)
    permutations = []
    for sound in group_sounds(*found):
        data = _find(library, containers, SNDD_TAG, f"SNDD{sound}")
        if data is None:
            library.warn(f"dialogue sound {name!r}: its sound data SNDD{sound} is not found")
        permutations.append(None if data is None else sound_data_at(*data))
    ticks = next((p.duration_ticks for p in permutations if p is not None), 0)
    return DialogSound(name=name, group=group, permutations=tuple(permutations), ticks=ticks)
