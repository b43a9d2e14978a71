#!/usr/bin/env python3
"""How fast the OBAN reader refuses hostile files, against its pace on ordinary ones (no Blender).

    .venvs/bpy-5.0/bin/python benchmarks/hostile_reads.py [--rounds N]

The tests check what such files give and the memory they take (tests/oni/io/test_oban_xml.py,
test_oban_fuzz.py); this judges their time. Each hostile input (a pathological number of
65,000 characters in every field of the spec's XML example, huge text, markup and element
counts, nested entities, deep nesting, and the reader's regression files in tests/data/regressions)
is read, best of N rounds, beside an ordinary file of its container: a generated XML or level
.dat of many OBANs, whose time gives a cost per byte, and the spec's example, a fixed cost.

Requirement: every hostile read <= LIMIT x (the fixed cost + its size x the cost per byte),
i.e. linear in its bytes as an ordinary file is (a backtracking pattern once took 40 s on
64 KiB). Exit code 0 when all hold, 1 when one fails.
"""

import argparse
import os
import re
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "generate")]

import oban_generate  # noqa: E402
import objects_generate  # noqa: E402

from oban_import.core.errors import ObanError  # noqa: E402
from oban_import.oni.io.oban import onisplit_xml  # noqa: E402
from oban_import.oni.io.oban.read import read_file  # noqa: E402
from oban_import.oni.io.oban.write import xml_bytes  # noqa: E402

LIMIT = 10
DATA = os.path.join(ROOT, "tests", "data")
SPEC = os.path.join(DATA, "xml", "OBANspec_example.xml")
NUMBERS = {"zeros_x": "0" * 65_000 + "x", "ones_x": "1" * 65_000 + "x", "spaces_x": " " * 65_000 + "x",
           "pairs": "1 " * 32_000 + "x", "decimals": "1." + "0" * 65_000 + "x", "exponent": "1e" + "0" * 65_000 + "x"}


def hostile_inputs():
    """(name, bytes, extension) of each hostile input."""
    spec = open(SPEC, encoding="utf-8").read()
    cases = []
    for field in onisplit_xml.FIELDS[:-1] + onisplit_xml.KEY_FIELDS:
        inner = re.search(rf"<{field}>(.*?)</{field}>", spec).group(1)
        for name, text in NUMBERS.items():
            cases.append((f"{field} {name}", spec.replace(f"<{field}>{inner}</{field}>", f"<{field}>{text}</{field}>",
                                                          1).encode(), ".xml"))
    laughs = ('<?xml version="1.0"?>\n<!DOCTYPE Oni [\n <!ENTITY lol0 "lol">\n'
              + "".join(f' <!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">\n' for i in range(1, 10))
              + "]>\n<Oni>&lol9;</Oni>")
    cases += [("billion laughs", laughs.encode(), ".xml"),
              ("deep nesting", ("<Oni>" + "<a>" * 100_000 + "</a>" * 100_000 + "</Oni>").encode(), ".xml"),
              ("huge text", ("<Oni>" + "9" * 10_000_000 + "</Oni>").encode(), ".xml"),
              ("2,000,000 elements", ("<Oni>" + "<a/>" * 2_000_000 + "</Oni>").encode(), ".xml"),
              ("3 MB comment", ("<Oni><!--" + "x" * 3_000_000 + "--></Oni>").encode(), ".xml")]
    for name in sorted(os.listdir(os.path.join(DATA, "regressions"))):
        with open(os.path.join(DATA, "regressions", name), "rb") as f:
            cases.append((name, f.read(), os.path.splitext(name)[1]))
    return cases


def ordinary_inputs():
    """extension -> an ordinary file of that container: many generated OBANs, a few MB."""
    rng = np.random.default_rng(5)
    animations = [oban_generate.random_animation(rng, name=f"a{i}", frames=2000, key_count=2000) for i in range(4)]
    return {".xml": xml_bytes(animations[0]), ".dat": objects_generate.level_file_bytes(animations)}


def best_read(folder, data, extension, rounds):
    path = os.path.join(folder, "OBANbench" + extension)
    with open(path, "wb") as f:
        f.write(data)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        try:
            read_file(path)
        except ObanError:
            pass
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory(prefix="oban-hostile-bench-") as folder:
        fixed = best_read(folder, open(SPEC, "rb").read(), ".xml", args.rounds)
        per_byte = {extension: best_read(folder, data, extension, args.rounds) / len(data)
                    for extension, data in ordinary_inputs().items()}
        print(f"ordinary reads: fixed {fixed * 1e3:.2f} ms; "
              + ", ".join(f"{e} {p * 1e9:.1f} ns a byte" for e, p in per_byte.items()))
        print(f"{'input':40s} {'bytes':>11s} {'s':>8s} {'x linear':>9s}")
        for name, data, extension in hostile_inputs():
            seconds = best_read(folder, data, extension, args.rounds)
            ratio = seconds / (fixed + len(data) * per_byte.get(extension, per_byte[".dat"]))
            ok = ratio <= LIMIT
            failed |= not ok
            print(f"{name:40s} {len(data):11,d} {seconds:8.4f} {ratio:9.2f}{'' if ok else '  FAIL'}")
    print(f"\nevery hostile read <= {LIMIT} x an ordinary read of its size: {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
