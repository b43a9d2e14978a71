"""Playing an OBAN as the engine does (docs/engine.md 3), one frame per tick, 60 ticks a second.

`Player` applies PHrPhysics_Update_Animation's rules one tick at a time; `engine_frames`
runs a Player to get the frames the importer bakes, so the bake rests on the simulator.
"""

from random import Random

import numpy as np

from ..io.oban.record import AUTOSTART, LOOP, PINGPONG, RANDOM_START


class Player:
    """One OBAN's playback state: `playing`, `frame`, `step` (+1 or -1), `stop_frame` (0: none).

    Where the rules leave room, the player does what the engine's code does:

    - `tick` returns True on the tick the animation ends by itself (the end or the stop
      frame reached with no Loop or PingPong to carry on), False on every other tick,
      including every tick of a loop or ping-pong and every tick while stopped.
      `playing` tells whether it is still playing.
    - AutoStart starts a stopped animation and moves it on the same tick, so the first
      frame shown is the start frame + 1 (1 without RandomStart). A plain AutoStart
      animation that ends starts again on the next tick: it never shows frame 0 again.
    - A stop frame is one more end, handled like the last frame: a ping-pong jumps to
      frames - 1 and turns back (and, being still at or past the stop frame, jumps there
      again on every tick: it stays on frames - 1), a loop goes back to 0, anything else
      stops on the stop frame.
    - `start` keeps the stop frame; `set_stop_frame` and `play_from` change it.
    """

    def __init__(self, frames: int, flags: int, random: Random | None = None):
        if frames < 1:
            raise ValueError(f"an animation needs at least one frame, not {frames}")
        self.frames = frames
        self.flags = flags
        self.random = random or Random()   # RandomStart draws from it unless start is given one
        self.playing = False
        self.frame = 0
        self.step = 1
        self.stop_frame = 0

    def start(self, random: Random | None = None) -> None:
        """OBrAnim_Start: forwards from frame 0, or with RandomStart from a frame in
        [0, frames) drawn from `random` (default: the player's own)."""
        self.frame = (random or self.random).randrange(self.frames) if self.flags & RANDOM_START else 0
        self.step = 1
        self.playing = True

    def stop(self) -> None:
        """OBrAnim_Stop: stop playing, the frame clamped into [0, frames - 1]."""
        self.frame = min(max(self.frame, 0), self.frames - 1)
        self.playing = False

    def set_stop_frame(self, stop_frame: int) -> None:
        """Make `stop_frame` one more end of the animation (0: none)."""
        if stop_frame < 0:
            raise ValueError(f"stop frame {stop_frame} is negative")
        self.stop_frame = stop_frame

    def play_from(self, frame: int, stop_frame: int = 0) -> None:
        """OBrSetAnimation, as doors use it: start, then go on from `frame` up to `stop_frame`.
        A door opens with play_from(0, door_open_frame) and closes with
        play_from(door_open_frame): on to the last frame."""
        if not 0 <= frame < self.frames:
            raise ValueError(f"frame {frame} is outside [0, {self.frames})")
        self.start()
        self.frame = frame
        self.set_stop_frame(stop_frame)

    def tick(self) -> bool:
        """One engine tick (1/60 s). True if the animation ended on this tick."""
        if not self.playing and self.flags & AUTOSTART:
            self.start()
        if not self.playing:
            return False
        self.frame += self.step
        ended = False
        if self.frame >= self.frames or (self.stop_frame and self.frame >= self.stop_frame):
            if self.flags & PINGPONG:
                self.frame, self.step = self.frames - 1, -1
            elif self.flags & LOOP:
                self.frame = 0
            else:
                self.stop()
                ended = True
        if self.frame < 0:
            if self.flags & PINGPONG:
                self.frame, self.step = 0, 1
            else:
                self.stop()
                ended = True
        return ended


def engine_frames(frames: int, flags: int, start_frame: int = 0) -> tuple[list[int], int | None]:
    """(sequence, period): the frame shown on each tick of the engine playing freely
    from `start_frame`, no stop frame; sequence[i] is shown i ticks after the start.

    Loop: period frames, start_frame..frames-1, 0..start_frame-1. PingPong: period
    2 * frames, 0..frames-1, frames-1..0 begun at start_frame (each end shown twice).
    Neither: start_frame..frames-1, after which the last frame holds (period None).
    Only Loop and PingPong are played: RandomStart is what `start_frame` stands for, and
    AutoStart (which would restart an ended plain animation) is left to whoever starts it.
    The sequence ends where a Player's state comes back to where it began, or stops.
    """
    player = Player(frames, flags & (LOOP | PINGPONG))
    player.play_from(start_frame)
    sequence = [start_frame]
    while True:
        player.tick()
        if not player.playing:
            return sequence, None
        if (player.frame, player.step) == (start_frame, 1):
            return sequence, len(sequence)
        sequence.append(player.frame)


def random_start_frame(frames: int, seed) -> int:
    """The frame a RandomStart animation starts on, drawn with random.Random(seed)."""
    player = Player(frames, RANDOM_START)
    player.start(Random(seed))
    return player.frame


def value_at(times: np.ndarray, columns: np.ndarray, time: float) -> np.ndarray:
    """The LINEAR blend of key rows at `time` (the ends held), as Blender evaluates them."""
    return np.array([np.interp(time, times, column) for column in columns.T])


def engine_keys(times: np.ndarray, columns: np.ndarray, frames: int, flags: int,
                start_frame: int = 0) -> tuple[np.ndarray, np.ndarray, int | None]:
    """(times, columns, period): keys at OBAN frames `times` (rows `columns`, blended
    LINEAR) laid out on ticks as the engine plays them from `start_frame` (docs/engine.md 3),
    tick 0 showing `start_frame`; with a period, the keys repeat with it (a Cycles modifier).

    Keys past frames - 1, which the engine never shows, give way to one key there (what they
    blend to). Loop: the keys, a key at 0 and at frames - 1 where the ends hold, and a closing
    key at frames equal to frame 0. PingPong: those forward keys, then their mirror (frame k on
    tick 2 frames - 1 - k), then frame 0 again at 2 frames. Neither: one key at `start_frame`
    (the key there, or their blend), then the later keys; the last holds. One key a time,
    increasing; the times are shifted by -start_frame.
    """
    last = frames - 1.0
    if times[-1] > last:
        kept = times < last
        columns = np.concatenate([columns[kept], value_at(times, columns, last)[None]])
        times = np.append(times[kept], last)
    if flags & (LOOP | PINGPONG):
        ends = [t for t in (0.0, last) if t not in times]
        columns = np.concatenate([columns] + [value_at(times, columns, t)[None] for t in ends])
        times = np.concatenate([times, ends])
        order = np.argsort(times, kind="stable")
        times, columns = times[order], columns[order]
        if flags & PINGPONG:
            times = np.concatenate([times, 2.0 * frames - 1.0 - times[::-1]])
            columns = np.concatenate([columns, columns[::-1]])
        period = 2 * frames if flags & PINGPONG else frames
        times = np.append(times, float(period))
        columns = np.concatenate([columns, columns[:1]])
    else:
        period = None
        if start_frame:
            later = times > start_frame
            columns = np.concatenate([[value_at(times, columns, start_frame)], columns[later]])
            times = np.concatenate([[float(start_frame)], times[later]])
    return times - start_frame, columns, period
