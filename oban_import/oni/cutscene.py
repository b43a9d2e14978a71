"""What a cutscene import brings (no bpy; docs/cutscenes.md): a level's scripts read, one of
their functions played as the engine schedules it (engine/cutscene), and what its names mean
in the level and the shared level0_Final beside it: the OBANs, TRAMs and characters it plays,
where each character stands, each tick's tracks, and what is missing or cannot be known
without the game. The importer (oni/blender/cutscene) builds it; `--list` tabulates it."""

import glob
import os
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ObanError
from ..core.report import listed
from .engine.cutscene.commands import who
from .engine.cutscene.schedule import Names, schedule
from .engine.cutscene.timeline import Timeline
from .engine.cutscene.tracks import Cast, Tracks, tracks
from .io.bsl.read import read_script_text, read_scripts
from .io.bsl.script import Call, Fork, If, LevelScripts, Literal, Name
from .io.characters.read import read_characters
from .io.container.container import OBOA_TAG, ONCC_TAG, ONLV_TAG
from .io.container.library import open_library, plain_name
from .io.oban.read import read_file
from .io.objects.read import read_objects
from .io.stage.read import read_stage
from .io.trams.files import read_trams

SHARED_LEVEL = "level0_Final.dat"   # the level file every level's placeholders may lead to
SCRIPTS = "IGMD"                    # the game's folder of level scripts, a folder per level name, beside the levels
DIALOGUE = ("sound_dialog_play", "sound_dialog_play_block")
PLAYED = {"teleport": "flag ", "playback": "film "}   # how --list names what a character event names
# The custom properties of what a cutscene import keys (read back by the cutscene export)
CUTSCENE = "oni_cutscene"                        # the function's name
CUTSCENE_CHARACTER = "oni_cutscene_character"   # on a character's armature: the script's name for it ("0": the player)
# on the cutscene's camera: where it was played from, for the export to keep what the scene still plays as it was
CUTSCENE_LEVEL, CUTSCENE_SCRIPTS, CUTSCENE_START = "oni_cutscene_level", "oni_cutscene_scripts", "oni_cutscene_start"


@dataclass
class Cutscene:
    level: str
    function: str
    timeline: Timeline
    tracks: Tracks
    obans: dict                        # name -> Animation, those the timeline plays
    trams: dict                        # name -> Tram, those the timeline plays
    characters: dict                   # the script's name of a character -> Character (its class), None: not found
    quads: dict                        # script id -> (k,) environment quad indices (env_show)
    notes: list = field(default_factory=list)
    scripts: str = ""                  # the folder (or .bsl) its function was read from
    present: dict = field(default_factory=dict)   # character -> whether the level has it from its start


def scripts_folder(level: str, scripts: str | None = None) -> str:
    """Where a level's scripts are: `scripts`; else the level's own folder where it holds a
    .bsl, else IGMD/<the level's name> beside it, where the game looks."""
    if scripts:
        return scripts
    folder = os.path.dirname(os.path.abspath(level))
    if glob.glob(os.path.join(glob.escape(folder), "*.[bB][sS][lL]")):
        return folder
    with open_library(level) as library:
        c = library.main
        onlv = c.first(ONLV_TAG)
        game = os.path.join(folder, SCRIPTS, c.short_name(onlv)) if onlv is not None else None
    return game if game and os.path.isdir(game) else folder


def functions(folder: str) -> list:
    """The functions of the scripts in `folder`, in file order."""
    return list(read_scripts(folder).functions.values())


def level_files(level: str) -> list:
    """The level, then the shared level file beside it (where the game finds what it links)."""
    shared = os.path.join(os.path.dirname(os.path.abspath(level)), SHARED_LEVEL)
    return [level] + ([shared] if os.path.isfile(shared) and not os.path.samefile(shared, level) else [])


