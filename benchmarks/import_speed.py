#!/usr/bin/env python3
"""How fast oban_import brings a retail-sized set of OBANs into Blender.

    .venvs/bpy-5.0/bin/python benchmarks/import_speed.py [--quick] [--rounds N] [--profile]

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

A seeded corpus the size of the retail data (1,067 animations, exactly 334,386
frames; sparse keys mostly, some dense, 37 Loop and 13 Localized) is written as raw
.OBAN files into a temporary directory, then every round runs, side by side in this
process, each on a freshly reset empty scene:

  operator        bpy.ops.import_anim.oban(directory=..., files=[...]) on every file
  import_files    oban_import.blender.scene.import_files() on the same paths: the
                  operator without bpy.ops (tells operator overhead from import work)
  baseline        the floor: only create the same empties + actions + 10 F-curves each
                  (compat.new_object_action) and write the same keys, precomputed before
                  the clock starts, with keyframe_points.add + foreach_set of numpy
                  float32 arrays (co, handle_left, handle_right; interpolation LINEAR
                  from an array('i'), as enums have no buffer fast path)
  baseline+fill   the same but writing keys with compat.fill_fcurve (the add-on's writer)
  keyframe_insert the naive way, one obj.keyframe_insert(path, frame=f) per channel group
                  (location, rotation_quaternion, scale) per frame, on a subset, scaled
                  linearly to the full frame count

The rows run alternately (the order flips every round) so noise hits them alike; the
table shows the median of the rounds. Requirements, checked on ratios measured in
the same run, never on absolute times:

  operator <= 1.5 x baseline          operator >= 30 x faster than keyframe_insert

Exit code 0 when both hold, 1 when one fails.
"""

import argparse
import ctypes
import datetime
import gc
import importlib.util
import os
import platform
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

RETAIL_ANIMATIONS = 1067
RETAIL_FRAMES = 334_386
RETAIL_LOOPS = 37
RETAIL_DOORS = 13        # Localized, door open frame 50
DENSE_SHARE = 0.15       # animations with a key on every frame (the rest: sparse keys)
BASELINE_LIMIT = 1.5     # operator time <= this x baseline time
KEYFRAME_INSERT_MIN = 30.0  # keyframe_insert time >= this x operator time

CHANNELS = ([("location", i) for i in range(3)] + [("rotation_quaternion", i) for i in range(4)]
            + [("scale", i) for i in range(3)])
GROUP = "Object Transforms"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

# Set in main() once the Blender user directories point at a scratch directory.
bpy = np = compat = scene = oban_axes = None


# ---------------------------------------------------------------- the corpus

