#!/usr/bin/env python3
"""How fast the object readers decode textures and read a level (docs/objects.md 4, 5, 8).

    .venvs/bpy-5.0/bin/python benchmarks/texture_decode.py [--rounds N]

Prints texels per second for each TXMP format (a 256 x 256 texture of random bytes, best
of N rounds; requirement: 20 million a second or more for every format), then the read
time of a generated level of 500 objects, 500,000 triangles and 100 textures (256 x 256,
the six formats in turn). Exit code 1 when a format is below the requirement.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "generate")]

import objects_generate as gen  # noqa: E402

from oban_import.oni.io.objects import textures  # noqa: E402
from oban_import.oni.io.objects.read import read_objects  # noqa: E402

SIZE = 256
REQUIRED = 20e6


def best(function, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def big_mesh(rng, name, texture, triangles=1000, strip=100, points=600):
    indices = rng.integers(0, points, (triangles // strip, strip + 2)).astype(np.int32)
    indices[:, 0] |= np.int32(-0x80000000)
    return gen.GenMesh(name, rng.normal(0, 10, (points, 3)).astype(np.float32),
                       rng.normal(size=(points, 3)).astype(np.float32), rng.random((points, 2)).astype(np.float32),
                       indices.ravel(), rng.normal(size=(triangles, 3)).astype(np.float32),
                       np.arange(triangles, dtype=np.int32), texture)


def big_level(folder, rng):
    scene, raws = gen.Scene(), {}
    formats = list(gen.FORMATS.values())
    for i in range(100):
        t, raw = gen.random_texture(rng, f"tex{i:03d}", formats[i % 6], SIZE, SIZE, mipmaps=i % 2 == 1)
        scene.textures[t.name], raws[t.name] = t, raw
    for i in range(500):
        m = big_mesh(rng, f"mesh{i:03d}", f"tex{i % 100:03d}")
        scene.meshes[m.name] = m
        scene.objects.append(gen.GenObject(f"object{i:03d}", [m.name]))
    return gen.write_level(scene, raws, folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"{'format':10} {'texels/s':>14}   ({SIZE} x {SIZE}, best of {args.rounds})")
    slow = []
    for name, fmt in gen.FORMATS.items():
        raw = rng.integers(0, 256, textures.pixel_bytes(SIZE, SIZE, fmt), dtype=np.uint8).tobytes()
        textures.decode(raw, SIZE, SIZE, fmt)  # warm up (a 16-bit format builds its table once)
        rate = SIZE * SIZE / best(lambda: textures.decode(raw, SIZE, SIZE, fmt), args.rounds)
        print(f"{name:10} {rate:14,.0f}{'' if rate >= REQUIRED else '   BELOW 20 million'}")
        if rate < REQUIRED:
            slow.append(name)
    with tempfile.TemporaryDirectory() as folder:
        path = big_level(folder, rng)
        level = read_objects(path)
        count = sum(len(m.triangles) for o in level.objects for m in o.meshes)
        seconds = best(lambda: read_objects(path), max(1, args.rounds // 2))
        print(f"\nlevel: {len(level.objects)} objects, {count:,} triangles, 100 textures "
              f"({os.path.getsize(path) + os.path.getsize(path[:-4] + '.raw'):,} bytes): read in {seconds:.3f} s")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
