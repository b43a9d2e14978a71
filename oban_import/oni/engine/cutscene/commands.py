"""What each command a cutscene uses does to the timeline, and when a stalling one passes
(docs/cutscenes.md 2-7). `State` holds what the scheduler needs between statements: when
the camera, each character and object, and the dialogue are free again. No bpy."""

from dataclasses import dataclass, field

from ....core.errors import ObanError
from .timeline import CameraEvent, CharacterEvent, Marker, ObjectEvent, ShowEvent

DIALOGUE_UNSTARTED_TICKS = 120      # a line whose sound has no length and does not start (docs/cutscenes.md 5.2)
WAIT_ONLY = ("", "pause")           # sound_dialog_play_block's arguments that start no line (5.1)
SCREEN = frozenset({"fade_in", "fade_out", "letterbox", "begin_cutscene", "end_cutscene"})
# Waits on what only the running game knows: listed, and passed at once.
WAITS_ON_GAME = frozenset({"chr_wait_animation", "chr_wait_animtype", "chr_wait_health", "ai2_dopath_block",
                           "ai2_movetoflag_block", "ai2_lookatchar_block", "trig_wait", "trigvolume_wait",
                           "chr_wait_for_animation", "sound_music_wait"})
# Move characters in ways only the running game knows (AI, films after their first frame).
GAME_MOVES = ("ai2_", "chr_forceholster", "chr_givepowerup", "chr_mode", "chr_neutral", "chr_lock_active")


@dataclass
class State:
    timeline: object = None
    camera_free: int = 0                                     # the tick from which cm_wait passes
    busy: dict = field(default_factory=dict)                 # (kind, target) -> tick it is free
    dialogue_free: int = 0
    playing: dict = field(default_factory=dict)              # (kind, character) -> the tick after its last shown
    names: object = None                                     # schedule.Names, for lengths

    def stalls(self, command: str) -> bool:
        return command in STALLS or command in WAITS_ON_GAME

    def passes(self, call, now: int, args: list) -> int:
        """The tick a stalling `call` passes if nothing else changes."""
        kind = STALLS.get(call.name)
        if kind is None:
            return now
        return max(now, kind(self, args))

    def start(self, call, now: int, args: list, where) -> int:
        """What `call` does on tick `now` (after it passed, if it stalls); the ticks its script
        then sleeps (playback_block's film), else 0."""
        handler = COMMANDS.get(call.name)
        if handler is not None:
            return handler(self, now, args, where) or 0
        if call.name in WAITS_ON_GAME or call.name.startswith(GAME_MOVES):
            self.timeline.markers.append(Marker(now, _text(call.name, args), "unknown", where))
        else:
            self.timeline.ignored[call.name] = self.timeline.ignored.get(call.name, 0) + 1
        return 0

    def end(self, now: int) -> int:
        """The tick after the last one the camera's and characters' animations still play."""
        return max(now + 1, self.camera_free, *self.playing.values())

    # -- lengths

    def frames(self, kind, name, now, where):
        """Frames of OBAN (kind "oban") or TRAM `name`, None (listed missing) where the level has none."""
        count = (self.names.oban_frames if kind == "oban" else self.names.tram_frames)(name)
        if count is None:
            self.timeline.missing.append((now, kind, name, where))
        elif count <= 0:
            raise ObanError(where.file, f"line {where.line}: {kind.upper()} {name} has no frames")
        return count


def who(value) -> str:
    """A character as the engine reads a parameter: an integer (or a string of one) is a script
    id ("0": the player), anything else a name (docs/cutscenes.md 3.1)."""
    try:
        return str(int(str(value)))
    except ValueError:
        return str(value)


def _objects_free(state, args, last_at):
    """The tick every object of the ids addressed is free: its OBAN's frame + 1 >= frames (4.4)."""
    try:
        first = int(_arg(args, 0, 0))
        last = int(_arg(args, last_at, first)) if last_at else first
    except (TypeError, ValueError):
        return 0   # passes: the command itself then names what is not a number
    return max((state.busy.get(("object", i), 0) for i in range(first, last + 1)), default=0)


def _text(name, args):
    return " ".join([name, *map(str, args)])


def _arg(args, i, default=None):
    return args[i] if i < len(args) else default


