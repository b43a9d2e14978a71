"""The source of a generated level for OniSplit's -create:level (docs/level.md 11), written with
the add-on's own writers: 120 quads on walls, floors and ceilings within the sample's rooms, a
quarter of them triangles, random shades and texture coordinates (multiples of 1/64), every
quad flag OniSplit takes from the master XML (each alone once, then up to three together, in
runs), the sample level's rooms, ghost, doors and furniture. OniSplit built
tests/data/environment/generated/level from it (tests/data/environment/README.md).

    python tools/generate/rebuild_generate.py OUT_FOLDER [SEED]   (SEED 7 made the stored one)
"""

import os
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from oban_import.oni.io.level.model import Quads  # noqa: E402
from oban_import.oni.io.level.read import read_level  # noqa: E402
from oban_import.oni.io.level_rebuild.collada import DERIVED, environment_collada, rooms_collada  # noqa: E402
from oban_import.oni.io.level_rebuild.master_xml import master_xml  # noqa: E402

SAMPLE = os.path.join(ROOT, "tests", "data", "environment")
GHOSTS, DOOR_FRAME, TRIANGLE = 0x2 | 0x4 | 0x8, 0x1, 0x40
TEXTURES = ["env_floor0", "env_wall", "env_ceil", "env_floor1", "env_glass"]   # the sample's TXMPs
SQUARE = np.array([[0, 0], [0, 1], [1, 1], [1, 0]], np.float64)


def generated_quads(rng, count=120) -> Quads:
    told = [1 << b for b in range(32) if not (1 << b) & (GHOSTS | DOOR_FRAME | TRIANGLE | DERIVED)]
    flags = np.zeros(count // 2, np.uint32)
    flags[:len(told)] = told
    for i in range(len(told), len(flags)):
        flags[i] = np.bitwise_or.reduce(np.array(rng.choice(told, rng.integers(0, 4), replace=False), np.uint32),
                                        initial=np.uint32(0))
    flags = np.repeat(flags, 2)                                  # runs of two: a node each
    plane = rng.integers(0, 3, count)                            # 0 a floor, 1 a wall along z, 2 one along x
    corners = np.repeat(np.column_stack([rng.integers(0, 34, count) * 10.0, rng.integers(0, 3, count) * 10.0,
                                         rng.integers(0, 9, count) * 10.0])[:, None, :], 4, axis=1)
    size = rng.integers(1, 4, count)[:, None] * 2.5
    for k, (a, b) in enumerate(((0, 2), (1, 2), (0, 1))):
        corners[plane == k, :, a] += SQUARE[:, 0] * size[plane == k]
        corners[plane == k, :, b] += SQUARE[:, 1] * size[plane == k]
    triangle = rng.random(count) < 0.25
    corners[triangle, 3] = corners[triangle, 2]
    flags[triangle] |= np.uint32(TRIANGLE)
    textures = np.repeat(rng.integers(0, len(TEXTURES), count // 3 + 1), 3)[:count].astype(np.int32)
    return Quads(points=corners.astype(np.float32),
                 texture_coordinates=(rng.integers(0, 257, (count, 4, 2)) / 64.0).astype(np.float32),
                 shades=rng.integers(0, 1 << 32, (count, 4), dtype=np.uint64).astype(np.uint32), flags=flags,
                 textures=textures, texture_names=list(TEXTURES))


def write_source(folder, seed=7, name="level7"):
    sample = read_level(os.path.join(SAMPLE, "level", "level5_Final.dat"))
    env = sample.environment
    os.makedirs(folder, exist_ok=True)
    text, node_flags = environment_collada(generated_quads(np.random.default_rng(seed)))
    ghosts = np.flatnonzero((env.object_tags == -1) & ((env.flags & GHOSTS) != 0))
    files = {f"{name}_env.dae": text,
             f"{name}_rooms.dae": rooms_collada(env.room_floors, env.room_floor_counts,
                                                env.points[env.quad_points[ghosts]]),
             f"{name}.xml": master_xml(name, node_flags, sample.sky, [f"{name}_objects.xml"])}
    for file, content in files.items():
        with open(os.path.join(folder, file), "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    shutil.copy(os.path.join(SAMPLE, "rebuild", "level5_objects.xml"), os.path.join(folder, f"{name}_objects.xml"))


if __name__ == "__main__":
    write_source(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7)