def plan_cutscene(level: str, function: str, scripts: str | None = None, classes: dict | None = None,
                  written=None) -> Cutscene:
    """`function` of the scripts played in `level`. `classes`: a character class (ONCC name) for
    a character of the script (its name or id -> class), or for any the level does not set up
    ("" -> class). `written`: (a script's text, the file it names, {name: Animation}) played in
    its stead, its OBANs before the level's (a cutscene export's, checked before it writes)."""
    stage = _Stage(level, scripts, written)
    if function not in stage.names.functions:
        found = listed(stage.names.functions, 8)
        raise ObanError(stage.source, f"no function '{function}' in its scripts (they hold {found})" if found
                        else "holds no script (.bsl) with a function")
    timeline = schedule(stage.names, function)
    cast = Cast(oban=stage.oban, character=lambda key: stage.who(key)[1], flag=stage.flag,
                film=stage.film, placed=lambda script_id: stage.placed.get(script_id, []),
                spawned=lambda key: stage.who(key)[2])
    played = tracks(timeline, cast)
    used_trams = {name for actions in played.actions.values() for _, name, _ in actions}
    characters, notes = stage.classes(played.bases, classes or {})
    return Cutscene(level, function, timeline, played,
                    {n: stage.oban(n) for n in _obans_played(timeline) if stage.oban(n) is not None},
                    {n: stage.tram(n) for n in used_trams if stage.tram(n) is not None}, characters,
                    stage.stage.script_quads if stage.stage else {}, notes + stage.warnings, stage.source,
                    {key: stage.who(key)[2] for key in played.bases})


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
        plays += [f"{key}: " + ", ".join(dict.fromkeys(f"{PLAYED.get(e.kind, '')}{e.name}"
                                                       for e in timeline.characters if e.character == key and e.name))
                  for key in characters]
        missing = ", ".join(dict.fromkeys(f"{kind.upper()} {what}" for _, kind, what, _ in timeline.missing))
        rows.append((name, timeline.length, "; ".join(plays), missing or "-", ""))
    return rows


