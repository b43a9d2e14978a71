"""What a cutscene import brings (no bpy; docs/cutscenes.md): a level's scripts read, one of
their functions played as the engine schedules it (engine/cutscene), and what its names mean
in the level and the level files beside it (the shared level0_Final, loose .oni files): the
OBANs, TRAMs and characters it plays, each tick's tracks, and what is missing or cannot be
known without the game. The importer (oni/blender/cutscene) builds it; `--list` tabulates it."""

import os
from dataclasses import dataclass, field

from ..core.errors import ObanError
from .engine.cutscene.schedule import Names, schedule
from .engine.cutscene.timeline import Timeline
from .engine.cutscene.tracks import Cast, Tracks, tracks
from .io.bsl.read import read_scripts
from .io.characters.read import read_characters
from .io.container.container import OBOA_TAG
from .io.container.library import open_library
from .io.oban.read import read_file
from .io.objects.read import read_objects
from .io.trams.files import read_trams

SHARED_LEVEL = "level0_Final.dat"   # the level file every level's placeholders may lead to


@dataclass
class Cutscene:
    level: str
    function: str
    timeline: Timeline
    tracks: Tracks
    obans: dict                        # name -> Animation, those the timeline plays
    trams: dict                        # name -> Tram, those the timeline plays
    characters: dict                   # the script's name of a character -> Character (its class), None: not found
    notes: list = field(default_factory=list)


def scripts_folder(level: str, scripts: str | None = None) -> str:
    """Where a level's scripts are: `scripts`, else the level's own folder."""
    return scripts or os.path.dirname(os.path.abspath(level))


def functions(folder: str) -> list:
    """The functions of the scripts in `folder` (or of one .bsl file), in file order."""
    return list(read_scripts(folder).functions.values())


def level_files(level: str) -> list:
    """The level, then the shared level file beside it (where the game finds what it links)."""
    shared = os.path.join(os.path.dirname(os.path.abspath(level)), SHARED_LEVEL)
    return [level] + ([shared] if os.path.isfile(shared) and not os.path.samefile(shared, level) else [])


def plan_cutscene(level: str, function: str, scripts: str | None = None, classes: dict | None = None) -> Cutscene:
    """`function` of the scripts played in `level`. `classes`: the character class (ONCC name)
    of each character the level does not set up (the script's name -> class)."""
    stage = _Stage(level, scripts)
    timeline = schedule(stage.names, function)
    placed = {}
    for obj in _placed_objects(level):
        placed.setdefault(obj.script_id, []).append(obj)
    cast = Cast(oban=stage.obans.get, placed=lambda script_id: placed.get(script_id, []))
    played = tracks(timeline, cast)
    used_trams = {name for actions in played.actions.values() for _, name, _ in actions}
    characters = _characters(stage.files, played, classes or {})
    return Cutscene(level, function, timeline, played, {n: stage.obans[n] for n in _obans_played(timeline)
                                                        if n in stage.obans},
                    {n: stage.trams[n] for n in used_trams if n in stage.trams}, characters)


def list_cutscenes(level: str | None, scripts: str) -> list:
    """(function, ticks, what it plays, what is missing, error) of each function of the scripts
    that moves the camera or a character, played in `level` (None: no level, every OBAN and
    TRAM missing)."""
    stage = _Stage(level, scripts)
    rows = []
    for name in stage.names.functions:
        try:
            timeline = schedule(stage.names, name)
        except ObanError as error:
            rows.append((name, "", "", "", error.problem))
            continue
        if not timeline.camera and not timeline.characters:
            continue
        characters = sorted({e.character for e in timeline.characters})
        plays = [f"camera: {', '.join(dict.fromkeys(e.oban for e in timeline.camera if e.oban)) or '-'}"]
        plays += [f"{key}: " + ", ".join(dict.fromkeys(e.name for e in timeline.characters
                                                       if e.character == key and e.name)) for key in characters]
        missing = ", ".join(dict.fromkeys(f"{kind.upper()} {what}" for _, kind, what, _ in timeline.missing))
        rows.append((name, timeline.length, "; ".join(plays), missing or "-", ""))
    return rows


class _Stage:
    """A level's scripts and the lengths of what they may play (no level: none)."""

    def __init__(self, level, scripts):
        read = read_scripts(scripts_folder(level, scripts) if level else scripts)
        self.files = level_files(level) if level else []
        self.obans = _by_name(read_file(path) for path in self.files)
        self.trams = _by_name(read_trams(path) for path in self.files)
        self.names = Names(read.functions, read.variables, _frames(self.obans), _frames(self.trams),
                           lambda name: None)


def _obans_played(timeline):
    return ({e.oban for e in timeline.camera} | {e.name for e in timeline.characters if e.kind == "envanim"}
            | {e.oban for e in timeline.objects if e.oban})


def _by_name(groups) -> dict:
    found = {}
    for group in groups:
        for item in group:
            found.setdefault(item.name, item)
    return found


def _frames(by_name):
    return lambda name: by_name[name].frames if name in by_name else None


def _placed_objects(level):
    with open_library(level) as library:
        return read_objects(level, library).objects if library.main.first(OBOA_TAG) is not None else []


def _characters(files, played, classes) -> dict:
    wanted = {key: classes.get(key) for key in played.bases}
    found = {}
    for path in files:
        try:
            for character in read_characters(path):
                found.setdefault(character.name, character)
        except ObanError:
            continue
    return {key: found.get(name) if name else None for key, name in wanted.items()}

