"""The fewest keys by greedy furthest reach: the search both exporters' key fitting shares
(fit_keys for an OBAN, fit_tram for a TRAM's parts, docs/characters.md "Writing a motion back" 2).

From each key, the next is the furthest end whose whole segment passes a format's check.
First probes: the ends 2, 4, 8 and 16 frames on, and the next kinks (frames where the motion
breaks, such as an original animation's keys: the error is not monotone in a segment's length,
and a segment to such a key can pass where shorter ones fail). Then the reach doubles while
probes pass, or narrows between the furthest passing and the nearest failing end. Where keys
come dense, the first probes of the next starts are measured in one batch. The next frame is
always taken to pass, so a check finer than the keys can hold gives a key on every frame.
"""

from dataclasses import dataclass

import numpy as np

PROBES = 4                # ends tried per round: doublings, kinks (twice as many narrowing)
DENSE = 4                 # keys at most this far apart: batch the first probes of the next starts,
MAX_AHEAD = 256           # up to this many


@dataclass
class Tally:
    """What a key search measured: the segments it probed, and the frames replayed to judge them
    (counted by the format's check where it counts them: fit_keys')."""
    segments: int = 0
    frames: int = 0


def furthest_reach_keys(count: int, kinks: np.ndarray, passes, max_gap: int | None = None, dead_ends: bool = False,
                        tally: Tally | None = None) -> np.ndarray:
    """Sorted frames of the keys among `count` frames (first 0, last count - 1), each the furthest
    end from the one before (at most `max_gap` on) whose segment passes.

    passes(starts, ends) -> bool per segment (int64 arrays, each start before its end). `kinks`:
    the frames where the motion breaks, sorted, the last frame among them (see `kinks`). With
    `dead_ends`, where a kink short of the furthest end passes too, the one of the two that
    reaches further with one more key is taken (the kink if as far): in a motion made from keys,
    the nlerp from a frame between them does not retrace the motion's own keys, so the furthest
    end can lead nowhere. `tally` is added what the search measures.
    """
    reaches = _Reaches(count, kinks, passes, count if max_gap is None else max_gap, dead_ends, tally)
    last, chosen = count - 1, [0]
    while chosen[-1] < last:
        end, kink = reaches[chosen[-1]]
        if 0 <= kink < end < last and reaches[kink][0] >= reaches[end][0]:
            end = kink
        reaches.ahead = min(2 * reaches.ahead, MAX_AHEAD) if end - chosen[-1] <= DENSE else 1
        chosen.append(end)
    return np.array(chosen)


def kinks(count, breaks):
    """The frames among `count` where the motion breaks (breaks(): a bool for each of frames 1
    to count - 2, asked only where there are such frames), and the last frame."""
    if count < 3:
        return np.array([count - 1])
    return np.append(1 + np.flatnonzero(breaks()), count - 1)


def stands_out(values):
    """Where a value is more than twice the smaller of its neighbours'."""
    neighbours = np.pad(values, 1, mode="edge")
    return values > 2 * np.minimum(neighbours[:-2], neighbours[2:])


class _Reaches(dict):
    """{start: (the furthest end that passes, the furthest kink seen to pass or -1)}, measured when
    first asked for; the first probes of the next `ahead` starts are measured in one batch."""

    def __init__(self, count, kinks, passes, max_gap, dead_ends, tally):
        super().__init__()
        self.last, self.kinks, self.passes, self.max_gap = count - 1, kinks, passes, max_gap
        self.dead_ends, self.tally, self.ahead, self.first = dead_ends, tally, 1, {}

    def __missing__(self, start):
        if start not in self.first:
            self.first = self._first_probes(np.arange(start, min(start + self.ahead, self.last)))
        reach, passed = _furthest_passing(start, self._top(start), *self.first[start],
                                          lambda ends: self._measure(np.full(len(ends), start), ends))
        kink = int(max(np.intersect1d(passed, self.kinks), default=-1)) if self.dead_ends else -1
        self[start] = reach, kink
        return self[start]

    def _first_probes(self, starts):
        """{start: (ends, passes)} for the first probes of each start: 2, 4, 8 and 16 frames on,
        and the next kinks."""
        ends = [np.union1d(_doubled_ends(start, start + 1, self._top(start)), self._next_kinks(start))
                for start in starts]
        counts = [len(e) for e in ends]
        ok = self._measure(np.repeat(starts, counts), np.concatenate(ends))
        return dict(zip(starts.tolist(), zip(ends, np.split(ok, np.cumsum(counts)[:-1]))))

    def _top(self, start):
        """The furthest a key from `start` may go."""
        return min(start + self.max_gap, self.last)

    def _next_kinks(self, start):
        """The next PROBES kinks past start + 1, as far as a key from `start` may go."""
        kinks = self.kinks[np.searchsorted(self.kinks, start + 1, "right"):][:PROBES]
        return kinks[kinks <= self._top(start)]

    def _measure(self, starts, ends):
        if self.tally is not None:
            self.tally.segments += len(ends)
        return self.passes(starts, ends)


def _furthest_passing(start, top, ends, ok, passes):
    """(the furthest end from `start`, at most `top`, whose segment passes; every end seen to
    pass), from the first probes' `ends` and whether they pass (`ok`): doubling while probes
    pass, then narrowing between the furthest passing and the nearest failing end.
    passes(ends) -> bool per end."""
    reach, fails, passed = start + 1, top + 1, [ends[ok]]   # furthest passing end; nearest failing above it
    while True:
        if ok.any():
            reach = max(reach, int(ends[ok].max()))
        fails = min([fails] + [int(e) for e in ends[~ok] if e > reach])
        if fails > top:
            ends = _doubled_ends(start, reach, top)
        else:
            ends = np.unique(np.linspace(reach, fails, 2 * PROBES + 2).round().astype(np.int64))
        ends = ends[(ends > reach) & (ends < fails)]
        if not ends.size:
            return reach, np.concatenate(passed)
        ok = passes(ends)
        passed.append(ends[ok])


def _doubled_ends(start, reach, last):
    """Ends reaching 2, 4, ... 2 ** PROBES times as far from `start` as `reach`, up to `last`."""
    return np.unique(np.minimum(start + (reach - start) * 2 ** np.arange(1, PROBES + 1), last))
