#!/usr/bin/env python3
"""How fast each new object gets its action and its 10 grouped F-curves: the way Blender's
documentation shows (4.4's upgrade guide on slotted actions: ActionSlots.new, a layer, a
keyframe strip, its channelbag, then F-curves and a group; before 4.4, Action.fcurves.new
and a group) against compat.new_object_action, side by side, best of several rounds.

    .venvs/bpy-4.5/bin/python benchmarks/fcurve_setup.py [--rounds N]

Each row makes N Empties with their actions first (untimed), then times giving every one
its F-curves. ActionSlots.new names the slot with a walk over every data block of the
file, so from 4.4 its cost per object grows with the objects present; compat makes the
slot with the first F-curve (Action.fcurve_ensure_for_datablock), which names it without.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]

from measure import leave, scratch_folder  # noqa: E402

COUNTS = (107, 1067, 3000)   # a tenth of the CD's OBANs, all of them, a big batch
GROUP = "Object Transforms"
CHANNELS = [(path, index, GROUP) for path, size in (("location", 3), ("rotation_quaternion", 4), ("scale", 3))
            for index in range(size)]


def documented(bpy, obj, action):
    """One object's action and F-curves as the documentation shows it."""
    animation_data = obj.animation_data_create()
    animation_data.action = action
    if bpy.app.version >= (4, 4, 0):
        slot = action.slots.new(id_type='OBJECT', name=obj.name)
        animation_data.action_slot = slot
        owner = action.layers.new("Layer").strips.new(type='KEYFRAME').channelbag(slot, ensure=True)
    else:
        owner = action
    group = owner.groups.new(GROUP)
    for data_path, index, _ in CHANNELS:
        owner.fcurves.new(data_path, index=index).group = group


def timed(bpy, count, make):
    bpy.ops.wm.read_homefile(use_empty=True)
    pairs = [(bpy.data.objects.new(f"Bench_{i:04d}", None), bpy.data.actions.new(f"Bench_{i:04d}"))
             for i in reversed(range(count))]
    start = time.perf_counter()
    for obj, action in pairs:
        make(obj, action)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with scratch_folder("oban-fcurve-setup-"):
        import bpy

        from oban_import.blender import compat
        rows = {"documented": lambda obj, action: documented(bpy, obj, action),
                "compat": lambda obj, action: compat.new_object_action(obj, obj.name, CHANNELS, action)}
        print(f"Blender {bpy.app.version_string}: {args.rounds} rounds, best of each (us an object)")
        print(f"{'objects':>7} {'documented':>11} {'compat':>8} {'documented / compat':>20}")
        for count in COUNTS:
            best = {}
            for _ in range(args.rounds):
                for label, make in rows.items():
                    best[label] = min(best.get(label, float("inf")), timed(bpy, count, make) / count)
            print(f"{count:7,} {best['documented'] * 1e6:11.1f} {best['compat'] * 1e6:8.1f} "
                  f"{best['documented'] / best['compat']:20.2f}")
    return 0


if __name__ == "__main__":
    leave(main())
