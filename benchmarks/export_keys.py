#!/usr/bin/env python3
"""Keys the exporter writes, with unit quaternions and with fitted key lengths
(oni/engine/fit_keys.py length_ratios), for motions an animator makes: an eased door, a
motion keyed the engine's way with non-unit quaternions, a camera circling.

    .venvs/bpy-5.0/bin/python benchmarks/export_keys.py   (no Blender: any Python with numpy and pytest)
"""

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "generate")]

from oban_generate import camera_on_a_circle, non_unit_keys, rotation_about  # noqa: E402

from oban_import.oni.engine.fit_keys import engine_keys_from_matrices, fewest_keys  # noqa: E402
from oban_import.oni.engine.frames import frame_matrices  # noqa: E402
from oban_import.oni.io.oban.record import IDENTITY  # noqa: E402
from oban_import.ui.listing import format_table  # noqa: E402


def motions():
    t = np.linspace(0, 1, 100)
    yield "eased door (smoothstep, 100 frames)", rotation_about(2, np.pi / 2 * (3 * t ** 2 - 2 * t ** 3))
    yield "steady door (100 frames)", rotation_about(2, np.pi / 2 * t)
    yield "non-unit keys (5 over 240 frames)", frame_matrices(non_unit_keys(0))
    yield "camera circling (2,400 frames)", camera_on_a_circle(2400)


def main():
    rows = []
    for name, wanted in motions():
        quaternions, positions, _ = engine_keys_from_matrices(wanted, IDENTITY, False)
        unit = len(fewest_keys(quaternions, positions, fit_lengths=False))
        fitted = len(fewest_keys(quaternions, positions))
        rows.append((name, len(wanted), unit, fitted, f"{unit / fitted:.2f}"))
    print(format_table(("motion", "frames", "keys (unit)", "keys (fitted lengths)", "ratio"), rows,
                       numeric=("frames", "keys (unit)", "keys (fitted lengths)", "ratio")))


if __name__ == "__main__":
    main()
