#!/usr/bin/env python3
"""How fast oban_import lists and imports a retail-sized Outpost 2 op2_art.prt + .bmp.

    .venvs/bpy-5.0/bin/python benchmarks/sprite_speed.py [--quick] [--fraction F] [--rounds N] [--profile]
    .venvs/bpy-5.0/bin/python benchmarks/sprite_speed.py --listing-only      # the listing row alone

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

The pair is tools/generate/op2_generate.py's, of retail_size() (9 palettes, 5,400 bitmaps, 2,000
animations, about 40,000 frames of up to 5 subframes; `--fraction F` scales bitmaps and
animations, `--quick` is F = 0.1). Rows, side by side in this process, each on a freshly
reset scene (read_factory_settings(use_empty=True), orphans purged); best of N rounds:

  listing         sprite_rows(read_prt(prt)): the command line's --list (no Blender data)
  import_sprites  oban_import.outpost2.blender.sprites.import_sprites(context, prt, SpriteImportSettings()):
                  read, plan and build everything (no bpy.ops, so no scene update)
  baseline        the floor: the same Empties, images (packed from PNGs made before the clock),
                  plane meshes, materials (one with nodes, the rest copies), plane objects
                  (parented, placed) and visibility actions (2 F-curves, CONSTANT keys with
                  keyframe_points.add + foreach_set, shared by planes keyed alike), all
                  computed before the clock starts: no reading, no planning, no custom
                  properties, no selection or scene settings

Requirements: listing < 1 s; import_sprites <= 2 x baseline. Exit code 0 when both hold.
"""

import argparse
import datetime
import gc
import importlib.util
import os
import pathlib
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from measure import Peak, checked, leave, print_best, profile, quiet, scratch_folder, timed_rounds, trim  # noqa: E402

from oban_import.core.png import png_bytes  # noqa: E402

LISTING_LIMIT = 1.0     # seconds
IMPORT_LIMIT = 2.0      # import_sprites <= this x baseline
RETAIL = dict(  # tools/generate/op2_generate.py retail_size()'s arguments
    palettes=9, bitmaps=5400, animations=2000, max_frames=39, max_subframes=5, max_size=8)

bpy = np = compat = sprites = None


# ---------------------------------------------------------------- the pair

