#!/usr/bin/env python3
"""How fast a body goes back: the body export (docs/characters.md, "Exporting a body") of the
sample character (examples/ONCCchar0.oni: 19 parts, five levels of detail, three textures) as
imported (every file written from the stored files), and with every part's mesh edited (each
point moved by 1/1024 of a Blender unit, so that all 19 parts are written from the scene at
every level of detail), and, for information, with every part's mesh replaced by a grid near
the most the engine draws of one mesh (45 x 45 points, 3,872 triangles; 38,475 points in
all). Each row on the character freshly imported, best of N.

    .venvs/bpy-5.0/bin/python benchmarks/body_export_speed.py [--rounds N]

Requirement: a body's export, every part edited, under half a second on this
machine. Exit code 0 when it holds, 1 when not.
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

SAMPLE = os.path.join(ROOT, "examples", "ONCCchar0.oni")
LIMIT = 0.5   # seconds
STEP = 1 / 1024
GRID = 45   # points a side: 2,025 points, 3,872 triangles a part (the engine: 2,047 and 4,095)


def imported(edit):
    """The sample character imported on an empty scene, its armature; with `edit` "moved",
    every part's points moved by STEP along x; "grid", every part's mesh a GRID x GRID grid."""
    import bpy
    import numpy as np
    with quiet(1, 2):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        assert bpy.ops.import_anim.oban(filepath=SAMPLE, character_animations="NONE") == {"FINISHED"}
    armature = next(obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE")
    if edit == "grid":
        for part in armature.children:
            part.data = grid_mesh(part.name, part.data.materials[0])
    elif edit:
        for part in armature.children:
            co = np.empty(3 * len(part.data.vertices), np.float32)
            part.data.vertices.foreach_get("co", co)
            co[0::3] += STEP
            part.data.vertices.foreach_set("co", co)
            part.data.update()
    return armature


def grid_mesh(name, material):
    """A wavy GRID x GRID grid of quads 0.1 Blender units across, smooth, its UVs spread over it."""
    import bpy
    import numpy as np

    from oban_import.blender import compat
    u, v = np.meshgrid(np.linspace(0, 1, GRID), np.linspace(0, 1, GRID))
    points = np.c_[0.1 * u.ravel(), 0.1 * v.ravel(), 0.01 * np.sin(6 * u * v).ravel()].astype(np.float32)
    first = (np.arange(GRID - 1)[:, None] * GRID + np.arange(GRID - 1)).ravel()
    corners = np.c_[first, first + 1, first + GRID + 1, first + GRID].ravel().astype(np.int32)
    mesh = bpy.data.meshes.new(name)
    compat.set_polygons(mesh, points, corners, np.full(len(first), 4, np.int32), points[corners, :2] * 10, "UVMap")
    mesh.update(calc_edges=True)
    mesh.polygons.foreach_set("use_smooth", np.ones(len(mesh.polygons), bool))
    mesh.materials.append(material)
    mesh.update()
    return mesh


def timed(armature, folder):
    """Seconds one export takes, and how many parts its report says came from the scene; it must
    write without an error."""
    import bpy

    from oban_import.oni.export.bodies.export import export_bodies
    from oban_import.oni.io.trams.tram import PART_NAMES
    from oban_import.ui.options import BodyExportSettings
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    start = time.perf_counter()
    report = export_bodies(bpy.context, [armature], folder, BodyExportSettings())
    elapsed = time.perf_counter() - start
    assert not report.errors and not report.warnings and report.made, report.errors + report.warnings
    note = next(m.note for m in report.made if os.path.basename(m.path).startswith("TRBS"))
    return elapsed, sum(f"'{name}'" in note for name in PART_NAMES)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds; each row's best is kept (default 7)")
    args = parser.parse_args(argv)
    with scratch_folder("oban-body-export-") as scratch, registered_addon():
        rows = {"as imported": None, "every part edited": "moved", "every part a grid": "grid"}
        best, notes = {}, {}
        for _ in range(args.rounds):
            for name, edit in rows.items():
                seconds, notes[name] = timed(imported(edit), os.path.join(scratch, "out"))
                best[name] = min(best.get(name, seconds), seconds)
        print(f"sample character, 19 parts, 5 levels of detail; best of {args.rounds}:")
        for name, seconds in best.items():
            print(f"  {name:20} {seconds:6.3f} s  ({notes[name]} parts written from the scene)")
        print(f"info: every part a grid {best['every part a grid']:.3f} s "
              f"({'under' if best['every part a grid'] < LIMIT else 'OVER'} {LIMIT} s)")
        ok = checked("every part edited", best["every part edited"], best["every part edited"] < LIMIT,
                     f"< {LIMIT} s", width=20)
    leave(0 if ok else 1)


if __name__ == "__main__":
    main()
