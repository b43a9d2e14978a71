#!/usr/bin/env python3
"""How fast a level goes back: the rebuild export of the sample level (examples/level5_Final.dat)
as imported, with every texture its environment and door leaves show painted (each image's
first pixel changed, so that every TXMP class file is written from the scene), and with every
door leaf re-modelled too (each raised alike, so that every door class's M3GMs are written
from the scene); and the in-place patch as imported and painted. Each row on the level freshly imported, best of N.

    .venvs/bpy-5.0/bin/python benchmarks/level_export_speed.py [--rounds N]

Requirement: the rebuild with every texture and every door class written from the
scene under a second on this machine. Exit code 0 when it holds, 1 when not.
"""

import argparse
import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from measure import checked, leave, quiet, registered_addon, scratch_folder  # noqa: E402

LEVEL = os.path.join(ROOT, "examples", "level5_Final.dat")
LIMIT = 1.0   # seconds


def imported(scratch, paint, remodel=False):
    """The sample level imported on an empty scene; with `paint`, every image it made painted;
    with `remodel`, every door leaf's mesh raised 1 unit."""
    import bpy
    import numpy as np
    with quiet(1, 2):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        assert bpy.ops.import_anim.oban(filepath=LEVEL) == {"FINISHED"}
    if paint:
        for image in bpy.data.images:
            pixels = np.empty(len(image.pixels), np.float32)
            image.pixels.foreach_get(pixels)
            pixels[:3] = 1.0 - pixels[:3]   # the first pixel's colour, its alpha kept
            image.pixels.foreach_set(pixels)
    for leaf in (obj for obj in bpy.data.objects if remodel and "oni_door_leaf" in obj and obj.type == "MESH"):
        co = np.empty(3 * len(leaf.data.vertices), np.float32)
        leaf.data.vertices.foreach_get("co", co)
        co[2::3] += 1.0
        leaf.data.vertices.foreach_set("co", co)
        leaf.data.update()
    return len(bpy.data.images)


def timed(export, folder):
    """Seconds one export takes; it must write without an error."""
    import bpy
    shutil.rmtree(folder, ignore_errors=True)
    start = time.perf_counter()
    report = export(bpy.context, bpy.context.scene.objects, folder)
    elapsed = time.perf_counter() - start
    assert not report.errors and report.made, report.errors
    return elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each row's best is kept (default 5)")
    args = parser.parse_args(argv)
    with scratch_folder("oban-level-export-") as scratch, registered_addon():
        from oban_import.oni.export.level.patch import export_level_patches
        from oban_import.oni.export.level.rebuild import export_level_rebuilds
        rows = {"rebuild, as imported": (export_level_rebuilds, False, False),
                "rebuild, every texture painted": (export_level_rebuilds, True, False),
                "rebuild, painted and re-modelled": (export_level_rebuilds, True, True),
                "in place, as imported": (export_level_patches, False, False),
                "in place, every texture painted": (export_level_patches, True, False)}
        best, images = {}, 0
        for _ in range(args.rounds):
            for name, (export, paint, remodel) in rows.items():
                images = imported(scratch, paint, remodel)
                seconds = timed(export, os.path.join(scratch, "out"))
                best[name] = min(best.get(name, seconds), seconds)
        print(f"sample level, {images} images; best of {args.rounds}:")
        for name, seconds in best.items():
            print(f"  {name:34} {seconds:6.3f} s")
        whole = "rebuild, painted and re-modelled"
        ok = checked(whole, best[whole], best[whole] < LIMIT, f"< {LIMIT} s", width=34)
    leave(0 if ok else 1)


if __name__ == "__main__":
    main()