def load_generator():
    """tests/generate.py, loaded by path (a package called `tests` may exist elsewhere)."""
    spec = importlib.util.spec_from_file_location("oban_bench_generate", os.path.join(ROOT, "tests", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def frame_counts(rng, count, total, minimum=2, maximum=65535):
    """`count` lognormal-ish frame counts (mostly short, a long tail) summing exactly to `total`."""
    raw = rng.lognormal(mean=0.0, sigma=1.0, size=count)
    counts = np.clip(np.floor(raw * (total / raw.sum())), minimum, maximum).astype(np.int64)
    while (diff := total - int(counts.sum())) != 0:
        if diff > 0:
            np.add.at(counts, rng.integers(count, size=diff), 1)
        else:
            shrinkable = np.flatnonzero(counts > minimum)
            take = rng.choice(shrinkable, size=min(-diff, len(shrinkable)), replace=False)
            counts[take] -= 1
        counts = np.clip(counts, minimum, maximum)
    return counts


class Corpus:
    def __init__(self, directory, animations, names):
        self.directory = directory
        self.animations = animations      # in file (= import) order
        self.names = names                # file names, sorted
        self.frames = sum(a.frames for a in animations)
        self.keys = sum(len(a.keys) for a in animations)
        self.bytes = sum(os.path.getsize(os.path.join(directory, n)) for n in names)
        self.loops = sum(1 for a in animations if a.flags & 0x01)
        self.doors = sum(1 for a in animations if a.flags & 0x10)
        self.dense = sum(1 for a in animations if len(a.keys) == a.frames)

    @property
    def paths(self):
        return [os.path.join(self.directory, n) for n in self.names]


def make_corpus(directory, count, total_frames, loops, doors, seed):
    from oban_import.writer import raw_file_bytes
    generate = load_generator()
    rng = np.random.default_rng(seed)
    counts = frame_counts(rng, count, total_frames)
    door_candidates = np.flatnonzero(counts >= 51)  # the door open frame (50) must exist
    door_set = set(rng.choice(door_candidates, size=doors, replace=False).tolist())
    loop_set = set(rng.choice([i for i in range(count) if i not in door_set], size=loops, replace=False).tolist())
    animations, names = [], []
    for i, frames in enumerate(counts.tolist()):
        if rng.random() < DENSE_SHARE:
            key_count = frames
        else:  # sparse: a key every 8 to 60 frames
            key_count = max(2, frames // int(rng.integers(8, 61)))
        flags = 0x10 if i in door_set else 0x01 if i in loop_set else 0
        name = f"Bench_{i:04d}"
        animation = generate.random_animation(rng, name=name, frames=frames, key_count=key_count, flags=flags)
        file_name = f"{i:05d}-{name}.OBAN"
        with open(os.path.join(directory, file_name), "wb") as f:
            f.write(raw_file_bytes(animation))
        animations.append(animation)
        names.append(file_name)
    return Corpus(directory, animations, names)


def precompute(corpus, frame_start=1):
    """What the baseline writes: per animation (name, frames float32 (n,), columns float32 (10, n))."""
    out = []
    for animation in corpus.animations:
        t = oban_axes.object_transforms(animation)
        count = len(t.location)
        columns = np.concatenate([t.location, oban_axes.quaternions(t.rotation),
                                  np.broadcast_to(t.scale, (count, 3))], axis=1)
        out.append((animation.name,
                    np.arange(frame_start, frame_start + count, dtype=np.float32),
                    np.ascontiguousarray(columns.T, dtype=np.float32)))
    return out


def keyframe_insert_subset(corpus, precomputed, count):
    """`count` animations at evenly spaced quantiles of frame count (the longest few are
    left out, which only favours keyframe_insert), as plain Python values."""
    order = np.argsort([a.frames for a in corpus.animations], kind="stable")
    picks = order[((np.arange(count) + 0.5) * len(order) / count).astype(int)]
    subset = []
    for i in sorted(picks.tolist()):
        name, frames, columns = precomputed[i]
        rows = columns.T.astype(np.float64).tolist()
        subset.append((name, frames.tolist(), [r[0:3] for r in rows], [r[3:7] for r in rows], rows[0][7:10]))
    return subset


# ---------------------------------------------------------------- memory and scene

_libc = None


def _trim():
    """Give freed heap back to the OS, so a phase's RSS rise is its own."""
    global _libc
    try:
        _libc = _libc or ctypes.CDLL("libc.so.6")
        _libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


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
    """RSS at the start of a phase and its peak (MiB) during it; None where Linux /proc is missing."""

    def __enter__(self):
        self.resettable = _reset_peak()
        self.start = _status_kib("VmRSS")
        return self

    def __exit__(self, *exc):
        peak = _status_kib("VmHWM") if self.resettable else None
        self.rise_mib = None if peak is None or self.start is None else (peak - self.start) / 1024
        return False


def reset_scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.data.orphans_purge(do_local_ids=True, do_linked_ids=True, do_recursive=True)
    gc.collect()
    _trim()
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0, "scene not empty after reset"


# ---------------------------------------------------------------- the rows

class quiet_stdout:
    """Silence file descriptor 1 (the operator's 'Info: Imported ...' report, printed by C code)."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(self.null, 1)

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        os.close(self.null)
        return False


def run_operator(corpus):
    files = [{"name": n} for n in corpus.names]
    with quiet_stdout():
        start = time.perf_counter()
        result = bpy.ops.import_anim.oban(directory=corpus.directory, files=files)
        elapsed = time.perf_counter() - start
    assert result == {"FINISHED"}, result
    assert len(bpy.data.objects) == len(corpus.names), len(bpy.data.objects)
    return elapsed


def _with_threads(blas, threads, function):
    blas.set(threads)
    try:
        return function()
    finally:
        blas.set(blas.default)


def run_import_files(corpus):
    paths = corpus.paths
    start = time.perf_counter()
    result = scene.import_files(bpy.context, paths, scene.Settings())
    elapsed = time.perf_counter() - start
    assert not result.errors and len(result.objects) == len(paths), result.errors[:3]
    return elapsed


def _interpolation_value(name="LINEAR"):
    return bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items[name].value


def write_numpy(fcurve, frames, values):
    """Plain bulk API: numpy float32 buffers straight into foreach_set."""
    count = len(frames)
    points = np.empty(2 * count, np.float32)
    points[0::2] = frames
    points[1::2] = values
    keyframes = fcurve.keyframe_points
    keyframes.add(count)
    keyframes.foreach_set("co", points)
    keyframes.foreach_set("handle_left", points)
    keyframes.foreach_set("handle_right", points)
    keyframes.foreach_set("interpolation", _LINEAR * count)


_LINEAR = None  # array('i', [LINEAR]), set in main()


def run_baseline(precomputed, writer):
    collection = bpy.context.collection
    specs = [(path, index, GROUP) for path, index in CHANNELS]
    start = time.perf_counter()
    for name, frames, columns in precomputed:
        obj = bpy.data.objects.new(name, None)
        obj.rotation_mode = "QUATERNION"
        collection.objects.link(obj)
        _, fcurves = compat.new_object_action(obj, name, specs)
        for fcurve, values in zip(fcurves, columns):
            writer(fcurve, frames, values)
    return time.perf_counter() - start


def run_keyframe_insert(subset):
    collection = bpy.context.collection
    start = time.perf_counter()
    for name, frames, locations, rotations, scale in subset:
        obj = bpy.data.objects.new(name, None)
        obj.rotation_mode = "QUATERNION"
        collection.objects.link(obj)
        for frame, location, rotation in zip(frames, locations, rotations):
            obj.location = location
            obj.rotation_quaternion = rotation
            obj.scale = scale
            obj.keyframe_insert("location", frame=frame)
            obj.keyframe_insert("rotation_quaternion", frame=frame)
            obj.keyframe_insert("scale", frame=frame)
    return time.perf_counter() - start


# ---------------------------------------------------------------- checks

def keys_of(obj):
    """{(data_path, index): (frames, values)} of obj's action, float32 numpy arrays."""
    out = {}
    for fcurve in compat.action_fcurves(obj.animation_data.action, obj):
        points = np.empty(2 * len(fcurve.keyframe_points), np.float32)
        fcurve.keyframe_points.foreach_get("co", points)
        out[(fcurve.data_path, fcurve.array_index)] = (points[0::2], points[1::2])
    return out


def check_same_output(corpus, precomputed, samples=25):
    """The operator and the baseline write the same keys (checked on a sample, untimed)."""
    reset_scene()
    run_operator(corpus)
    step = max(1, len(precomputed) // samples)
    operator_keys = {name: keys_of(bpy.data.objects[name]) for name, _, _ in precomputed[::step]}
    total = sum(len(fc.keyframe_points) for obj in bpy.data.objects
                for fc in compat.action_fcurves(obj.animation_data.action, obj))
    assert total == len(CHANNELS) * corpus.frames, (total, corpus.frames)
    reset_scene()
    run_baseline(precomputed[::step], write_numpy)
    worst = 0.0
    for name, _, _ in precomputed[::step]:
        theirs, ours = operator_keys[name], keys_of(bpy.data.objects[name])
        assert theirs.keys() == ours.keys(), (name, sorted(theirs), sorted(ours))
        for channel, (frames, values) in ours.items():
            assert np.array_equal(frames, theirs[channel][0]), (name, channel)
            worst = max(worst, float(np.abs(values - theirs[channel][1]).max()))
    assert worst <= 1e-6, f"operator and baseline keys differ by {worst}"
    return worst


# ---------------------------------------------------------------- where the operator's time goes

class Timers:
    """Exclusive (own) time of wrapped functions; a wrapped call inside another is not
    counted twice. Costs about a microsecond per call, far less than cProfile."""

    def __init__(self):
        self.own, self.calls, self._children = {}, {}, []

    def wrap(self, label, function):
        def timed(*args, **kwargs):
            self._children.append(0.0)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                children = self._children.pop()
                self.own[label] = self.own.get(label, 0.0) + elapsed - children
                self.calls[label] = self.calls.get(label, 0) + 1
                if self._children:
                    self._children[-1] += elapsed
        return timed


def timed_operator_run(corpus):
    """One operator run with every plain function of every loaded oban_import module
    wrapped in a timer (module attributes patched for this run only, then restored;
    a function imported by name into another module gets the same wrapper there).
    Returns (total seconds, Timers)."""
    import types
    modules = [m for name, m in sorted(sys.modules.items())
               if m is not None and (name == "oban_import" or name.startswith("oban_import."))]
    timers = Timers()
    wrappers = {}  # original function -> its wrapper
    for module in modules[1:] if modules[0].__name__ == "oban_import" else modules:
        for value in vars(module).values():
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                label = f"{module.__name__.removeprefix('oban_import.')}.{value.__name__}"
                wrappers[value] = timers.wrap(label, value)
    saved = []
    for module in modules:
        for attribute, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value in wrappers:
                saved.append((module, attribute, value))
                setattr(module, attribute, wrappers[value])
    try:
        reset_scene()
        total = run_operator(corpus)
    finally:
        for module, attribute, original in saved:
            setattr(module, attribute, original)
    return total, timers


def print_breakdown(total, timers, baseline, shown=14):
    calls = sum(timers.calls.values())
    print(f"\nwhere one operator run's {total:.2f} s go (baseline median {baseline:.2f} s): own time of each "
          f"oban_import function\n(every one wrapped in a timer: {calls:,} wrapped calls, about a microsecond each)")
    print(f"  {'seconds':>8} {'share':>6} {'calls':>7}  function")
    ranked = sorted(timers.own.items(), key=lambda item: -item[1])
    for label, own in ranked[:shown]:
        print(f"  {own:8.3f} {own / total:6.1%} {timers.calls[label]:7d}  {label}")
    others = sum(own for _, own in ranked[shown:])
    if len(ranked) > shown:
        print(f"  {others:8.3f} {others / total:6.1%} {'':7}  {len(ranked) - shown} other functions")
    rest = total - sum(timers.own.values())
    print(f"  {rest:8.3f} {rest / total:6.1%} {'':7}  outside the add-on: bpy.ops (view layer update, undo push), "
          f"operator properties")


def ops_overhead(corpus):
    """What bpy.ops adds around execute(), measured separately after import_files():
    the view layer (depsgraph) update bpy.ops runs, and the memfile undo push of an
    operator with the UNDO option. Returns (update seconds, undo push seconds)."""
    reset_scene()
    scene.import_files(bpy.context, corpus.paths, scene.Settings())
    start = time.perf_counter()
    bpy.context.view_layer.update()
    update = time.perf_counter() - start
    start = time.perf_counter()
    bpy.ops.ed.undo_push(message="benchmark")
    undo = time.perf_counter() - start
    reset_scene()
    return update, undo


class OpenBLAS:
    """The thread count of the OpenBLAS numpy loaded, via ctypes (no threadpoolctl needed)."""

    def __init__(self):
        np.linalg.inv(np.eye(3))  # make sure LAPACK is loaded
        self.get = self.set = None
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower()})
        except OSError:
            paths = []
        for path in paths:
            lib = ctypes.CDLL(path)
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", "_64_", ""):
                    get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                    set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                    if get and set_:
                        set_.argtypes, get.restype = [ctypes.c_int], ctypes.c_int
                        self.get, self.set, self.default = get, set_, get()
                        return

    def __bool__(self):
        return self.set is not None


def blas_threading(corpus, blas, rounds):
    """The add-on's per-animation math (axes.object_transforms on every animation, no
    Blender) and one np.linalg.inv(3x3), with OpenBLAS's default thread count vs 1,
    alternating. Returns {threads: (transforms seconds, inv microseconds)}."""
    axes = oban_axes.DEFAULT_AXES
    results = {}
    for r in range(rounds):
        for threads in ((blas.default, 1) if r % 2 == 0 else (1, blas.default)):
            blas.set(threads)
            start = time.perf_counter()
            for animation in corpus.animations:
                oban_axes.object_transforms(animation)
            transforms = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(2000):
                np.linalg.inv(axes)
            inv = (time.perf_counter() - start) / 2000 * 1e6
            results.setdefault(threads, []).append((transforms, inv))
    blas.set(blas.default)
    return {threads: (statistics.median(t for t, _ in v), statistics.median(i for _, i in v))
            for threads, v in results.items()}


def write_numpy_int32(fcurve, frames, values):
    """As write_numpy, but interpolation from a numpy int32 array (no fast path for enums)."""
    count = len(frames)
    points = np.empty(2 * count, np.float32)
    points[0::2] = frames
    points[1::2] = values
    keyframes = fcurve.keyframe_points
    keyframes.add(count)
    keyframes.foreach_set("co", points)
    keyframes.foreach_set("handle_left", points)
    keyframes.foreach_set("handle_right", points)
    keyframes.foreach_set("interpolation", np.full(count, _LINEAR[0], np.int32))


def write_array(fcurve, frames, values):
    """The writer compat.fill_fcurve had at first: numpy -> array('f', ...) element by element."""
    count = len(frames)
    points = array("f", bytes(8 * count))
    points[0::2] = array("f", frames)
    points[1::2] = array("f", values)
    keyframes = fcurve.keyframe_points
    keyframes.add(count)
    keyframes.foreach_set("co", points)
    keyframes.foreach_set("handle_left", points)
    keyframes.foreach_set("handle_right", points)
    keyframes.foreach_set("interpolation", _LINEAR * count)


KEY_WRITERS = {
    "numpy buffers, interpolation array('i') (the baseline's writer)": "write_numpy",
    "numpy buffers, interpolation np.full(n, LINEAR, np.int32)": "write_numpy_int32",
    "array('f', ndarray) conversions (the first compat.fill_fcurve)": "write_array",
    "compat.fill_fcurve as it is in the tree now": "fill_fcurve",
}


def keys_only(precomputed, rounds):
    """Only the key writing (add + foreach_set into F-curves created beforehand), for
    each writer of KEY_WRITERS, alternating, `rounds` each. Returns {label: median s}."""
    specs = [(path, index, GROUP) for path, index in CHANNELS]
    writers = {label: compat.fill_fcurve if name == "fill_fcurve" else globals()[name]
               for label, name in KEY_WRITERS.items()}
    times = {label: [] for label in writers}
    for r in range(rounds):
        for label in (list(writers) if r % 2 == 0 else list(reversed(writers))):
            reset_scene()
            work = []
            for obj_name, frames, columns in precomputed:
                obj = bpy.data.objects.new(obj_name, None)
                bpy.context.collection.objects.link(obj)
                work.append((compat.new_object_action(obj, obj_name, specs)[1], frames, columns))
            writer = writers[label]
            start = time.perf_counter()
            for fcurves, frames, columns in work:
                for fcurve, values in zip(fcurves, columns):
                    writer(fcurve, frames, values)
            times[label].append(time.perf_counter() - start)
    reset_scene()
    return {label: statistics.median(values) for label, values in times.items()}


# ---------------------------------------------------------------- profile

def profile_operator(corpus, top):
    import cProfile
    import pstats
    reset_scene()
    profiler = cProfile.Profile()
    profiler.enable()
    run_operator(corpus)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    print(f"\ncProfile of one operator run (profiled total {total:.2f} s; profiling inflates Python-heavy parts)")
    rows = []
    for (filename, line, function), (cc, nc, tt, ct, callers) in stats.stats.items():
        rows.append((tt, ct, nc, _label(filename, line, function)))
    print(f"\n  top {top} by own time:\n  {'own s':>7} {'share':>6} {'cum s':>7} {'calls':>9}  function")
    for tt, ct, nc, label in sorted(rows, reverse=True)[:top]:
        print(f"  {tt:7.3f} {tt / total:6.1%} {ct:7.3f} {nc:9d}  {label}")
    print(f"\n  top {top} by cumulative time:\n  {'cum s':>7} {'share':>6} {'own s':>7} {'calls':>9}  function")
    for tt, ct, nc, label in sorted(rows, key=lambda r: r[1], reverse=True)[:top]:
        print(f"  {ct:7.3f} {ct / total:6.1%} {tt:7.3f} {nc:9d}  {label}")


def _label(filename, line, function):
    if filename == "~":
        return function
    path = os.path.relpath(filename, ROOT) if filename.startswith(ROOT) else os.path.basename(filename)
    return f"{path}:{line}({function})"


# ---------------------------------------------------------------- main

def setup_blender_dirs(scratch):
    """Blender writes nothing outside `scratch` (unless the caller already chose directories)."""
    for variable, sub in (("BLENDER_USER_RESOURCES", "resources"), ("BLENDER_USER_CONFIG", "config"),
                          ("BLENDER_USER_SCRIPTS", "scripts"), ("XDG_CACHE_HOME", "cache")):
        if not os.environ.get(variable):
            os.makedirs(os.path.join(scratch, sub), exist_ok=True)
            os.environ[variable] = os.path.join(scratch, sub)


def main(argv=None):
    global bpy, np, compat, scene, oban_axes, _LINEAR
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 round on a tenth of the corpus (107 animations, 33,439 frames)")
    parser.add_argument("--rounds", type=int, help="rounds (default 3; 1 with --quick)")
    parser.add_argument("--subset", type=int, help="animations for keyframe_insert (default 20; 10 with --quick)")
    parser.add_argument("--seed", type=int, default=1067)
    parser.add_argument("--profile", action="store_true", help="also cProfile one operator run and print where time goes")
    parser.add_argument("--top", type=int, default=25, help="rows per --profile listing")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (corpus, Blender user dirs)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    subset_size = args.subset or (10 if args.quick else 20)
    count, total = ((round(RETAIL_ANIMATIONS / 10), round(RETAIL_FRAMES / 10)) if args.quick
                    else (RETAIL_ANIMATIONS, RETAIL_FRAMES))
    loops, doors = ((round(RETAIL_LOOPS / 10), round(RETAIL_DOORS / 10)) if args.quick
                    else (RETAIL_LOOPS, RETAIL_DOORS))

    scratch = tempfile.mkdtemp(prefix="oban-bench-")
    try:
        setup_blender_dirs(scratch)
        import bpy as _bpy
        import numpy as _np
        bpy, np = _bpy, _np
        import oban_import
        from oban_import import axes as _axes
        from oban_import.blender import compat as _compat, scene as _scene
        compat, scene, oban_axes = _compat, _scene, _axes
        oban_import.register()
        _LINEAR = array("i", [_interpolation_value("LINEAR")])
        try:
            return run(args, scratch, rounds, subset_size, count, total, loops, doors)
        finally:
            oban_import.unregister()
    finally:
        if args.keep:
            print(f"\nscratch directory kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def run(args, scratch, rounds, subset_size, count, total, loops, doors):
    corpus_dir = os.path.join(scratch, "corpus")
    os.makedirs(corpus_dir)
    t = time.perf_counter()
    corpus = make_corpus(corpus_dir, count, total, loops, doors, args.seed)
    assert corpus.frames == total and len(corpus.names) == count
    generated = time.perf_counter() - t
    t = time.perf_counter()
    precomputed = precompute(corpus)
    subset = keyframe_insert_subset(corpus, precomputed, subset_size)
    subset_frames = sum(len(s[1]) for s in subset)
    prepared = time.perf_counter() - t

    print(f"oban_import import speed - {datetime.datetime.now():%Y-%m-%d %H:%M}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"{'slotted' if compat.SLOTTED_ACTIONS else 'legacy'} actions; "
          + (" ".join(f"{v}={os.environ[v]}" for v in THREAD_VARIABLES if os.environ.get(v))
             or "BLAS threads: numpy's default"))
    print(f"corpus: {len(corpus.names):,} raw .OBAN files, {corpus.frames:,} frames "
          f"({len(CHANNELS) * corpus.frames:,} keys to write), {corpus.keys:,} stored keys, "
          f"{corpus.bytes / 2**20:.1f} MiB; {corpus.loops} Loop, {corpus.doors} Localized; "
          f"{corpus.dense} dense, {len(corpus.names) - corpus.dense} sparse; "
          f"frames per animation min {min(a.frames for a in corpus.animations)}, "
          f"median {int(statistics.median(a.frames for a in corpus.animations))}, "
          f"max {max(a.frames for a in corpus.animations)} (seed {args.seed}; generated in {generated:.1f} s, "
          f"baseline keys precomputed in {prepared:.1f} s)")

    # warm-up (first-call costs) and the check that operator and baseline write the same keys
    worst = check_same_output(corpus, precomputed)
    print(f"check: operator and baseline write the same frames and values (max |diff| {worst:.1g}, sample of 25)")

    blas = OpenBLAS()
    rows = {"operator": lambda: run_operator(corpus)}
    if blas and blas.default > 1:  # diagnostic: the same operator with OpenBLAS held to one thread
        rows["operator 1BLAS"] = lambda: _with_threads(blas, 1, lambda: run_operator(corpus))
    rows.update({
        "import_files": lambda: run_import_files(corpus),
        "baseline": lambda: run_baseline(precomputed, write_numpy),
        "baseline+fill": lambda: run_baseline(precomputed, compat.fill_fcurve),
        "keyframe_insert": lambda: run_keyframe_insert(subset),
    })
    times = {name: [] for name in rows}
    rises = {name: [] for name in rows}
    for r in range(rounds):
        order = list(rows) if r % 2 == 0 else list(reversed(rows))
        for name in order:
            reset_scene()
            with Peak() as peak:
                times[name].append(rows[name]())
            rises[name].append(peak.rise_mib)
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in rows), flush=True)

    # Python-side peak allocations (tracemalloc slows Python down: separate, untimed runs)
    traced = {}
    for name in ("operator", "baseline"):
        reset_scene()
        tracemalloc.start()
        rows[name]()
        traced[name] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    reset_scene()

    median = {name: statistics.median(values) for name, values in times.items()}
    scale = corpus.frames / subset_frames
    naive_full = median["keyframe_insert"] * scale
    base = median["baseline"]
    print()
    print(f"{'row':<17} {'median s':>9} {'us/frame':>9} {'x baseline':>10} {'peak RSS +MiB':>13}  runs (s)")
    for name in rows:
        seconds = median[name] * (scale if name == "keyframe_insert" else 1.0)
        rise = [m for m in rises[name] if m is not None]
        memory = f"{max(rise):13.0f}" if rise else f"{'n/a':>13}"
        runs = " ".join(f"{v:.2f}" for v in times[name])
        label = name + (" *" if name == "keyframe_insert" else "")
        print(f"{label:<17} {seconds:9.2f} {seconds / corpus.frames * 1e6:9.2f} {seconds / base:10.2f} "
              f"{memory}  {runs}")
    print(f"* keyframe_insert measured on {len(subset)} animations, {subset_frames:,} frames "
          f"(median {median['keyframe_insert']:.2f} s), scaled x{scale:.1f} to {corpus.frames:,} frames")

    ratio = median["operator"] / base
    speedup = naive_full / median["operator"]
    ok_base = ratio <= BASELINE_LIMIT
    ok_naive = speedup >= KEYFRAME_INSERT_MIN
    print()
    print(f"operator / baseline        = {ratio:6.2f}  (must be <= {BASELINE_LIMIT})  {'PASS' if ok_base else 'FAIL'}")
    print(f"keyframe_insert / operator = {speedup:6.1f}  (must be >= {KEYFRAME_INSERT_MIN:g})  "
          f"{'PASS' if ok_naive else 'FAIL'}")
    print(f"diagnostics: baseline+fill / baseline = {median['baseline+fill'] / base:.2f} (compat.fill_fcurve vs "
          f"numpy buffers); operator / import_files = {median['operator'] / median['import_files']:.2f} (bpy.ops)"
          + (f"; operator 1BLAS / baseline = {median['operator 1BLAS'] / base:.2f}"
             if "operator 1BLAS" in median else ""))
    print()
    print(f"memory: process peak RSS (ru_maxrss) {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
          f"Python-side peak (tracemalloc, one untimed run each): operator {traced['operator']:.1f} MiB, "
          f"baseline {traced['baseline']:.1f} MiB (its precomputed keys, "
          f"{sum(f.nbytes + c.nbytes for _, f, c in precomputed) / 2**20:.1f} MiB, live before it starts)")

    total_seconds, timers = timed_operator_run(corpus)
    print_breakdown(total_seconds, timers, base)
    update, undo = ops_overhead(corpus)
    print(f"  the bpy.ops part, measured separately after import_files(): view layer update "
          f"{update:.3f} s, undo push {undo:.3f} s")
    if blas and blas.default > 1:
        threading = blas_threading(corpus, blas, rounds)
        (many, many_inv), (one, one_inv) = threading[blas.default], threading[1]
        print(f"\nOpenBLAS threads, same process, alternating (median of {rounds}): axes.object_transforms "
              f"on all {len(corpus.animations):,} animations {many:.2f} s with {blas.default} threads vs "
              f"{one:.2f} s with 1 ({many / one:.1f}x); np.linalg.inv(3x3) {many_inv:.0f} us vs {one_inv:.0f} us "
              f"per call")
    writes = keys_only(precomputed, rounds)
    print(f"\nkey writing only (keyframe_points.add + foreach_set into ready F-curves, "
          f"{len(CHANNELS) * corpus.frames:,} keys, median of {rounds}):")
    first = next(iter(writes.values()))
    for label, seconds in writes.items():
        print(f"  {seconds:8.3f} s {seconds / first:5.2f}x  {label}")

    if args.profile:
        profile_operator(corpus, args.top)
        reset_scene()
    return 0 if ok_base and ok_naive else 1


if __name__ == "__main__":
    sys.exit(main())
