"""Work too big for one go cut into runs of consecutive items: each run is worked out in a few
array operations (numpy's cost per call paid once a run), its arrays bounded by a summed size."""

import bisect
import itertools


def bounded_runs(sizes, limit, keys=None) -> list[slice]:
    """Slices of consecutive items, in order, covering them all: each run's `sizes` (one
    non-negative number an item) sum to at most `limit`, but for an item larger than it,
    which is a run on its own; with `keys` (one an item), a run also ends where the key
    changes, so that it holds one key."""
    ends = list(itertools.accumulate(sizes, initial=0))
    count = len(ends) - 1
    changes = [] if keys is None else [i for i, (a, b) in enumerate(itertools.pairwise(keys), 1) if a != b]
    changes.append(count)
    runs, start = [], 0
    while start < count:
        fits = bisect.bisect_right(ends, ends[start] + limit, start + 1) - 1   # the most items within limit
        end = min(max(fits, start + 1), changes[bisect.bisect_right(changes, start)])
        runs.append(slice(start, end))
        start = end
    return runs
