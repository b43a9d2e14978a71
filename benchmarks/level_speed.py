#!/usr/bin/env python3
"""How fast oban_import brings a level's environment into Blender, against Blender's OBJ importer.

    .venvs/bpy-5.0/bin/python benchmarks/level_speed.py [--rounds N] [--quads Q] [--profile] [--keep]

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

The level is generated (tools/generate/level_generate.py): an environment of 50,000 quads (a
third of them triangles) on 30,000 points, 250 textures of 64 x 64 (BGR and RGBA), every quad
drawn, as a level .dat + .raw. Its OBJ twin holds the same quads: each point and texture
coordinate written once (v, vt (u, 1 - v)), the faces grouped by texture (`usemtl`), an MTL with
one material per texture naming its PNG (map_Kd) - which carries less than the add-on makes:
no shades, no flags, no object tags. Rows, each on a freshly reset scene, best of N:

  add-on          bpy.ops.import_anim.oban(filepath=level .dat, object_lists=False): the
                  environment mesh with its attributes, materials and packed images
  wm.obj_import   bpy.ops.wm.obj_import(filepath=.obj, forward_axis='NEGATIVE_Z', up_axis='Y',
                  global_scale=0.1): the same axes and scale
  read_level      oban_import.oni.io.level.read.read_level(level .dat) alone (for information)

Requirement (on 5.0; 4.2 and 4.5 reported): add-on <= 1.5 x wm.obj_import. Exit code 0 when it
holds, 1 when not (then, or with --profile, a cProfile of one add-on import is printed).
"""

import argparse
import datetime
import gc
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "generate")]

from measure import (checked, leave, print_best, profile, quiet, registered_addon, scratch_folder,  # noqa: E402
                     timed_rounds, trim)

LIMIT = 1.5        # add-on time <= this x wm.obj_import time
TEXTURES, SIDE = 250, 64
POINTS_PER_QUAD = 0.6

bpy = np = None