def load_generator():
    """tools/generate/op2_generate.py, loaded by path."""
    spec = importlib.util.spec_from_file_location("oban_bench_op2_generate",
                                                  os.path.join(ROOT, "tools", "generate", "op2_generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_pair(folder, fraction, seed):
    generate = load_generator()
    rng = np.random.default_rng(seed)
    if fraction == 1.0:     # retail_size(rng) itself, written as write_pair writes
        from oban_import.outpost2.io.writer import bmp_bytes, prt_bytes
        prt, pixels, _ = generate.retail_size(rng)
        prt_path, bmp_path = os.path.join(folder, "op2_art.prt"), os.path.join(folder, "op2_art.bmp")
        with open(prt_path, "wb") as f:
            f.write(prt_bytes(prt))
        with open(bmp_path, "wb") as f:
            f.write(bmp_bytes(pixels))
    else:                   # the same, with fewer bitmaps and animations
        kwargs = dict(RETAIL, bitmaps=max(1, round(RETAIL["bitmaps"] * fraction)),
                      animations=max(1, round(RETAIL["animations"] * fraction)))
        prt_path, _, prt, _ = generate.write_pair(pathlib.Path(folder), rng, **kwargs)
    return str(prt_path), prt


# ---------------------------------------------------------------- memory and scene

def reset_scene():
    with quiet():
        bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.data.orphans_purge(do_local_ids=True, do_linked_ids=True, do_recursive=True)
    gc.collect()
    trim()
    assert not (len(bpy.data.objects) or len(bpy.data.images) or len(bpy.data.meshes) or len(bpy.data.actions)), \
        "scene not empty after reset"


def scene_counts():
    fcurves = [fc for action in bpy.data.actions for fc in compat.action_fcurves(action)]
    return {"objects": len(bpy.data.objects), "empties": sum(1 for o in bpy.data.objects if o.type == "EMPTY"),
            "images": len(bpy.data.images), "meshes": len(bpy.data.meshes), "materials": len(bpy.data.materials),
            "actions": len(bpy.data.actions), "fcurves": len(fcurves),
            "keys": sum(len(fc.keyframe_points) for fc in fcurves),
            "animated": sum(1 for o in bpy.data.objects if o.animation_data and o.animation_data.action)}


# ---------------------------------------------------------------- the rows

def run_listing(prt_path):
    from oban_import.outpost2.io.prt import read_prt
    from oban_import.ui.listing import sprite_rows
    start = time.perf_counter()
    rows = sprite_rows(read_prt(prt_path))
    elapsed = time.perf_counter() - start
    assert rows
    return elapsed


def run_import(prt_path):
    from oban_import.ui.options import SpriteImportSettings
    start = time.perf_counter()
    result = sprites.import_sprites(bpy.context, prt_path, SpriteImportSettings())
    elapsed = time.perf_counter() - start
    assert not result.errors, result.errors[:3]
    return elapsed


def precompute(prt_path):
    """What the baseline makes, from the add-on's own plan (untimed): per animation its
    Empty's name and its planes (name, bitmap, location, visibility pattern), per bitmap its
    size and its pixels as the PNG the add-on packs (encoded here, before the clock: the
    floor does not pay for it), per pattern its keys."""
    from oban_import.outpost2.engine.planes import plan_sprites
    from oban_import.ui.options import SpriteImportSettings
    settings = SpriteImportSettings()
    plan = plan_sprites(prt_path, settings, [])
    scale, step = settings.global_scale, sprites.LAYER_STEP
    bitmaps, patterns, animations = {}, {}, []
    for index in plan.indices:
        planes, visible = plan.layers[index]
        out = []
        for layer, (bitmap, x, y) in enumerate(planes):
            if bitmap not in bitmaps:
                rgba = plan.pixels[bitmap]
                bitmaps[bitmap] = (rgba.shape[1], rgba.shape[0], png_bytes(rgba))
            hidden = ~visible[layer]
            changes = np.flatnonzero(np.r_[True, hidden[1:] != hidden[:-1]])
            key = (bool(hidden[0]), changes.tobytes())
            if key not in patterns:
                values = hidden[changes].astype(np.float32)
                patterns[key] = (len(patterns), (settings.frame_start + changes).astype(np.float32),
                                 np.stack([values, values], axis=1))
            out.append((f"anim_{index}_b{bitmap}_{x}_{y}", bitmap,
                        (x * scale, -layer * step * scale, -y * scale), bool(hidden[0]), key))
        animations.append((f"anim_{index}", out))
    return animations, bitmaps, patterns, settings.global_scale


def run_baseline(pre):
    animations, bitmaps, patterns, scale = pre
    collection = bpy.context.collection
    uv = np.array([0, 1, 0, 0, 1, 0, 1, 1], np.float32)
    start = time.perf_counter()
    shared, actions, template = {}, {}, None
    for empty_name, planes in animations:
        empty = bpy.data.objects.new(empty_name, None)
        empty.empty_display_type = "PLAIN_AXES"
        empty.empty_display_size = 16 * scale
        collection.objects.link(empty)
        for name, bitmap, location, hidden, key in planes:
            if bitmap not in shared:
                width, height, png = bitmaps[bitmap]
                image = bpy.data.images.new(f"op2_bitmap_{bitmap}", width, height, alpha=True)
                compat.pack_png(image, png, f"op2_bitmap_{bitmap}.png")
                image.alpha_mode = "STRAIGHT"
                if template is None:
                    material = template = bpy.data.materials.new(f"op2_bitmap_{bitmap}")
                    sprites._emission_nodes(material, image)
                else:
                    material = template.copy()
                    material.name = f"op2_bitmap_{bitmap}"
                    next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image = image
                mesh = bpy.data.meshes.new(f"op2_bitmap_{bitmap}")
                w, h = width * scale, height * scale
                mesh.from_pydata([(0, 0, 0), (0, 0, -h), (w, 0, -h), (w, 0, 0)], [], [(0, 1, 2, 3)])
                mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", uv)
                mesh.materials.append(material)
                shared[bitmap] = mesh
            plane = bpy.data.objects.new(name, shared[bitmap])
            collection.objects.link(plane)
            plane.parent = empty
            plane.location = location
            plane.hide_viewport = plane.hide_render = hidden
            if key in actions:
                compat.share_object_action(plane, actions[key])
            else:
                number, frames, columns = patterns[key]
                action, fcurves = compat.new_object_action(plane, f"op2_visibility_{number}",
                                                           [("hide_viewport", 0, ""), ("hide_render", 0, "")])
                compat.fill_fcurves(fcurves, frames, columns, "CONSTANT")
                actions[key] = action
    return time.perf_counter() - start


# ---------------------------------------------------------------- where the import's time goes

def profile_import(prt_path, top):
    reset_scene()
    profile("import_sprites run", lambda: run_import(prt_path), top)

def main(argv=None):
    global bpy, np, compat, sprites
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the retail size (same as --fraction 0.1)")
    parser.add_argument("--fraction", type=float, help="share of the retail bitmaps and animations (default 1)")
    parser.add_argument("--rounds", type=int, help="rounds; each row's best is kept (default 3; 1 with --quick)")
    parser.add_argument("--seed", type=int, default=2000)
    parser.add_argument("--profile", action="store_true", help="cProfile one import_sprites run even if it passes")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--listing-only", action="store_true",
                        help="only the listing row (seconds, not minutes, at the retail size)")
    args = parser.parse_args(argv)
    fraction = args.fraction if args.fraction is not None else (0.1 if args.quick else 1.0)
    rounds = args.rounds or (1 if args.quick else 3)
    with scratch_folder("oban-sprite-bench-", args.keep) as scratch:
        import bpy as _bpy
        import numpy as _np
        bpy, np = _bpy, _np
        from oban_import.blender import compat as _compat
        from oban_import.outpost2.blender import sprites as _sprites
        compat, sprites = _compat, _sprites
        return run(args, fraction, rounds, scratch)


def run_listing_only(prt_path, rounds):
    times, rises = [], []
    run_listing(prt_path)   # warm up
    for _ in range(rounds):
        with Peak() as peak:
            times.append(run_listing(prt_path))
        rises.append(peak.rise_mib)
    rise = [m for m in rises if m is not None]
    print(f"\nlisting: best {min(times):.3f} s, peak RSS +{max(rise) if rise else float('nan'):.0f} MiB, "
          f"runs {' '.join(f'{t:.3f}' for t in times)}")
    return 0 if checked("listing", min(times), min(times) < LISTING_LIMIT, f"< {LISTING_LIMIT:g} s", width=7) else 1


def run(args, fraction, rounds, scratch):
    folder = os.path.join(scratch, "art")
    os.makedirs(folder)
    prt_path, prt = make_pair(folder, fraction, args.seed)
    frames = sum(len(a.frames) for a in prt.animations)
    subframes = sum(len(f.subframes) for a in prt.animations for f in a.frames)
    print(f"oban_import sprite speed - {datetime.datetime.now():%Y-%m-%d %H:%M}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(f"pair ({fraction:g} x retail): {len(prt.animations):,} animations, {len(prt.bitmaps):,} bitmaps, "
          f"{frames:,} frames, {subframes:,} subframes, {len(prt.palettes)} palettes "
          f"(.prt {os.path.getsize(prt_path) / 2**20:.1f} MiB)")
    del prt
    if args.listing_only:
        return run_listing_only(prt_path, rounds)
    t = time.perf_counter()
    pre = precompute(prt_path)
    planes = sum(len(p) for _, p in pre[0])
    print(f"plan: {planes:,} planes, {len(pre[1]):,} bitmaps used, {len(pre[2]):,} visibility patterns "
          f"(precomputed for the baseline in {time.perf_counter() - t:.1f} s, untimed)", flush=True)

    # first runs: warm up, and check that both make the same
    made = {}
    for name, row in (("import_sprites", lambda: run_import(prt_path)), ("baseline", lambda: run_baseline(pre))):
        reset_scene()
        seconds = row()
        made[name] = scene_counts()
        print(f"  {name:<15} ({seconds:.1f} s) makes " + ", ".join(f"{v:,} {k}" for k, v in made[name].items()),
              flush=True)
    assert made["import_sprites"] == made["baseline"], made

    rows = {"listing": lambda: run_listing(prt_path),
            "import_sprites": lambda: run_import(prt_path),
            "baseline": lambda: run_baseline(pre)}
    times, rises = timed_rounds(rows, rounds, reset_scene)

    best = print_best(times, rises, "baseline")
    ratio = best["import_sprites"] / best["baseline"]
    print()
    listed = checked("listing", best["listing"], best["listing"] < LISTING_LIMIT, f"< {LISTING_LIMIT:g} s", width=26)
    imported = checked("import_sprites / baseline", ratio, ratio <= IMPORT_LIMIT, f"<= {IMPORT_LIMIT:g}", width=26)
    passed = listed and imported
    if args.profile or not imported:
        profile_import(prt_path, args.top)
        reset_scene()
    return 0 if passed else 1


if __name__ == "__main__":
    leave(main())
