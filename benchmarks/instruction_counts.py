#!/usr/bin/env python3
"""How many instructions an import executes beside the every-frame floor: a measure this
noisy VM cannot blur (import_speed.py's ratios move by 0.2 between runs of the same code).

    .venvs/bpy-5.0/bin/python benchmarks/instruction_counts.py [--runs N] [--jobs 2]

Under valgrind's cachegrind (no cache simulation), on a tenth of import_speed's corpus
(107 animations, 33,439 frames), it runs one process that only sets up, and one per row
that sets up and then runs the row N times; the difference over N is the row's
instructions per run. Rows: `operator` (Every Frame), `file keys`, and
`baseline+update`, import_speed's floor. Instructions are not time (a page fault, a cache
miss or another thread costs none here), but they show where the add-on's own work is.
Needs valgrind on PATH; about a minute per process.
"""

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = {"operator": "EVERY_FRAME", "file keys": "FILE", "baseline+update": None}
SETUP_ONLY = "setup only"


def count(row, runs):
    """Instructions of one process: set up, then `row` `runs` times."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, os.path.abspath(__file__), "--child", row, "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ | {"PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"{row}: valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def child(row, runs):
    """Set up (the corpus, a first import to warm up), then run `row` `runs` times."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import import_speed as bench
    from measure import scratch_folder
    with scratch_folder("oban-instructions-", False) as scratch:
        oban_import = bench.load_blender()
        directory = os.path.join(scratch, "corpus")
        os.makedirs(directory)
        corpus = bench.make_corpus(directory, *bench.corpus_sizes(quick=True), bench.SEED)
        precomputed = bench.precompute(corpus)
        bench.reset_scene()
        bench.run_operator(corpus)
        for _ in range(runs if row != SETUP_ONLY else 0):
            bench.reset_scene()
            if ROWS[row] is None:
                bench.run_baseline(precomputed, update=True)
            else:
                bench.run_operator(corpus, keys=ROWS[row])
        bench.reset_scene()
        oban_import.unregister()
    os._exit(0)   # as import_speed: bpy 4.2 can crash at interpreter exit


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2, help="valgrind processes at once")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.runs)
    rows = [SETUP_ONLY, *ROWS]
    with ThreadPoolExecutor(args.jobs) as pool:
        counts = dict(zip(rows, pool.map(lambda row: count(row, args.runs), rows)))
    per_run = {row: (counts[row] - counts[SETUP_ONLY]) / args.runs for row in ROWS}
    floor = per_run["baseline+update"]
    print(f"instructions per run ({args.runs} runs, 107 animations, 33,439 frames), Python {sys.version.split()[0]}")
    print(f"{'row':<17} {'M instructions':>15} {'/ floor':>8}")
    for row, value in per_run.items():
        print(f"{row:<17} {value / 1e6:15.1f} {value / floor:8.3f}")


if __name__ == "__main__":
    main()
