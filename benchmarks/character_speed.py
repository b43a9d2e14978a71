#!/usr/bin/env python3
"""How fast oban_import brings a character with all its animations into Blender.

    .venvs/bpy-5.0/bin/python benchmarks/character_speed.py [--quick] [--rounds N] [--profile]

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

A seeded character is written as loose .oni files, as OniSplit lays them out
(tools/generate/characters_generate.py), into a scratch folder: its ONCC, a TRBS body of 19
parts (a small mesh each) and a TRAC collection of 700 TRAMs of 20 to 100 frames (60 on
average); one in ten an overlay with 16-byte keys on some of the parts, the others 6-byte keys
on all of them; each TRAM's keys a random 1 to G frames apart, G one of 1 (a key on every
frame) .. 32. Every round runs, side by side in this process, each on a freshly reset empty scene:

  every frame        bpy.ops.import_anim.oban(filepath=ONCC…, keys="EVERY_FRAME"): the armature,
                     the part meshes and one action per TRAM, the first one assigned
  file keys          the same with keys="FILE"
  floor every frame  the floor: the same armature (its bones made in edit mode) and the same
                     actions, F-curves and keys, read back from one such import before the
                     clock starts and written in bulk, as compat.fill_fcurves writes them
                     (keyframe_points.add, foreach_set of co_ui and of LINEAR interpolation,
                     arrays precomputed), a fake user each, the first assigned, then the scene
                     update bpy.ops runs after an operator; no part meshes, no custom
                     properties, no markers (all of which count against the add-on)
  floor file keys    the same for keys="FILE"

Requirements, on the best rounds' ratios of the same run, on 4.5 and 5.0:

  every frame <= 1.5 x floor every frame
  file keys   <= 1.5 x floor file keys

On 4.2 the two ratios are printed for information: its floor is the fastest of the three
Blenders, so there the ratio measures Blender's fixed calls (--budget shows them), not the
add-on's work.

Each row's peak RSS rise is printed (VmHWM reset to the current RSS before each row through
/proc/self/clear_refs), and the process's peak after the rounds. Exit code 0 when both hold,
1 when one fails; --quick (a tenth of the animations, one round) is not judged.

--budget then weighs the add-on's own Python work: each Keys mode imported again with its
reading, bone keys and TRAM properties worked out before the clock starts (kept from a first
import), beside its floor: what the import's Blender calls alone cost, what 1.5 x the floor
leaves for the Python work, and what that work takes in the import (its best less this one's).
"""

import argparse
import datetime
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "generate")]

from measure import (checked, empty_scene, keyframe_co, leave, print_best, profile, quiet,  # noqa: E402
                     registered_addon, scratch_folder, timed_rounds)

ANIMATIONS = 700
FRAMES = (20, 100)          # each TRAM's frame count, uniform: 60 on average
OVERLAY_SHARE = 0.1         # TRAMs that are overlays with 16-byte keys
MAX_GAPS = (1, 2, 4, 8, 16, 32)   # a TRAM's keys are a random 1 .. one of these frames apart
LIMIT = 1.5                 # each Keys mode <= this x its floor (judged from 4.5 on)
JUDGED_FROM = (4, 5, 0)     # 4.2's floor is so fast that its ratio measures Blender's fixed calls
SEED = 27
CHARACTER, BODY = "bench", "biped"
MODES = {"every frame": "EVERY_FRAME", "file keys": "FILE"}

bpy = np = compat = None    # set once Blender's user folders point at the scratch folder


def write_character(folder, count, seed):
    """The character's loose .oni files in `folder`; the ONCC's path and its TRAMs' frames in all."""
    import characters_generate as cgen
    import objects_generate as gen
    rng = np.random.default_rng(seed)
    scene = cgen.CharacterScene()
    parts = len(cgen.BIPED_PARENTS)
    meshes = [f"{BODY}{p:02d}" for p in range(parts)]
    scene.meshes = {name: gen.random_mesh(rng, name) for name in meshes}
    scene.bodies[BODY] = cgen.GenBody(BODY, cgen.BIPED_PARENTS, rng.normal(0, 3, (parts, 3)).astype(np.float32),
                                      meshes)
    scene.characters[CHARACTER] = cgen.GenCharacter(CHARACTER, BODY, None, CHARACTER)
    for i in range(count):
        name, frames = f"{CHARACTER}_{i:03d}", int(rng.integers(FRAMES[0], FRAMES[1] + 1))
        max_gap = int(rng.choice(MAX_GAPS))
        if rng.random() < OVERLAY_SHARE:
            used = int(rng.integers(1, 1 << parts))
            scene.trams[name] = cgen.random_tram(rng, name, frames, 16, max_gap=max_gap, flags=cgen.OVERLAY,
                                                 used=used, replaced=used & int(rng.integers(0, 1 << parts)))
        else:
            scene.trams[name] = cgen.random_tram(rng, name, frames, max_gap=max_gap)
    scene.collections[CHARACTER] = cgen.GenCollection(CHARACTER, list(scene.trams), [100] * count)
    cgen.write_loose(scene, folder)
    return os.path.join(folder, f"ONCC{CHARACTER}.oni"), scene.trams


