"""What of an imported cutscene the scene still plays as it was (docs/cutscenes.md 11.3): a
track's spans, each started by an event of the cutscene it was imported from, kept — that
event's statement written again, its OBAN as read — from their tick for as long as the scene
shows what they played; the rest of a span, and every span after one not kept whole that plays
on from it, written anew. No bpy."""

from dataclasses import dataclass

import numpy as np

from ...engine.cutscene.play import last_on_tick


@dataclass(frozen=True)
class Piece:
    """Ticks begin .. end - 1 of a track: kept (`statement` the original's, "" where it writes
    nothing; `oban` the OBAN it plays, "" none) or, with `statement` None, to write anew."""
    begin: int
    end: int
    statement: str | None
    oban: str = ""


def pieces(same, starts, length) -> list:
    """A track's pieces over `length` ticks. `same` (length,): whether the scene shows on each
    tick what the original did; `starts`: (tick, statement, oban, plays on) of each span of the
    original, in tick order (statement "": it writes nothing there; plays on: what it shows
    follows from the spans before, so it is kept only after spans all kept whole)."""
    if not starts or starts[0][0] > 0:
        starts = [(0, "", "", False), *starts]
    ends = [tick for tick, *_ in starts[1:]] + [length]
    out, whole = [], True
    for (tick, statement, oban, plays_on), end in zip(starts, ends):
        end = min(end, length)
        if end <= tick:
            continue
        differs = np.flatnonzero(~same[tick:end])
        run = 0 if plays_on and not whole else int(differs[0]) if len(differs) else end - tick
        if run:
            out.append(Piece(tick, tick + run, statement, oban))
        if run < end - tick:
            if out and out[-1].statement is None and out[-1].end == tick + run:
                out[-1] = Piece(out[-1].begin, end, None)
            else:
                out.append(Piece(tick + run, end, None))
        whole = run == end - tick
    return out


def anew(length) -> list:
    """A track with nothing kept."""
    return [Piece(0, length, None)]


def camera_starts(events, length, found) -> list:
    """pieces()'s starts of the camera's track from its events (`found`: whether the level has
    an OBAN): a shot whose OBAN is missing held the view before it."""
    starts = []
    for event in last_on_tick(events, length):
        if event.kind == "reset":
            starts.append((event.tick, "cm_reset", "", True))
        elif not found(event.oban):
            starts.append((event.tick, "", "", True))
        elif event.kind == "anim":
            starts.append((event.tick, f"cm_anim both {event.oban}", event.oban, False))
        else:
            starts.append((event.tick, f"cm_interpolate {event.oban} {event.ticks}", event.oban, True))
    return starts


def base_starts(events, key, length, found) -> list:
    """pieces()'s starts of a character's base from the events that placed it."""
    starts = []
    for event in last_on_tick(events, length):
        if event.kind == "envanim":
            starts.append((event.tick, f"chr_envanim {key} {event.name}{' norotation' * event.norotation}",
                           event.name, False) if found(event.name) else (event.tick, "", "", True))
        elif event.kind == "teleport":
            starts.append((event.tick, f"chr_teleport {key} {event.name}", "", True))
        else:
            starts.append((event.tick, f"playback {key} {event.name} {event.mode}".rstrip(), "", True))
    return starts


def object_starts(events, script_id, length, found) -> list:
    """pieces()'s starts of a placed object's track from the events that started its OBAN (one
    with no place in the script, its Autostart on obj_create, writes nothing)."""
    starts = []
    for event in last_on_tick(events, length):
        if event.where is None:
            starts.append((event.tick, "", "", True))
        elif event.kind == "setanim":
            starts.append((event.tick, f"env_setanim {script_id} {event.oban}", event.oban, False)
                          if found(event.oban) else (event.tick, "", "", True))
        else:
            starts.append((event.tick, f"env_anim {script_id}", "", True))
    return starts
