"""Every tick's matrices and visibility of a timeline (docs/cutscenes.md 2-4): the camera,
each character's base, each scripted object, each scripted group of environment quads.
What a name means comes from a Cast (the level's); matrices are Oni's 4x4. No bpy."""

from dataclasses import dataclass, field

import numpy as np

from ...io.oban.record import AUTOSTART, LOCALIZED, matrix_from_columns
from ..frames import frame_matrices, sample_keys
from .play import ENVANIM_TURN, camera_track, envanim_frames, held_over, last_on_tick, shown_frames, spans
from .timeline import ObjectEvent


@dataclass(frozen=True)
class Cast:
    """What the level gives the names a timeline uses (each lookup None where it has none)."""
    oban: object = lambda name: None          # name -> Animation
    character: object = lambda key: None      # "0" or a name -> its base matrix at the start (4x4), None: unknown
    flag: object = lambda name: None          # a flag's id or name -> its matrix (4x4)
    film: object = lambda name: None          # a film's name -> its start matrix (4x4)
    placed: object = lambda script_id: []     # script id -> [PlacedObject]
    spawned: object = lambda key: True        # whether the character is in the level from its start


@dataclass
class Tracks:
    length: int
    camera: np.ndarray                                   # (T, 4, 4)
    camera_held: np.ndarray                              # (T,) bool: no known animation places it
    bases: dict = field(default_factory=dict)            # character -> (T, 4, 4)
    shown: dict = field(default_factory=dict)            # character -> (T,) bool
    actions: dict = field(default_factory=dict)          # character -> [(tick, TRAM name, frames asked or None)]
    objects: dict = field(default_factory=dict)          # (script id, setup index) -> (T, 4, 4)
    objects_shown: dict = field(default_factory=dict)    # (script id, setup index) -> (T,) bool
    quads_shown: dict = field(default_factory=dict)      # script id -> (T,) bool
    # the events each track's spans start from, in tick order: "camera", ("base", character),
    # ("object", (script id, setup index)) -> [event] (an export keeps those the scene still plays)
    starts: dict = field(default_factory=dict)


def tracks(timeline, cast: Cast) -> Tracks:
    length = timeline.length
    every = _every_frame()
    camera, held = camera_track(timeline.camera, length, lambda name: every(cast.oban(name)))
    result = Tracks(length, camera, held, starts={"camera": last_on_tick(timeline.camera, length)})
    for key in dict.fromkeys(e.character for e in timeline.characters):
        events = [e for e in timeline.characters if e.character == key]
        result.bases[key], result.starts["base", key] = _base(events, cast, length, key)
        result.shown[key] = _switched([(e.tick, e.kind == "spawn") for e in events if e.kind in ("spawn", "delete")],
                                      length, cast.spawned(key))
        result.actions[key] = [(e.tick, e.name, e.frames) for e in events if e.kind == "animate"]
    _objects(timeline.objects, cast, length, result, every)
    for script_id in dict.fromkeys(e.id for e in timeline.shows):
        result.quads_shown[script_id] = _switched([(e.tick, e.shown) for e in timeline.shows if e.id == script_id],
                                                  length, True)
    return result


def _every_frame():
    """animation (or None) -> its matrices at every frame (or None), each worked once (for this
    timeline's tracks)."""
    cache = {}

    def every(animation):
        if animation is None:
            return None
        if id(animation) not in cache:
            cache[id(animation)] = (animation, frame_matrices(animation))
        return cache[id(animation)][1]
    return every


def _switched(changes, length, start):
    """(T,) bool from `start`, each (tick, state) change holding from its tick."""
    shown = np.full(length, start)
    for tick, state in changes:
        shown[tick:] = state
    return shown


