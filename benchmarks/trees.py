"""The add-on at a git revision against the working tree, side by side in one process: a
reshaping keeps the same speed. Each tree imports the same files on a fresh empty scene, each
tree first every other round; each row's best of N rounds, and the ratio new / old (within
noise: about 0.9 to 1.1 on this machine).

    .venvs/bpy-5.0/bin/python benchmarks/trees.py [--rev REV] [--rounds N]

Rows: the sample level with its environment, doors and furniture (examples/level5_Final.dat),
the level of placed objects (examples/level9_Final.dat), the sample character with its six
animations (examples/ONCCchar0.oni), the OBAN examples (raw, .oni, XML), and a generated
level of 20,000 quads and 250 textures (level_speed.py's)."""

import argparse
import glob
import importlib
import io
import os
import subprocess
import sys
import tarfile
import time

import measure

sys.path.insert(0, measure.ROOT)
EXAMPLES = os.path.join(measure.ROOT, "examples")
OLD = "oban_import_old"   # the old tree's package name: its imports are relative, so it runs beside the new


def old_tree(revision, scratch):
    """The add-on at `revision` as the package OLD in `scratch` (on sys.path)."""
    archive = subprocess.run(["git", "archive", revision, "oban_import"], cwd=measure.ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(scratch, filter="data")
    os.rename(os.path.join(scratch, "oban_import"), os.path.join(scratch, OLD))
    sys.path.insert(0, scratch)


def importer(package):
    """(import_files, the default import settings) of a tree."""
    return (importlib.import_module(f"{package}.oni.blender.importer").import_files,
            importlib.import_module(f"{package}.ui.options").OniImportSettings())


def rows(scratch):
    """{row: the files it imports}."""
    import level_speed
    import numpy as np
    level_speed.np = np   # it imports numpy when it runs
    generate = level_speed.generate
    os.makedirs(os.path.join(scratch, "generated"))
    generated = generate(os.path.join(scratch, "generated"), 20_000, np.random.default_rng(1))[0]
    return {"level5 (environment, doors)": [os.path.join(EXAMPLES, "level5_Final.dat")],
            "level9 (placed objects)": [os.path.join(EXAMPLES, "level9_Final.dat")],
            "character, 6 TRAMs": [os.path.join(EXAMPLES, "ONCCchar0.oni")],
            "OBAN examples": sorted(glob.glob(os.path.join(EXAMPLES, "*.OBAN")) + glob.glob(
                os.path.join(EXAMPLES, "OBAN*"))),
            "generated level, 20,000 quads, 250 textures": [generated]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD", help="the old tree's git revision (default HEAD)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each row's best is kept (default 5)")
    args = parser.parse_args(argv)
    with measure.scratch_folder("oban-trees-") as scratch:
        measure.setup_blender_dirs(scratch)
        import bpy
        old_tree(args.rev, os.path.join(scratch, "old"))
        trees = {"old": importer(OLD), "new": importer("oban_import")}
        files, best = rows(scratch), {}
        for round_ in range(args.rounds):
            for row, paths in files.items():
                for tree in sorted(trees, reverse=bool(round_ % 2)):   # each first every other round
                    import_files, settings = trees[tree]
                    measure.empty_scene("objects", "actions")
                    with measure.quiet(1, 2):
                        start = time.perf_counter()
                        report = import_files(bpy.context, paths, settings)
                        elapsed = time.perf_counter() - start
                    assert not report.errors, report.errors
                    best[row, tree] = min(best.get((row, tree), elapsed), elapsed)
        print(f"{'row':46} {'old s':>8} {'new s':>8} {'new / old':>9}   (best of {args.rounds}, {args.rev})")
        for row in dict.fromkeys(row for row, _ in best):
            old, new = best[row, "old"], best[row, "new"]
            print(f"{row:46} {old:8.3f} {new:8.3f} {new / old:9.2f}")
    measure.leave(0)


if __name__ == "__main__":
    main()
