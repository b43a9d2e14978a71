#!/usr/bin/env python3
"""How fast oban_import brings a level's placed objects into Blender, against Blender's OBJ importer.

    .venvs/bpy-5.0/bin/python benchmarks/objects_speed.py [--rounds N] [--profile] [--keep]

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

The level is texture_decode.py's big_level(): 500 objects (one mesh each, 600 points,
1,000 triangles), 500,000 triangles, 100 textures of 256 x 256 (the six TXMP formats in
turn). The same meshes are written as one OBJ (positions, UVs (u, 1 - v), normals, faces,
one `o` per object, `usemtl` per object) with an MTL naming one PNG per texture (map_Kd,
and map_d for the textures with alpha), PNGs written here with zlib. Rows, each on a
freshly reset scene (read_factory_settings(use_empty=True), orphans purged), best of N:

  add-on          bpy.ops.import_anim.oban(filepath=level .dat): objects, meshes,
                  materials, images (packed), custom properties
  wm.obj_import   bpy.ops.wm.obj_import(filepath=.obj, forward_axis='NEGATIVE_Z', up_axis='Y')
  read_objects    oban_import.oni.io.objects.read.read_objects(level .dat) alone (for information)

Requirement: add-on <= 1.5 x wm.obj_import. Exit code 0 when it holds, 1 when not (then,
or with --profile, a cProfile of one add-on import is printed).
"""

import argparse
import datetime
import gc
import importlib.util
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from measure import (checked, leave, print_best, profile, quiet, registered_addon, scratch_folder,  # noqa: E402
                     timed_rounds, trim)

from oban_import.core.png import png_bytes  # noqa: E402

LIMIT = 1.5     # add-on time <= this x wm.obj_import time

bpy = np = None


# ---------------------------------------------------------------- the level and its OBJ twin