def _int(args, i, where, default=None):
    value = _arg(args, i, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ObanError(where.file, f"line {where.line}: {value!r} is not a number") from None


# -- the camera (docs/cutscenes.md 2)

def _cm_anim(state, now, args, where):
    oban = str(_arg(args, 1 if len(args) > 1 else 0, ""))
    frames = state.frames("oban", oban, now, where)
    state.timeline.camera.append(CameraEvent(now, "anim", oban, where=where))
    state.camera_free = now + frames - 1 if frames else now


def _cm_interpolate(state, now, args, where):
    oban, ticks = str(_arg(args, 0, "")), _int(args, 1, where, 0)
    state.frames("oban", oban, now, where)
    state.timeline.camera.append(CameraEvent(now, "interpolate", oban, max(ticks, 0), where=where))
    state.camera_free = now + max(ticks, 1)


def _cm_reset(state, now, args, where):
    state.timeline.camera.append(CameraEvent(now, "reset", where=where))
    state.camera_free = now


# -- characters (docs/cutscenes.md 3)

def _chr_envanim(state, now, args, where):
    character, oban = who(_arg(args, 0, "")), str(_arg(args, 1, ""))
    norotation = str(_arg(args, 2, "")).lower() == "norotation"
    frames = state.frames("oban", oban, now, where)
    state.timeline.characters.append(CharacterEvent(now, character, "envanim", oban, norotation, where=where))
    state.busy[("envanim", character)] = now + frames - 2 if frames else now   # its frame + 1 < frames (3.5)
    state.playing[("envanim", character)] = state.busy[("envanim", character)]


def _chr_animate(state, now, args, where):
    character, tram = who(_arg(args, 0, "")), str(_arg(args, 1, ""))
    asked = _int(args, 2, where) if len(args) > 2 else None
    frames = state.frames("tram", tram, now, where)
    state.timeline.characters.append(CharacterEvent(now, character, "animate", tram, frames=asked, where=where))
    state.busy[("animate", character)] = now + asked if asked and asked > 0 else now   # its hold (3.4)
    shown = asked if asked and asked > 0 else (frames or 1) - 1    # frames 1 .. F - 1, or N ticks round
    state.playing[("animate", character)] = now + max(shown, 1)


def _character_event(kind):
    def handler(state, now, args, where):
        state.timeline.characters.append(CharacterEvent(now, who(_arg(args, 0, "")), kind,
                                                        str(_arg(args, 1, "")), mode=str(_arg(args, 2, "")),
                                                        where=where))
        if kind == "playback":
            if state.names.film_frames(str(_arg(args, 1, ""))) is None:
                state.timeline.missing.append((now, "film", str(_arg(args, 1, "")), where))
            state.timeline.markers.append(Marker(now, _text("playback", args) + ": the film after its start",
                                                 "unknown", where))
    return handler


def _playback_block(state, now, args, where):
    """playback_block: the film started, then a sleep of its length (docs/cutscenes.md 3.7)."""
    _character_event("playback")(state, now, args, where)
    return state.names.film_frames(str(_arg(args, 1, ""))) or 0


# -- objects and the environment (docs/cutscenes.md 4)

def _objects(kind):
    def handler(state, now, args, where):
        first = _int(args, 0, where)
        last = _int(args, 1, where) if kind != "setanim" and len(args) > 1 else first
        oban = str(_arg(args, 1, "")) if kind == "setanim" else ""
        frames = state.frames("oban", oban, now, where) if oban else None
        state.timeline.objects.append(ObjectEvent(now, kind, first, last, oban, where))
        for script_id in range(first, last + 1) if kind in ("anim", "setanim") else ():
            count = frames if kind == "setanim" else state.names.object_frames(script_id)
            state.busy[("object", script_id)] = now + count - 1 if count else now   # its frame + 1 < frames (4.4)
    return handler


def _env_show(state, now, args, where):
    state.timeline.shows.append(ShowEvent(now, _int(args, 0, where), bool(_int(args, 1, where, 1)), where))


# -- dialogue and markers (docs/cutscenes.md 5-6)

def _dialogue(state, now, args, where):
    """A line starts if none is playing (else it is dropped); one the level lacks plays nothing (5.1-5.2)."""
    name = str(_arg(args, 0, ""))
    if now < state.dialogue_free:
        state.timeline.notes.append(f"tick {now}: dialogue {name}: dropped, as the engine drops it: a line is "
                                    f"playing until tick {state.dialogue_free} ({where})")
        return
    ticks = state.names.dialogue_ticks(name)
    if ticks is None:
        state.timeline.missing.append((now, "sound", name, where))
        return
    if ticks <= 0:
        ticks = DIALOGUE_UNSTARTED_TICKS
        state.timeline.notes.append(f"tick {now}: dialogue {name}: its sound has no length: {ticks} ticks, as the "
                                    "engine waits for a line that does not start")
    state.timeline.markers.append(Marker(now, f"dialogue {name} ({ticks} ticks)", "dialogue", where))
    state.dialogue_free = now + ticks


def _dialogue_block(state, now, args, where):
    if str(_arg(args, 0, "")) not in WAIT_ONLY:
        _dialogue(state, now, args, where)


def _screen(name):
    def handler(state, now, args, where):
        state.timeline.markers.append(Marker(now, _text(name, args), "screen", where))
    return handler


COMMANDS = {
    "cm_anim": _cm_anim, "cm_anim_block": _cm_anim,
    "cm_interpolate": _cm_interpolate, "cm_interpolate_block": _cm_interpolate,
    "cm_reset": _cm_reset, "cm_wait": lambda *a: None,
    "chr_envanim": _chr_envanim, "chr_envanim_block": _chr_envanim,
    "chr_animate": _chr_animate, "chr_animate_block": _chr_animate,
    "chr_teleport": _character_event("teleport"), "playback": _character_event("playback"),
    "playback_block": _playback_block,
    "ai2_spawn": _character_event("spawn"), "chr_create": _character_event("spawn"),
    "chr_delete": _character_event("delete"),
    "env_anim": _objects("anim"), "env_anim_block": _objects("anim"),
    "env_setanim": _objects("setanim"), "env_setanim_block": _objects("setanim"),
    "obj_create": _objects("create"), "obj_kill": _objects("kill"),
    "env_show": _env_show,
    "sound_dialog_play": _dialogue, "sound_dialog_play_block": _dialogue_block,
    **{name: _screen(name) for name in SCREEN},
}

STALLS = {   # a stalling command -> the tick it passes
    "cm_anim_block": lambda state, args: state.camera_free,
    "cm_interpolate_block": lambda state, args: state.camera_free,
    "cm_wait": lambda state, args: state.camera_free,
    "chr_envanim_block": lambda state, args: state.busy.get(("envanim", who(_arg(args, 0, ""))), 0),
    "chr_animate_block": lambda state, args: state.busy.get(("animate", who(_arg(args, 0, ""))), 0),
    "env_anim_block": lambda state, args: _objects_free(state, args, 1 if len(args) > 1 else 0),
    "env_setanim_block": lambda state, args: _objects_free(state, args, 0),
    "sound_dialog_play_block": lambda state, args: state.dialogue_free,
}
