"""The time and memory of one read, for the fuzz tests' limits (tests/test_fuzz.py,
tests/test_objects_fuzz.py, tools/fuzz.py)."""

import time
import tracemalloc

from oban_import.errors import ObanError

RETIMES = 3


def measured(call, seconds_limit):
    """(what call() returns, or the ObanError it raises; its seconds; its tracemalloc peak in
    bytes). Anything else propagates. If tracemalloc is already tracing (the long run starts
    it once: starting and stopping it for every input makes the process grow), only the
    peak is reset. A call of `seconds_limit` or more is timed again untraced (tracing slows
    allocation), best of RETIMES runs: a shared machine can stall one run several times over
    (seen on CI: 1.38 s for a read that takes 0.2 s)."""
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
    if seconds >= seconds_limit:
        seconds = min(_untraced_seconds(call) for _ in range(RETIMES))
    return outcome, seconds, peak


def _untraced_seconds(call):
    start = time.perf_counter()
    try:
        call()
    except ObanError:
        pass
    return time.perf_counter() - start