def load_texture_decode():
    """benchmarks/texture_decode.py, loaded by path (it puts tools/generate on sys.path itself)."""
    spec = importlib.util.spec_from_file_location("oban_bench_texture_decode",
                                                  os.path.join(ROOT, "benchmarks", "texture_decode.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(prefix, array, fmt, per=1):
    """One OBJ line per row of `array`: prefix and `fmt` for every `per` values of the row."""
    if len(array) == 0:
        return ""
    line = prefix + " " + " ".join([fmt] * (array.shape[1] // per))
    return "\n".join([line] * len(array)) % tuple(array.ravel().tolist()) + "\n"


def write_obj(level, folder):
    """level's meshes as one .obj + .mtl + a PNG per texture; returns (obj path, counts)."""
    obj_path, mtl_path = os.path.join(folder, "level.obj"), os.path.join(folder, "level.mtl")
    textures = {}
    for placed in level.objects:
        for mesh in placed.meshes:
            if mesh.texture is not None:
                textures.setdefault(mesh.texture.name, mesh.texture)
    with open(mtl_path, "w") as mtl:
        for name, texture in textures.items():
            png = f"{name}.png"
            rgba8 = np.clip(np.rint(np.asarray(texture.pixels, np.float32) * 255), 0, 255).astype(np.uint8)
            with open(os.path.join(folder, png), "wb") as f:
                f.write(png_bytes(rgba8))
            mtl.write(f"newmtl {name}\nKd 0.8 0.8 0.8\nmap_Kd {png}\n")
            if texture.has_alpha:
                mtl.write(f"map_d {png}\n")
            mtl.write("\n")
    base, triangles, vertices = 1, 0, 0
    with open(obj_path, "w") as out:
        out.write("mtllib level.mtl\n")
        for placed in level.objects:
            out.write(f"o {placed.name}\n")
            for mesh in placed.meshes:
                points = np.asarray(mesh.points, np.float64)
                uvs = np.asarray(mesh.uvs, np.float64).copy()
                uvs[:, 1] = 1.0 - uvs[:, 1]
                t = np.asarray(mesh.triangles, np.int64).reshape(-1, 3)
                t = t[(t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])]  # as the add-on
                out.write(_lines("v", points, "%.6f"))
                out.write(_lines("vt", uvs, "%.6f"))
                out.write(_lines("vn", np.asarray(mesh.normals, np.float64), "%.6f"))
                out.write(f"usemtl {mesh.texture.name if mesh.texture is not None else 'untextured'}\n")
                corners = np.repeat(t + base, 3, axis=1)           # v/vt/vn share the index
                out.write(_lines("f", corners, "%d/%d/%d", per=3))
                base += len(points)
                vertices += len(points)
                triangles += len(t)
    return obj_path, {"objects": len(level.objects), "vertices": vertices, "triangles": triangles,
                      "textures": len(textures)}


# ---------------------------------------------------------------- memory and scene

def reset_scene():
    with quiet(1, 2):
        bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.data.orphans_purge(do_local_ids=True, do_linked_ids=True, do_recursive=True)
    gc.collect()
    trim()
    assert len(bpy.data.objects) == 0 and len(bpy.data.meshes) == 0 and len(bpy.data.images) == 0, \
        "scene not empty after reset"
    ensure_registered()


def ensure_registered():
    """read_factory_settings may reset Python registrations: register the add-on again if so."""
    import oban_import
    if not hasattr(bpy.types, "IMPORT_ANIM_OT_oban") and "oban" not in dir(bpy.ops.import_anim):
        oban_import.register()


# ---------------------------------------------------------------- the rows

def run_addon(path, counts):
    return _timed_import(lambda: bpy.ops.import_anim.oban(filepath=path), counts)


def run_obj(path, counts):
    return _timed_import(lambda: bpy.ops.wm.obj_import(filepath=path, forward_axis="NEGATIVE_Z", up_axis="Y"),
                         counts)


def _timed_import(operator, counts):
    """Seconds one import operator takes, its output silenced; it must make every mesh object."""
    with quiet(1, 2):
        start = time.perf_counter()
        result = operator()
        elapsed = time.perf_counter() - start
    assert result == {"FINISHED"}, result
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert len(meshes) == counts["objects"], len(meshes)
    return elapsed


def run_read(path, counts):
    from oban_import.oni.io.objects.read import read_objects
    start = time.perf_counter()
    level = read_objects(path)
    elapsed = time.perf_counter() - start
    assert len(level.objects) == counts["objects"]
    return elapsed


def scene_counts():
    meshes = [m for m in bpy.data.meshes]
    return {"objects": len(bpy.data.objects), "meshes": len(meshes), "materials": len(bpy.data.materials),
            "images": len(bpy.data.images), "vertices": sum(len(m.vertices) for m in meshes),
            "triangles": sum(len(m.polygons) for m in meshes)}


# ---------------------------------------------------------------- where the add-on's time goes

def profile_addon(path, counts, top):
    reset_scene()
    profile("add-on import", lambda: run_addon(path, counts), top)

def main(argv=None):
    global bpy, np
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each row's best is kept (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one add-on import even if it passes")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    with scratch_folder("oban-objects-bench-", args.keep) as scratch, registered_addon():
        import bpy as _bpy
        import numpy as _np
        bpy, np = _bpy, _np
        return run(args, scratch)


def run(args, scratch):
    from oban_import.oni.io.objects.read import read_objects
    decode = load_texture_decode()
    folder = os.path.join(scratch, "level")
    os.makedirs(folder)
    level_path = decode.big_level(folder, np.random.default_rng(args.seed))
    level = read_objects(level_path)
    obj_path, counts = write_obj(level, folder)
    del level
    size = os.path.getsize(level_path) + os.path.getsize(level_path[:-4] + ".raw")
    obj_size = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)
                   if n.endswith((".obj", ".mtl", ".png")))
    print(f"oban_import objects speed - {datetime.datetime.now():%Y-%m-%d %H:%M}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(f"level: {counts['objects']} objects, {counts['vertices']:,} vertices, {counts['triangles']:,} triangles, "
          f"{counts['textures']} textures 256 x 256 ({size / 2**20:.1f} MiB .dat + .raw; "
          f"OBJ + MTL + PNGs {obj_size / 2**20:.1f} MiB)")

    rows = {"add-on": lambda: run_addon(level_path, counts),
            "wm.obj_import": lambda: run_obj(obj_path, counts),
            "read_objects": lambda: run_read(level_path, counts)}
    # warm up (first-call costs: node types, the OBJ importer's first run) and compare what is made
    made = {}
    for name in ("add-on", "wm.obj_import"):
        reset_scene()
        rows[name]()
        made[name] = scene_counts()
    run_read(level_path, counts)
    for name, c in made.items():
        print(f"  {name:<14} makes {c['objects']} objects, {c['meshes']} meshes, {c['materials']} materials, "
              f"{c['images']} images, {c['vertices']:,} vertices, {c['triangles']:,} faces")

    times, rises = timed_rounds(rows, args.rounds, reset_scene)

    best = print_best(times, rises, "wm.obj_import")
    base = best["wm.obj_import"]
    ratio = best["add-on"] / base
    print()
    ok = checked("add-on / wm.obj_import", ratio, ratio <= LIMIT, f"<= {LIMIT:g}", width=22)
    print(f"add-on without the read = {best['add-on'] - best['read_objects']:.2f} s "
          f"({(best['add-on'] - best['read_objects']) / base:.2f} x obj_import)")
    if args.profile or not ok:
        profile_addon(level_path, counts, args.top)
        reset_scene()
    return 0 if ok else 1


if __name__ == "__main__":
    leave(main())
