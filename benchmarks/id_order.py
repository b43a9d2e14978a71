#!/usr/bin/env python3
"""How fast Blender makes many named data blocks in file order and in the order the
importer uses (datablocks.fast_order: from the last name down, up to FAST_ORDER_LIMIT
blocks of a kind), side by side, best of several rounds.

    .venvs/bpy-5.0/bin/python benchmarks/id_order.py [--rounds N]

Each row makes N Empties and N actions called Bench_0000, Bench_0001, ... (sorted, as a
folder's files are) in an empty scene. Blender keeps each kind's blocks sorted by name and
finds a new one's place from the end: a name after all the others costs up to 511 name
compares, one before all the others only a walk back over the list.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]

from measure import leave, scratch_folder  # noqa: E402

COUNTS = (107, 1067, 1500, 3000)   # a tenth of the CD's OBANs, all of them, the limit, past it


def made(bpy, names, order):
    start = time.perf_counter()
    for i in order:
        bpy.data.objects.new(names[i], None)
        bpy.data.actions.new(names[i])
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with scratch_folder("oban-id-order-"):
        import bpy

        from oban_import.blender.datablocks import fast_order
        print(f"Blender {bpy.app.version_string}: {args.rounds} rounds, best of each (ms)")
        print(f"{'blocks':>7} {'file order':>11} {'fast order':>11} {'file / fast':>12}")
        for count in COUNTS:
            names = [f"Bench_{i:04d}" for i in range(count)]
            best = {}
            for _ in range(args.rounds):
                for label, order in (("file", range(count)), ("fast", fast_order(0, names))):
                    bpy.ops.wm.read_homefile(use_empty=True)
                    best[label] = min(best.get(label, float("inf")), made(bpy, names, order))
            print(f"{count:7,} {best['file'] * 1e3:11.1f} {best['fast'] * 1e3:11.1f} "
                  f"{best['file'] / best['fast']:12.2f}")
    return 0


if __name__ == "__main__":
    leave(main())
