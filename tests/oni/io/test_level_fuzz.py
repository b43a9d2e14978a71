"""The level readers fuzzed (docs/level.md): read_level on OniSplit's level .dat + .raw, on its
loose files (a loose ONLV with its AKEV, lists and classes beside it), on its environment
alone, on a generated level (.dat and loose) and on random bytes.

Hypothesis mutates the files: byte flips, truncations, insertions, u32/u16 fields (counts,
links, sizes, offsets, indices) set to boundary values, nearby links or other fields' values;
the .raw truncated or missing. For every input:

- only ObanError escapes, its message starting with the path it names (a file of the folder);
- every texture the read gives (the environment's, the classes' meshes', the doors') decodes;
- its tracemalloc peak stays under max(4 MiB, 80 x the bytes read).
"""

import os
import tempfile

import level_generate as gen
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limits import measured
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.level.model import LevelContents
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.objects import textures

DATA = os.path.join(TEST_DATA, "environment")
MEMORY_FLOOR, MEMORY_FACTOR = 4 << 20, 80
BOUNDARY = [0, 1, 2, 3, 0x23, 0x24, 0xF8, 0xFF, 0x100, 0x101, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
            0xFFFFFFFF]
SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.function_scoped_fixture])


def _folder(path):
    return {name: open(os.path.join(path, name), "rb").read() for name in sorted(os.listdir(path))}


def _seeds():
    level = _folder(os.path.join(DATA, "level"))
    loose, alone = _folder(os.path.join(DATA, "oni")), _folder(os.path.join(DATA, "akev"))
    assert len(loose) == 69 and len(alone) == 9
    with tempfile.TemporaryDirectory() as folder:
        standard = gen.standard_level(np.random.default_rng(11), missing_texture=True)
        generated = _folder(os.path.dirname(gen.write_level(standard, os.path.join(folder, "dat"))))
        generated_loose = _folder(os.path.dirname(gen.write_loose(standard, os.path.join(folder, "loose"))))
    return level, loose, alone, generated, generated_loose


LEVEL, LOOSE, ALONE, GENERATED, GENERATED_LOOSE = _seeds()
for _fmt in (0, 1, 2):  # the 16-bit formats' tables are built once per process: not part of a read
    textures.decode(bytes(2), 1, 1, _fmt, as_bytes=True)


def read_and_decode(path):
    """read_level(path), every texture it gives decoded (what the Blender side asks for)."""
    contents = read_level(path)
    found = list(contents.environment.textures) if contents.environment else []
    geometries = list(contents.furniture_classes.values()) + [g for c in contents.door_classes.values()
                                                              for g in c.geometries if g]
    found += [e.mesh.texture for g in geometries for e in g.elements if e.mesh]
    found += [t for door in contents.doors for t in door.textures]
    for texture in found:
        if texture is not None:
            assert texture.rgba8.shape == (texture.height, texture.width, 4)
    return contents


def within_limits(path, size):
    outcome, peak = measured(lambda: read_and_decode(path))
    assert peak < max(MEMORY_FLOOR, MEMORY_FACTOR * size), f"peak {peak} bytes for {size} bytes read"
    if isinstance(outcome, ObanError):
        message = str(outcome)
        assert message.startswith(f"{outcome.path}: "), message
        assert os.path.dirname(os.path.abspath(outcome.path)) == os.path.dirname(os.path.abspath(path)), message
        assert len(message) < 1000, message[:200]
    else:
        assert isinstance(outcome, LevelContents)
    return outcome


@st.composite
def mutated(draw, data):
    """`data` with one to four mutations: a bit flipped, a cut, bytes inserted, a u32 or u16 set
    to a boundary value, a nearby link or a small number, or another field's value copied in."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        if not out:
            break
        kind = draw(st.sampled_from(["flip", "cut", "insert", "u32", "u16", "copy"]))
        at = draw(st.integers(0, len(out) - 1))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind in ("u32", "u16"):
            width = 4 if kind == "u32" else 2
            at -= at % width
            value = draw(st.sampled_from(BOUNDARY) | st.integers(0, 300) | st.integers(0, 0xFFFFFFFF)
                         | st.builds(lambda i: i << 8 | 1, st.integers(0, 250)))
            out[at:at + width] = (value & (1 << 8 * width) - 1).to_bytes(width, "little")[:len(out) - at]
        else:
            source = draw(st.integers(0, max(0, len(out) - 4)))
            at -= at % 4
            out[at:at + 4] = out[source:source + 4]
    return bytes(out)


@pytest.fixture
def folder():
    with tempfile.TemporaryDirectory(prefix="oban-level-fuzz-") as path:
        yield path


def write_folder(folder, files, name=None, data=None):
    """`files` in `folder`, the one named `name` replaced by `data` (None: left out)."""
    for other, contents in files.items():
        if other != name:
            with open(os.path.join(folder, other), "wb") as f:
                f.write(contents)
    if name is not None and data is not None:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


@st.composite
def level_case(draw):
    files = draw(st.sampled_from([LEVEL, GENERATED]))
    dat, raw = sorted(files)
    name = draw(st.sampled_from([dat, dat, dat, raw, "no raw"]))
    if name == "no raw":
        return files, raw, None
    return files, name, draw(mutated(files[name]))


@settings(max_examples=300, **SETTINGS)
@given(case=level_case())
def test_level_fuzz(folder, case):
    files, name, data = case
    write_folder(folder, files, name, data)
    dat = next(n for n in files if n.endswith(".dat"))
    within_limits(os.path.join(folder, dat), sum(map(len, files.values())))


@st.composite
def loose_case(draw):
    files, entry = draw(st.sampled_from([(LOOSE, "ONLVlevel5.oni"), (GENERATED_LOOSE, "ONLVgen.oni"),
                                         (ALONE, "AKEVlevel5_env.oni")]))
    name = draw(st.sampled_from(sorted(files)))
    data = draw(mutated(files[name]) | st.just(None))
    read = draw(st.sampled_from([entry, name]))
    return files, name, data, read if data is not None or read == entry else entry


@settings(max_examples=300, **SETTINGS)
@given(case=loose_case())
def test_loose_folder_fuzz(folder, case):
    files, name, data, read = case
    write_folder(folder, files, name, data)
    within_limits(os.path.join(folder, read), sum(map(len, files.values())))


@settings(max_examples=150, **SETTINGS)
@given(data=st.binary(max_size=700), extension=st.sampled_from([".dat", ".oni"]))
def test_random_bytes(folder, data, extension):
    write_folder(folder, {"x" + extension: data})
    within_limits(os.path.join(folder, "x" + extension), len(data))


def test_seeds_read_cleanly(folder):
    for files, entry in ((LEVEL, "level5_Final.dat"), (GENERATED, "level7_Final.dat"), (LOOSE, "ONLVlevel5.oni"),
                         (GENERATED_LOOSE, "ONLVgen.oni"), (ALONE, "AKEVlevel5_env.oni")):
        with tempfile.TemporaryDirectory(dir=folder) as place:
            write_folder(place, files)
            read = within_limits(os.path.join(place, entry), sum(map(len, files.values())))
            assert isinstance(read, LevelContents) and read.environment is not None