def _base(events, cast, length, key):
    """A character's base on each tick (docs/cutscenes.md 3): where the level sets it up; each
    chr_envanim's box OBAN (x RotX(+90°); norotation: its position and base alone) from frame 1,
    and from the tick it ends the last position with the facing it had before; chr_teleport's
    flag position (facing kept); playback's film start (position unless fromhere, facing);
    held between (before any, the first placed). And the events that place it."""
    base = np.tile(np.eye(4), (length, 1, 1))
    held = np.ones(length, bool)
    start = cast.character(key)
    current = np.eye(4) if start is None else np.asarray(start, np.float64)
    scale = float(np.linalg.norm(current[:3, 0]))   # the character's, in its base at the start (3.3)
    placing = [e for e in events if e.kind in ("envanim", "teleport", "playback")]
    for event, (begin, end) in zip(placing, spans(np.array([e.tick for e in placing], int), length)):
        if end <= begin:
            continue
        if event.kind == "envanim":
            placed, current = _envanim(cast.oban(event.name), event.norotation, end - begin, current, scale)
            if placed is None:
                continue
            base[begin:end] = placed
        else:
            matrix = (cast.flag if event.kind == "teleport" else cast.film)(event.name)
            if matrix is None:
                continue
            current = current.copy()
            if event.kind == "playback":
                current[:3, :3] = matrix[:3, :3]
            if event.kind == "teleport" or event.mode != "fromhere":
                current[:3, 3] = matrix[:3, 3]
            base[begin:end] = current
        held[begin:end] = False
    if start is not None:
        first = np.argmin(held) if not held.all() else length
        base[:first] = start
        held[:first] = False
    return base[held_over(held)], placing


def _envanim(animation, norotation, span, before, scale):
    """(the base on each of `span` ticks from a chr_envanim's, the base after it) or (None, before):
    M(f).RotX(+90°).S(scale), or T(p).Base.S(scale) with norotation (3.5)."""
    if animation is None:
        return None, before
    running = min(span, max(animation.frames - 2, 0))
    frames = envanim_frames(running, animation.frames)
    if norotation:
        position, _ = sample_keys(animation, frames)
        placed = np.tile(matrix_from_columns(animation.base_matrix), (running, 1, 1))
        placed[:, :3, 3] += position
    else:
        placed = frame_matrices(animation, frames) @ ENVANIM_TURN
    placed[:, :3, :3] *= scale
    after = before.copy()
    if running:
        after[:3, 3] = placed[-1, :3, 3]
    return np.concatenate([placed, np.tile(after, (span - running, 1, 1))]), after


def _objects(events, cast, length, result, every):
    """Each placed object a script id of the timeline names (docs/cutscenes.md 4): one the function
    creates is hidden until its obj_create; from obj_kill hidden again; its setup OBAN held at
    frame 0 until env_anim or env_setanim starts one (frame 1 on that tick), or from its
    creation where the OBAN has Autostart."""
    ids = dict.fromkeys(i for e in events for i in range(e.first, e.last + 1))
    for script_id in ids:
        touching = [e for e in events if e.first <= script_id <= e.last]
        shows = [(e.tick, e.kind == "create") for e in touching if e.kind in ("create", "kill")]
        created = next((tick for tick, shown in shows if shown), None)
        exists = _switched(shows, length, created is None)
        starts = [e for e in touching if e.kind in ("anim", "setanim") and e.tick < length
                  and exists[e.tick]]   # none moves what is not there (4.3)
        autostart = [ObjectEvent(created, "anim", script_id, script_id)] \
            if created is not None and not any(e.tick <= created for e in starts) else []
        for placed in cast.placed(script_id):
            started = autostart + starts if placed.animation is not None and placed.animation.has(AUTOSTART) \
                else starts
            result.objects[(script_id, placed.setup)] = _object_track(placed, started, cast, length, every)
            result.starts["object", (script_id, placed.setup)] = started
            result.objects_shown[(script_id, placed.setup)] = exists


def _object_track(placed, starts, cast, length, every):
    origin = matrix_from_columns(placed.origin)
    animation = placed.animation
    track = np.tile(origin if animation is None else _object_matrices(animation, origin, [0], every(animation))[0],
                    (length, 1, 1))
    for event, (begin, end) in zip(starts, spans(np.array([e.tick for e in starts], int), length)):
        if event.kind == "setanim":
            animation = cast.oban(event.oban) or animation
        if animation is None or end <= begin:
            continue
        track[begin:end] = _object_matrices(animation, origin, shown_frames(end - begin, animation.frames,
                                                                            animation.flags), every(animation))
    return track


def _object_matrices(animation, origin, frames, every):
    """The object's matrix at `frames` of its OBAN (`every`: its matrices at every frame): the
    OBAN's own, origin . M for a Localized one."""
    matrices = every[np.asarray(frames)]
    return origin @ matrices if animation.has(LOCALIZED) else matrices
