"""What every benchmark here measures with: an empty scene on freshly trimmed memory, an
F-curve's keys read back, the peak RSS of a phase, silenced C output, Blender's user folders
in a scratch folder, profile labels, the rounds, the best-round table, the requirement
lines, and the exit without teardown."""

import contextlib
import ctypes
import gc
import os
import re
import resource
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_libc = None


def _call_libc(name, *args):
    global _libc
    try:
        _libc = _libc or ctypes.CDLL("libc.so.6")
        getattr(_libc, name)(*args)
    except (OSError, AttributeError):
        pass


def trim():
    """Give freed heap back to the OS, so a phase's RSS rise is its own."""
    _call_libc("malloc_trim", 0)


def empty_scene(*kinds):
    """A fresh empty scene (read_homefile), every unused data block purged and freed memory
    trimmed, as in a Blender just started; asserts that bpy.data's `kinds` ("objects",
    "actions", ...) are empty."""
    import bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.data.orphans_purge(do_local_ids=True, do_linked_ids=True, do_recursive=True)
    gc.collect()
    trim()
    assert not any(len(getattr(bpy.data, kind)) for kind in kinds), "scene not empty after reset"


def keyframe_co(fcurve):
    """An F-curve's keys as foreach_get gives them: float32 (frame, value) pairs, flat (2 n,)."""
    import numpy as np
    co = np.empty(2 * len(fcurve.keyframe_points), np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co


def _status_kib(field):
    try:
        with open("/proc/self/status") as f:
            return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return None


def _reset_peak():
    """Linux: make VmHWM (peak RSS) start again from the current RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Peak:
    """RSS at the start of a phase and its peak rise (MiB) during it; None where Linux /proc is missing."""

    def __enter__(self):
        self.resettable = _reset_peak()
        self.start = _status_kib("VmRSS")
        return self

    def __exit__(self, *exc):
        peak = _status_kib("VmHWM") if self.resettable else None
        self.rise_mib = None if peak is None or self.start is None else (peak - self.start) / 1024
        return False


class quiet:
    """Silence file descriptors (default 1: the operators' 'Info: ...' reports, printed by C
    code; 2 too for 4.2's OBJ importer's 'Loaded image from' lines)."""

    def __init__(self, *fds):
        self.fds = fds or (1,)

    def _flush(self):
        sys.stdout.flush()
        _call_libc("fflush", None)   # C stdio buffers what Blender prints when fd 1 is not a terminal
        sys.stderr.flush()

    def __enter__(self):
        self._flush()
        self.saved = [os.dup(fd) for fd in self.fds]
        self.null = os.open(os.devnull, os.O_WRONLY)
        for fd in self.fds:
            os.dup2(self.null, fd)
        return self

    def __exit__(self, *exc):
        self._flush()
        for fd, saved in zip(self.fds, self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        os.close(self.null)
        return False


def setup_blender_dirs(scratch):
    """Blender writes nothing outside `scratch` (unless the caller already chose directories)."""
    for variable, sub in (("BLENDER_USER_RESOURCES", "resources"), ("BLENDER_USER_CONFIG", "config"),
                          ("BLENDER_USER_SCRIPTS", "scripts"), ("XDG_CACHE_HOME", "cache")):
        if not os.environ.get(variable):
            os.makedirs(os.path.join(scratch, sub), exist_ok=True)
            os.environ[variable] = os.path.join(scratch, sub)


@contextlib.contextmanager
def scratch_folder(prefix, keep=False):
    """A scratch folder, Blender's user folders in it (setup_blender_dirs); removed at the
    end, or kept (and named) with `keep`."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        setup_blender_dirs(folder)
        yield folder
    finally:
        if keep:
            print(f"\nscratch directory kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def registered_addon():
    """The add-on registered for the block (inside scratch_folder, so that Blender writes its
    user folders there), unregistered after."""
    import oban_import
    oban_import.register()
    try:
        yield oban_import
    finally:
        try:
            oban_import.unregister()
        except Exception:   # a failed run may have left it half registered: the run's error is what counts
            pass


def label(filename, line, function):
    """A profile row's place, relative to the repository."""
    if filename == "~":
        return function
    path = os.path.relpath(filename, ROOT) if filename.startswith(ROOT) else os.path.basename(filename)
    return f"{path}:{line}({function})"


def profile(what, run, top):
    """cProfile one call of run() and print its top rows by own and by cumulative time."""
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    print(f"\ncProfile of one {what} (profiled total {total:.2f} s; profiling inflates Python-heavy parts)")
    rows = [(tt, ct, nc, label(*key)) for key, (cc, nc, tt, ct, callers) in stats.stats.items()]
    print(f"\n  top {top} by own time:\n  {'own s':>7} {'share':>6} {'cum s':>7} {'calls':>9}  function")
    for tt, ct, nc, place in sorted(rows, reverse=True)[:top]:
        print(f"  {tt:7.3f} {tt / total:6.1%} {ct:7.3f} {nc:9d}  {place}")
    print(f"\n  top {top} by cumulative time:\n  {'cum s':>7} {'share':>6} {'own s':>7} {'calls':>9}  function")
    for tt, ct, nc, place in sorted(rows, key=lambda r: r[1], reverse=True)[:top]:
        print(f"  {ct:7.3f} {ct / total:6.1%} {tt:7.3f} {nc:9d}  {place}")


def timed_rounds(rows, rounds, reset):
    """Each row (name -> callable returning its seconds) once a round on a `reset` scene,
    the order reversed every other round: ({name: [seconds]}, {name: [peak RSS rise MiB]})."""
    times = {name: [] for name in rows}
    rises = {name: [] for name in rows}
    for r in range(rounds):
        for name in (list(rows) if r % 2 == 0 else list(reversed(rows))):
            reset()
            with Peak() as peak:
                times[name].append(rows[name]())
            rises[name].append(peak.rise_mib)
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in rows), flush=True)
    reset()
    return times, rises


def print_best(times, rises, base, header=None):
    """The table of each row's best round, as a multiple of row `base`'s (or of its own base
    row's: `base` a {row: base row} dict, under `header`), its peak RSS rise and every run;
    the process's peak RSS after it."""
    best = {name: min(values) for name, values in times.items()}
    bases = base if isinstance(base, dict) else dict.fromkeys(times, base)
    header = header or f"x {base}"
    width = max(10, len(header))
    row = max(15, *map(len, times))
    print(f"\n{'row':<{row}} {'best s':>7} {header:>{width}} {'peak RSS +MiB':>13}  runs (s)")
    for name, values in times.items():
        rise = [m for m in rises[name] if m is not None]
        memory = f"{max(rise):13.0f}" if rise else f"{'n/a':>13}"
        print(f"{name:<{row}} {best[name]:7.2f} {best[name] / best[bases.get(name, name)]:{width}.2f} {memory}  "
              f"{' '.join(f'{v:.2f}' for v in values)}")
    print_process_peak()
    return best


def print_process_peak():
    print(f"process peak RSS (ru_maxrss): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def checked(label, value, ok, bound, note="", width=28):
    """One requirement's line (value, bound, PASS or FAIL, note); returns `ok`."""
    print(f"{label:<{width}} = {value:6.2f}  (must be {bound})  {'PASS' if ok else 'FAIL'}  {note}".rstrip())
    return ok


def leave(code):
    """Exit with `code`, skipping interpreter teardown: Blender 4.2 as a Python module
    segfaults at exit once a Python-defined panel or PropertyGroup with get/set properties
    was registered (even after unregister), which would turn every result into exit code 139."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