class _Stage:
    """A level's scripts and what their names mean in it (no level: nothing is found)."""

    def __init__(self, level, scripts, written=None):
        if written is None:
            self.source = scripts_folder(level, scripts) if level else scripts
            read = read_scripts(self.source)
        else:
            text, self.source, extra = written
            script = read_script_text(text, self.source)
            read = LevelScripts(self.source, (script,), {f.name: f for f in script.functions},
                                {v.name: v for v in script.variables})
        self.files = level_files(level) if level else []
        self.obans = _by_name(read_file(path) for path in self.files)
        self.obans.update(extra if written else {})
        self.trams = _by_name(read_trams(path) for path in self.files)
        self.stage = read_stage(level, sounds=_dialogue_names(read.functions.values())) if level else None
        self.warnings = list(self.stage.warnings) if self.stage else []
        self.placed = {}
        for obj in _placed_objects(level) if level else []:
            self.placed.setdefault(obj.script_id, []).append(obj)
        self.loose = [] if written else list(dict.fromkeys(  # a written script's OBANs are all in `extra`
            [self.source if os.path.isdir(self.source) else os.path.dirname(self.source)]
            + ([os.path.dirname(os.path.abspath(level))] if level else [])))
        self.names = Names(read.functions, read.variables, _frames(self.oban), _frames(self.tram),
                           self._dialogue_ticks, self._object_frames, self._film_frames)

    def oban(self, name):
        """The OBAN `name`: the level's, the shared level's, else OBAN<name>.oni in the scripts'
        folder or the level's (what an export of a cutscene writes, before OniSplit packs it)."""
        return self._named(self.obans, name, "OBAN", read_file)

    def tram(self, name):
        return self._named(self.trams, name, "TRAM", read_trams)

    def _named(self, found, name, tag, read):
        if name not in found:
            paths = [os.path.join(folder, f"{tag}{name}.oni") for folder in self.loose if plain_name(name)]
            path = next((p for p in paths if os.path.isfile(p)), None)
            found[name] = next(iter(read(path)), None) if path else None
        return found[name]

    def _dialogue_ticks(self, name):
        sound = self.stage.dialog(name) if self.stage else None
        return None if sound is None else sound.ticks

    def _object_frames(self, script_id):
        counts = [o.animation.frames for o in self.placed.get(script_id, []) if o.animation is not None]
        return max(counts, default=None)

    def _film_frames(self, name):
        found = self.stage.films.get(name) if self.stage else None
        return None if found is None else found.frame_count

    def who(self, key):
        """(its class's name, its base at the level's start, whether it is there from the start) of
        a character as the script names it (docs/cutscenes.md 3.1-3.3); ("", None, True) unknown."""
        stage = self.stage
        if stage is None:
            return "", None, True
        if key.lstrip("-").isdigit():
            found = stage.player if key == "0" else None
            if found is not None:
                return found.class_name, standing(found.position, found.facing), True
            scripted = stage.script_character(int(key))
            if scripted is not None:
                flag = stage.flag(scripted.flag_id)
                return scripted.class_name, None if flag is None else standing(flag.position, flag.facing), False
            return "", None, True
        found = stage.character(key)
        if found is not None:
            return found.class_name, standing(found.position, found.facing), found.present_at_start
        scripted = next((c for c in stage.script_characters if c.name == key), None)
        return (scripted.class_name, None, False) if scripted else ("", None, True)

    def flag(self, name):
        found = self.stage.flag(int(name)) if self.stage and who(name).lstrip("-").isdigit() else None
        return None if found is None else standing(found.position, found.facing)

    def film(self, name):
        found = self.stage.films.get(name) if self.stage else None
        return None if found is None else standing(found.position, found.facing)

    def classes(self, keys, chosen) -> tuple[dict, list]:
        """({character: its class (io Character) or None}, notes): each character's class as the
        level names it, else as `chosen` names it, read from the level files or an ONCC .oni beside."""
        found, notes, read = {}, [], {}
        for key in keys:
            name = chosen.get(key) or self.who(key)[0] or chosen.get("", "")
            found[key] = self._class(name, read) if name else None
            if name and found[key] is None:
                notes.append(f"character {key}: its class {name} is not in the level files")
        return found, notes

    def _class(self, name, read):
        for path in self.files + sorted(glob.glob(os.path.join(glob.escape(os.path.dirname(
                os.path.abspath(self.files[0]))), f"ONCC{glob.escape(name)}.oni"))):
            if path not in read:
                read[path] = _classes_in(path)
            if name in read[path]:
                return read[path][name]
        return None


def standing(position, facing) -> np.ndarray:
    """T(position) . RotY(facing): a character's base (docs/cutscenes.md 3.3)."""
    c, s = np.cos(facing), np.sin(facing)
    m = np.eye(4)
    m[:3, :3] = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
    m[:3, 3] = position
    return m


def _classes_in(path) -> dict:
    with open_library(path) as library:
        if library.main.first(ONCC_TAG) is None:
            return {}
        return {character.name: character for character in read_characters(path, library)}


def _dialogue_names(functions) -> list:
    """The lines the scripts may play: each literal first argument of a dialogue command."""
    names, pending = [], [f.body for f in functions]
    while pending:
        for statement in pending.pop():
            if isinstance(statement, If):
                pending += [statement.then, statement.otherwise]
            call = statement.call if isinstance(statement, Fork) else statement
            if isinstance(call, Call) and call.name in DIALOGUE and call.args and \
                    isinstance(call.args[0], (Literal, Name)):
                names.append(str(getattr(call.args[0], "value", getattr(call.args[0], "name", ""))))
    return list(dict.fromkeys(n for n in names if n not in ("", "pause")))


def _obans_played(timeline):
    return ({e.oban for e in timeline.camera} | {e.name for e in timeline.characters if e.kind == "envanim"}
            | {e.oban for e in timeline.objects if e.oban})


def _by_name(groups) -> dict:
    found = {}
    for group in groups:
        for item in group:
            found.setdefault(item.name, item)
    return found


def _frames(lookup):
    return lambda name: getattr(lookup(name), "frames", None)


def _placed_objects(level):
    with open_library(level) as library:
        return read_objects(level, library).objects if library.main.first(OBOA_TAG) is not None else []
