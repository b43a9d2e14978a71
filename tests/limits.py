"""The time and memory of one read, for the tests' limits (tests/test_fuzz.py,
tests/test_objects_fuzz.py, tests/test_xml.py, tests/test_outpost2.py, tests/test_keys.py,
tools/fuzz.py).

A run over its time limit is timed again, best of RETIMES runs: a shared machine can stall
one run several times over (seen on CI: 1.38 s for a read that takes 0.2 s). A call that is
slow every time still fails."""

import time
import tracemalloc

from oban_import.errors import ObanError

RETIMES = 3


def seconds_of(call):
    """How long call() takes; an ObanError it raises is the caller's to check, on its own run."""
    start = time.perf_counter()
    try:
        call()
    except ObanError:
        pass
    return time.perf_counter() - start


def retimed(seconds, call, limit):
    """`seconds` of a first run of call(), or where that is `limit` or more, the best of
    RETIMES more runs."""
    if seconds < limit:
        return seconds
    return min(seconds_of(call) for _ in range(RETIMES))


def measured(call, seconds_limit):
    """(what call() returns, or the ObanError it raises; its seconds; its tracemalloc peak in
    bytes). Anything else propagates. If tracemalloc is already tracing (the long run starts
    it once: starting and stopping it for every input makes the process grow), only the
    peak is reset. A traced call of `seconds_limit` or more is retimed (tracing slows
    allocation; the retimes are untraced unless tracing was already on)."""
    tracing = tracemalloc.is_tracing()
    if tracing:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    try:
        outcome = call()
    except ObanError as error:
        outcome = error
    finally:
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] - before
        if not tracing:
            tracemalloc.stop()
    return outcome, retimed(seconds, call, seconds_limit), peak