def run_import(path, names, keys):
    with quiet():
        start = time.perf_counter()
        result = bpy.ops.import_anim.oban(filepath=path, keys=keys)
        elapsed = time.perf_counter() - start
    assert result == {"FINISHED"}, result
    assert len(bpy.data.actions) == len(names) and bpy.data.actions[names[-1]].use_fake_user, len(bpy.data.actions)
    return elapsed


class Floor:
    """What one import made, read back (untimed): the armature's bones (name, head, tail,
    parent index) and each action's F-curves (data_path, index, group) with their keys (flat
    float32 (frame, value) pairs, and LINEAR a byte a key); run() writes it all in bulk."""

    def __init__(self, names):
        data = bpy.data.objects[CHARACTER].data
        self.bones = [(b.name, b.head_local[:], b.tail_local[:], data.bones.find(b.parent.name) if b.parent else -1)
                      for b in data.bones]
        linear = bytes([bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items["LINEAR"].value])
        self.actions = []
        for name in names:
            fcurves = compat.action_fcurves(bpy.data.actions[name])
            assert all(k.interpolation == "LINEAR" for c in fcurves[:1] for k in c.keyframe_points[:1])
            channels = [(c.data_path, c.array_index, c.group.name if c.group else "") for c in fcurves]
            keys = [keyframe_co(c) for c in fcurves]
            self.actions.append((name, channels, [(co, linear * (len(co) // 2)) for co in keys]))
        self.keys = sum(len(co) // 2 for *_, keys in self.actions for co, _ in keys)
        self.fcurves = sum(len(channels) for _, channels, _ in self.actions)

    def __eq__(self, other):
        return (self.bones == other.bones and len(self.actions) == len(other.actions)
                and all(a[:2] == b[:2] and all(np.array_equal(x[0], y[0]) and x[1] == y[1] for x, y in zip(a[2], b[2]))
                        for a, b in zip(self.actions, other.actions)))

    def run(self):
        start = time.perf_counter()
        data = bpy.data.armatures.new(BODY)
        armature = bpy.data.objects.new(CHARACTER, data)
        bpy.context.collection.objects.link(armature)
        bpy.context.view_layer.objects.active = armature
        bpy.ops.object.mode_set(mode="EDIT")
        made = []
        for name, head, tail, parent in self.bones:
            bone = data.edit_bones.new(name)
            bone.head, bone.tail = head, tail
            bone.parent = made[parent] if parent >= 0 else None
            made.append(bone)
        bpy.ops.object.mode_set(mode="OBJECT")
        first = None
        for name, channels, keys in self.actions:
            action, fcurves = compat.new_object_action(armature, name, channels)
            for fcurve, (co, modes) in zip(fcurves, keys):
                keyframes = fcurve.keyframe_points
                keyframes.add(len(modes))
                keyframes.foreach_set("co_ui", co)
                keyframes.foreach_set("interpolation", modes)
            action.use_fake_user = True
            first = first or action
        compat.share_object_action(armature, first)
        bpy.context.view_layer.update()   # what bpy.ops does after every operator that finishes
        return time.perf_counter() - start


def budget(path, names, floors, best, rounds):
    """The import of each Keys mode with its reading, bone keys and TRAM properties kept from a
    first one (what its Blender calls alone cost), beside its floor; what 1.5 x the floor leaves
    for that Python work, against what it takes in the import (its best round less this one)."""
    from oban_import.oni.blender import importer
    from oban_import.oni.blender.characters import build as characters
    saved = importer.read_characters, characters.bones.bone_keys, characters.tram_properties
    kept = {}

    def keep(function, key):
        """function, its result kept under key(its arguments) from the first call on."""
        def call(*args):
            found = key(*args)
            if found not in kept:
                kept[found] = function(*args)
            return kept[found]
        return call
    importer.read_characters = keep(saved[0], lambda path: path)
    characters.bones.bone_keys = keep(saved[1], lambda chunk, rest, axes, scale, every_frame, start:
                                      ("keys", every_frame, id(chunk[0])))   # the same Trams: kept by read_characters
    characters.tram_properties = keep(saved[2], id)
    print("\n--budget: each Keys mode with its reading, bone keys and TRAM properties kept from a first import")
    try:
        rows = {}
        for row, keys in MODES.items():
            reset_scene()
            run_import(path, names, keys)   # what the others keep
            rows[f"{row}, Python work done"] = lambda keys=keys: run_import(path, names, keys)
            rows[f"floor {row}"] = floors[row].run
        times, rises = timed_rounds(rows, rounds, reset_scene)
    finally:
        importer.read_characters, characters.bones.bone_keys, characters.tram_properties = saved
    done = print_best(times, rises, {f"{row}, Python work done": f"floor {row}" for row in MODES}, header="x its floor")
    for row in MODES:
        floor, blender = done[f"floor {row}"], done[f"{row}, Python work done"]
        print(f"{row}: Blender calls alone {blender / floor:.2f} x floor; 1.5 x floor leaves "
              f"{LIMIT * floor - blender:.3f} s for the Python work, which takes {best[row] - blender:.3f} s")


def reset_scene():
    empty_scene("objects", "actions", "armatures")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round on a tenth of the animations, not judged")
    parser.add_argument("--rounds", type=int, help="rounds (default 7; 1 with --quick)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--profile", action="store_true", help="also cProfile one import of each Keys mode")
    parser.add_argument("--budget", action="store_true",
                        help="also time each Keys mode with its Python work done beforehand (see above)")
    parser.add_argument("--top", type=int, default=25, help="rows per --profile listing")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (character, Blender user dirs)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 7)
    count = ANIMATIONS // 10 if args.quick else ANIMATIONS

    with scratch_folder("oban-character-bench-", args.keep) as scratch, registered_addon():
        global bpy, np, compat
        import bpy
        import numpy as np

        from oban_import.blender import compat
        return run(args, rounds, count, scratch)


def run(args, rounds, count, scratch):
    path, trams = write_character(os.path.join(scratch, "character"), count, args.seed)
    names = list(trams)
    print(f"oban_import character speed - {datetime.datetime.now():%Y-%m-%d %H:%M}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    overlays = sum(1 for t in trams.values() if t.key_size == 16)
    stored = sum(len(track.frames) for t in trams.values() for track in t.tracks)
    print(f"character: 19 parts, {count} TRAMs ({overlays} overlays with 16-byte keys), "
          f"{sum(t.frames for t in trams.values()):,} frames, {stored:,} stored keys (seed {args.seed})")
    floors = {}
    for row, keys in MODES.items():   # also warms up first-call costs
        reset_scene()
        run_import(path, names, keys)
        floors[row] = Floor(names)
        reset_scene()
        floors[row].run()
        assert Floor(names) == floors[row], f"{row}: the floor writes other keys than the import"
        print(f"{row}: {floors[row].keys:,} keys on {floors[row].fcurves:,} F-curves (the floor writes the same)")
    rows = {}
    for row, keys in MODES.items():
        rows[row] = lambda keys=keys: run_import(path, names, keys)
        rows[f"floor {row}"] = floors[row].run
    times, rises = timed_rounds(rows, rounds, reset_scene)
    best = print_best(times, rises, {row: f"floor {row}" for row in MODES}, header="x its floor")
    print("peak RSS +MiB: a row's highest rise over the RSS it started at (VmHWM reset before every row)\n")
    ratios = {row: best[row] / best[f"floor {row}"] for row in MODES}
    judged = not args.quick and bpy.app.version >= JUDGED_FROM
    note = "" if judged else "(--quick: not judged)" if args.quick else "(4.2: for information)"
    results = [checked(f"{row} / floor {row}", ratio, ratio <= LIMIT, f"<= {LIMIT:g}", note, width=33)
               for row, ratio in ratios.items()]
    if args.budget:
        budget(path, names, floors, best, rounds)
    if args.profile:
        for row, keys in MODES.items():
            reset_scene()
            profile(f"{row} import", lambda: run_import(path, names, keys), args.top)
        reset_scene()
    return 0 if not judged or all(results) else 1


if __name__ == "__main__":
    leave(main())
