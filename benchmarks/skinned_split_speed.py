#!/usr/bin/env python3
"""How fast a skinned character mesh splits into the body's parts (docs/characters.md,
"Skinned meshes": 20,000 faces split without a Python loop per face).

    .venvs/bpy-5.0/bin/python benchmarks/skinned_split_speed.py [--rounds N] [--profile] [--keep]

Any Python that can `import bpy` (and numpy) will do: .venvs/bpy-4.2, -4.5, -5.0.

The mesh is skinned_generate.skinned_grid (tools/generate): 100 x 175 quads, every seventh
split into two triangles, 20,000 faces over 17,776 points, weighted to the 19 parts of the
sample body (examples/ONCCchar0.oni, imported) with spill at every band's seam, deformed by
its armature through an Armature modifier. Rows, best of N, on the same scene:

  rigid parts     the same 19 parts made of the same faces by oni/export/shared/parts.py, no weights
                  read (what the mesh export of that mesh costs): the floor
  vertex_weights  oban_import.blender.vertex_weights.vertex_weights alone (Geometry Nodes)
  skinned_parts   oban_import.oni.export.bodies.skinned.skinned_parts: the split whole
  per vertex      the weights read vertex by vertex (MeshVertex.groups), the way without
                  Geometry Nodes, for information

Prints the seconds and each row against the floor; for information, whether skinned_parts
stays under a second (what a character's export may spend on it). Not a test: exit code 0 unless the split fails.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for folder in (ROOT, os.path.join(ROOT, "tools", "generate")):
    if folder not in sys.path:
        sys.path.insert(0, folder)

from measure import empty_scene, leave, profile, registered_addon, scratch_folder  # noqa: E402

ROWS, COLUMNS = 100, 175
SAMPLE = os.path.join(ROOT, "examples", "ONCCchar0.oni")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="a cProfile of one split")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    with scratch_folder("skinned-speed-", args.keep), registered_addon():
        run(args)
    leave(0)


def run(args):
    import bpy
    import skinned_generate as sgen

    from oban_import.blender.vertex_weights import vertex_weights
    from oban_import.oni.blender.characters.armature_body import armature_body
    from oban_import.oni.export.bodies.skinned import skinned_parts
    from oban_import.oni.export.shared.parts import SceneMesh, faces_part
    from oban_import.ui.options import CharacterExportSettings

    empty_scene("objects")
    assert bpy.ops.import_anim.oban(filepath=SAMPLE, character_animations="NONE") == {"FINISHED"}
    body = armature_body(bpy.data.objects["char0"], CharacterExportSettings().global_scale, CharacterExportSettings().axes)
    obj, _, _ = sgen.skinned_grid("skinned", body.names, ROWS, COLUMNS)
    bpy.context.scene.collection.objects.link(obj)
    obj.modifiers.new("Armature", "ARMATURE").object = body.armature
    bpy.context.view_layer.update()
    split = skinned_parts(obj, body, "benchmark")
    print(f"{len(obj.data.polygons)} faces, {len(obj.data.vertices)} points, {len(obj.vertex_groups)} vertex "
          f"groups; {split.disagreeing} faces whose corners disagree; points per part "
          f"{min(len(p.points) for p in split.parts)} .. {max(len(p.points) for p in split.parts)}")

    def rigid():
        scene = SceneMesh(obj.data, body.scale, body.axes, 1)
        return [faces_part(scene, split.face_parts == index, name, 0, "", name, body.rest[index, :3, 3])
                for index, name in enumerate(body.names)]

    def per_vertex():
        return [[(element.group, element.weight) for element in vertex.groups] for vertex in obj.data.vertices]

    groups = [group.name for group in obj.vertex_groups]
    rows = {"rigid parts": rigid, "vertex_weights": lambda: vertex_weights(obj.data, groups, "benchmark"),
            "skinned_parts": lambda: skinned_parts(obj, body, "benchmark"), "per vertex": per_vertex}
    best = {}
    for name, call in rows.items():
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        best[name] = min(times)
        print(f"{name:<15} {best[name]:7.3f} s  x rigid parts {best[name] / best['rigid parts']:6.2f}  "
              f"runs {' '.join(f'{t:.3f}' for t in times)}", flush=True)
    print(f"\nskinned_parts / rigid parts = {best['skinned_parts'] / best['rigid parts']:.2f}; "
          f"per vertex / vertex_weights = {best['per vertex'] / best['vertex_weights']:.1f}")
    print(f"info: skinned_parts {best['skinned_parts']:.3f} s for 20,000 faces "
          f"({'under' if best['skinned_parts'] < 1.0 else 'OVER'} a second)")
    if args.profile:
        profile("split", rows["skinned_parts"], 15)


if __name__ == "__main__":
    main()
