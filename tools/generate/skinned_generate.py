"""Generated skinned meshes (docs/characters.md, "Skinned meshes") for the tests and
benchmarks/skinned_split_speed.py: a grid of quads (some split into two triangles) over a
body's parts, each part a band of columns, every vertex weighted to its band's part with spill
onto the next band's near the seams (some heavier, some equal), the groups made in a shuffled
order beside an empty group that names no part. Needs bpy."""

import bpy
import numpy as np

from oban_import.blender import compat

LEVELS = np.round(np.arange(1, 11) / 10, 1).astype(np.float32)   # the weights given: 0.1 .. 1.0
EMPTY_GROUP = "Hair"                                              # a group of no weight, naming no part


def grid_polygons(rows, columns, split_every=7):
    """(corners, sizes) of a rows x columns grid of quads over (rows + 1) x (columns + 1)
    points, row after row; the quads (i + j) % split_every == 0 as two triangles, after the
    quads."""
    i, j = np.divmod(np.arange(rows * columns), columns)
    a = i * (columns + 1) + j
    quads = np.stack([a, a + 1, a + columns + 2, a + columns + 1], axis=1)
    split = (i + j) % split_every == 0
    halves = quads[split]
    triangles = np.concatenate([halves[:, [0, 1, 2]], halves[:, [0, 2, 3]]])
    corners = np.concatenate([quads[~split].ravel(), triangles.ravel()]).astype(np.int32)
    sizes = np.concatenate([np.full((~split).sum(), 4), np.full(len(triangles), 3)]).astype(np.int32)
    return corners, sizes


def skinned_grid(name, part_names, rows, columns, seed=0):
    """A mesh object `name` (not linked) of a rows x columns grid, 2 Blender units wide and
    high, weighted to `part_names` (each a band of columns); its vertex groups in a shuffled
    order, EMPTY_GROUP among them. Returns (object, weights (groups, vertices) float32 as
    given, each vertex's band part)."""
    rng = np.random.default_rng(seed)
    y, x = np.divmod(np.arange((rows + 1) * (columns + 1)), columns + 1)
    points = np.stack([2.0 * x / columns - 1.0, 0.1 * rng.standard_normal(len(x)), 2.0 * y / rows], axis=1)
    corners, sizes = grid_polygons(rows, columns)
    uvs = np.stack([x / columns, y / rows], axis=1)[corners]
    mesh = bpy.data.meshes.new(name)
    compat.set_polygons(mesh, points.astype(np.float32), corners, sizes, uvs.astype(np.float32), "UVMap")
    mesh.update(calc_edges=True)
    compat.set_smooth(mesh)
    for material in ("skin", "cloth"):
        mesh.materials.append(bpy.data.materials.get(material) or bpy.data.materials.new(material))
    compat.set_material_indices(mesh, (rng.random(len(sizes)) < 0.3).astype(np.int32))
    obj = bpy.data.objects.new(name, mesh)

    bands = len(part_names)
    band = np.minimum(x * bands // (columns + 1), bands - 1)
    order = [EMPTY_GROUP, *part_names]
    rng.shuffle(order)
    weights = np.zeros((len(order), len(x)), np.float32)
    home = np.array([order.index(part_names[b]) for b in band])
    weights[home, np.arange(len(x))] = rng.choice(LEVELS[4:], len(x))       # 0.5 .. 1.0
    seam = (band < bands - 1) & ((x + 1) * bands // (columns + 1) > band)   # the band's last column
    spill = np.flatnonzero(seam & (rng.random(len(x)) < 0.8))
    neighbour = np.array([order.index(part_names[b + 1]) for b in band[spill]], np.int64)
    weights[neighbour, spill] = rng.choice(LEVELS, len(spill))
    for index, group_name in enumerate(order):
        group = obj.vertex_groups.new(name=group_name)
        for level in LEVELS:
            members = np.flatnonzero(weights[index] == level)
            if len(members):
                group.add(members.tolist(), float(level), "REPLACE")
    return obj, weights, np.array([part_names.index(order[h]) for h in home])