def generate(folder, quads, rng):
    """The level (its .dat path) and its OBJ twin (its .obj path) of `quads` quads."""
    import level_generate as lg
    from objects_generate import random_texture

    from oban_import.core.png import png_bytes
    level = lg.GenLevel(name="bench", setups=None, with_onlv=True)
    for k in range(TEXTURES):
        texture, raw = random_texture(rng, f"tex{k:03d}", 8 if k % 2 else 0, SIDE, SIDE)
        level.textures[texture.name], level.texture_raws[texture.name] = texture, raw
    points = int(quads * POINTS_PER_QUAD)
    order = rng.permutation(quads)                         # four distinct points a quad, no two quads alike
    corners = ((order % points)[:, None] + (1 + order // points)[:, None] * np.arange(4)) % points
    corners = corners.astype(np.int32)
    triangle = rng.random(quads) < 1 / 3
    corners[triangle, 3] = corners[triangle, 2]
    uvs = rng.uniform(-2, 2, (points, 2)).astype(np.float32)
    env = lg.GenEnvironment(
        name="bench", points=rng.normal(0, 500, (points, 3)).astype(np.float32), uvs=uvs, quad_points=corners,
        quad_uvs=corners.copy(), shades=rng.integers(0, 1 << 32, (quads, 4), dtype=np.uint64).astype(np.uint32),
        flags=np.where(triangle, 0x40, 0).astype(np.uint32), tags=np.full(quads, -1, np.int32),
        quad_textures=np.sort(rng.integers(0, TEXTURES, quads)).astype(np.uint16),
        planes=np.array([[0, 1, 0, 0]], np.float32), collision_planes=np.zeros(quads, np.int32),
        collision_boxes=np.zeros((quads, 6), np.float32), textures=list(level.textures))
    level.environment = env
    path = str(lg.write_level(level, folder, "level8_Final"))
    obj = os.path.join(folder, "level.obj")
    with open(os.path.join(folder, "level.mtl"), "w") as mtl:
        for name, texture in level.textures.items():
            rgba8 = np.clip(np.rint(np.asarray(texture_pixels(texture, level.texture_raws[name]), np.float32) * 255),
                            0, 255).astype(np.uint8)
            with open(os.path.join(folder, f"{name}.png"), "wb") as f:
                f.write(png_bytes(rgba8))
            mtl.write(f"newmtl {name}\nKd 0.8 0.8 0.8\nmap_Kd {name}.png\n\n")
    with open(obj, "w") as out:
        out.write("mtllib level.mtl\no bench\n")
        out.write(_lines("v", env.points.astype(np.float64), "%.6f"))
        flipped = np.column_stack([uvs[:, 0], 1 - uvs[:, 1]]).astype(np.float64)
        out.write(_lines("vt", flipped, "%.6f"))
        bounds = np.searchsorted(env.quad_textures, np.arange(TEXTURES + 1))
        for k, name in enumerate(level.textures):
            chosen = slice(bounds[k], bounds[k + 1])
            out.write(f"usemtl {name}\n")
            for shape in (triangle[chosen], ~triangle[chosen]):
                count = 3 if shape is triangle[chosen] else 4
                faces = corners[chosen][shape][:, :count] + 1
                out.write(_lines("f", np.repeat(faces, 2, axis=1), "%d/%d", per=2))
    return path, obj, {"quads": quads, "points": points, "textures": TEXTURES}


def texture_pixels(texture, raw):
    from oban_import.oni.io.objects.textures import decode
    return decode(bytes(raw), texture.width, texture.height, texture.format)


def _lines(prefix, array, fmt, per=1):
    """One OBJ line per row of `array`: prefix and `fmt` for every `per` values of the row."""
    if len(array) == 0:
        return ""
    line = prefix + " " + " ".join([fmt] * (array.shape[1] // per))
    return "\n".join([line] * len(array)) % tuple(array.ravel().tolist()) + "\n"


def reset_scene():
    with quiet(1, 2):
        bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.data.orphans_purge(do_local_ids=True, do_linked_ids=True, do_recursive=True)
    gc.collect()
    trim()
    assert len(bpy.data.objects) == 0 and len(bpy.data.meshes) == 0 and len(bpy.data.images) == 0
    import oban_import
    if "oban" not in dir(bpy.ops.import_anim):
        oban_import.register()


def timed(operator, quads):
    """Seconds one import operator takes, its output silenced; it must make every face."""
    with quiet(1, 2):
        start = time.perf_counter()
        result = operator()
        elapsed = time.perf_counter() - start
    assert result == {"FINISHED"}, result
    faces = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    assert faces == quads, faces
    return elapsed


def run_read(path, quads):
    from oban_import.oni.io.level.read import read_level
    start = time.perf_counter()
    contents = read_level(path)
    elapsed = time.perf_counter() - start
    assert len(contents.environment.flags) == quads
    return elapsed


def main(argv=None):
    global bpy, np
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each row's best is kept (default 5)")
    parser.add_argument("--quads", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one add-on import even if it passes")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    with scratch_folder("oban-level-bench-", args.keep) as scratch, registered_addon():
        import bpy as _bpy
        import numpy as _np
        bpy, np = _bpy, _np
        return run(args, scratch)


def run(args, scratch):
    folder = os.path.join(scratch, "level")
    os.makedirs(folder)
    path, obj, counts = generate(folder, args.quads, np.random.default_rng(args.seed))
    print(f"oban_import level speed - {datetime.datetime.now():%Y-%m-%d %H:%M}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(f"environment: {counts['quads']:,} quads on {counts['points']:,} points, {counts['textures']} textures "
          f"{SIDE} x {SIDE}; OBJ + MTL + PNGs "
          f"{sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder) if n.endswith(('.obj', '.mtl', '.png'))) / 2**20:.1f} MiB")
    quads = counts["quads"]
    rows = {"add-on": lambda: timed(lambda: bpy.ops.import_anim.oban(filepath=path, object_lists=False), quads),
            "wm.obj_import": lambda: timed(lambda: bpy.ops.wm.obj_import(filepath=obj, forward_axis="NEGATIVE_Z",
                                                                         up_axis="Y", global_scale=0.1), quads),
            "read_level": lambda: run_read(path, quads)}
    for name in ("add-on", "wm.obj_import"):   # warm up: first-call costs
        reset_scene()
        rows[name]()
        print(f"  {name:<14} makes {len(bpy.data.objects)} objects, {len(bpy.data.materials)} materials, "
              f"{len(bpy.data.images)} images")
    times, rises = timed_rounds(rows, args.rounds, reset_scene)
    best = print_best(times, rises, "wm.obj_import")
    ratio = best["add-on"] / best["wm.obj_import"]
    print()
    ok = checked("add-on / wm.obj_import", ratio, ratio <= LIMIT, f"<= {LIMIT:g}",
                 "" if bpy.app.version >= (5, 0, 0) else "(judged on 5.0; for information here)", width=22)
    if args.profile or not ok:
        reset_scene()
        profile("add-on import", rows["add-on"], args.top)
        reset_scene()
    return 0 if ok or bpy.app.version < (5, 0, 0) else 1


if __name__ == "__main__":
    leave(main())
