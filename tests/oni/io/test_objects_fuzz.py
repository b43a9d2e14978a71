"""The object readers fuzzed (docs/objects.md): read_objects on a level .dat + .raw and on
a folder of loose .oni files, read_mesh_file, read_texture_file.

Hypothesis mutates OniSplit's own files and generated ones: byte flips, truncations,
insertions, u32/u16 fields (counts, links, offsets, sizes, formats) set to boundary
values or other fields' values, the .raw truncated or missing. For every input:

- only ObanError escapes, its message starting with the path it names;
- every texture read decodes (Texture.pixels and .rgba8, which the reader leaves to
  the first use) without an error, inside the limits below;
- its tracemalloc peak stays under max(4 MiB, 80 x the bytes read). What legitimately
  grows fastest is decoded pixels: 16 bytes of float32 RGBA per texel from half a byte
  (DXT1), 32 x, and the decode's palette indices while the image is gathered, about
  64 x in all (test_legitimate_worst_case_fits); a count trusted from a file would cost
  far more.
"""

import os
import struct
import tempfile

import numpy as np
import objects_generate as gen
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limits import measured
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.objects import textures
from oban_import.oni.io.objects.model import Level, Mesh, Texture
from oban_import.oni.io.objects.read import read_mesh_file, read_objects, read_texture_file

DATA = os.path.join(TEST_DATA, "objects")
MEMORY_FLOOR, MEMORY_FACTOR = 4 << 20, 80
SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.function_scoped_fixture])
BOUNDARY = [0, 1, 2, 0xFF, 0x100, 0x101, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


def _read(path):
    return open(path, "rb").read()


def _seeds():
    level = (_read(os.path.join(DATA, "level", "level9_Final.dat")), _read(os.path.join(DATA, "level", "level9_Final.raw")))
    loose = {name: _read(os.path.join(DATA, "oni", name)) for name in sorted(os.listdir(os.path.join(DATA, "oni")))}
    assert len(loose) == 25   # OniSplit's loose files: 12 M3GM, 6 TXMP, 6 OBAN, 1 OBOA
    with tempfile.TemporaryDirectory() as folder:
        scene = gen.standard_scene(np.random.default_rng(5), missing_texture=True)
        path = gen.write_level(*scene, folder)
        generated = (_read(path), _read(path[:-4] + ".raw"))
    return level, generated, loose


LEVEL, GENERATED, LOOSE = _seeds()
for _fmt in (0, 1, 2):  # the 16-bit formats' tables are built once per process: not part of a read
    textures.decode(bytes(2), 1, 1, _fmt)
    textures.decode(bytes(2), 1, 1, _fmt, as_bytes=True)


def read_and_decode(reader, path):
    """reader(path), every texture it gives decoded both ways (what the Blender side asks for)."""
    outcome = reader(path)
    if isinstance(outcome, Level):
        found = [m.texture for o in outcome.objects for m in o.meshes]
    else:
        found = [outcome.texture if isinstance(outcome, Mesh) else outcome]
    for texture in found:
        if texture is not None:
            assert texture.pixels.shape == texture.rgba8.shape == (texture.height, texture.width, 4)
    return outcome


def within_limits(reader, path, extra_bytes=0):
    size = os.path.getsize(path) + extra_bytes
    outcome, peak = measured(lambda: read_and_decode(reader, path))
    limit = max(MEMORY_FLOOR, MEMORY_FACTOR * size)
    assert peak < limit, f"peak {peak} bytes for {size} bytes read"
    if isinstance(outcome, ObanError):
        message = str(outcome)
        assert message.startswith(f"{outcome.path}: "), message
        assert os.path.dirname(outcome.path) == os.path.dirname(path), message
        assert len(message) < 1000, message[:200]
    else:
        assert isinstance(outcome, (Level, Mesh, Texture))
    return outcome


@st.composite
def mutated(draw, data):
    """`data` with a few mutations (each a flip, cut, insertion or field overwrite)."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "u32", "u16", "copy"]))
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del out[draw(st.integers(0, len(out) - 1)):]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind in ("u32", "u16"):
            width = 4 if kind == "u32" else 2
            at -= at % width
            if at + width <= len(out):
                value = draw(st.sampled_from(BOUNDARY) | st.integers(0, 0xFFFFFFFF))
                if draw(st.booleans()):  # a nearby link, or a nearby size
                    value = (draw(st.integers(0, 120)) << 8) | 1
                out[at:at + width] = (value & (1 << 8 * width) - 1).to_bytes(width, "little")
        else:  # another field's value
            source = draw(st.integers(0, max(0, len(out) - 4)))
            at -= at % 4
            out[at:at + 4] = out[source:source + 4]
    return bytes(out)


@pytest.fixture
def folder():
    with tempfile.TemporaryDirectory(prefix="oban-objects-fuzz-") as path:
        yield path


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


@st.composite
def level_case(draw):
    dat, raw = draw(st.sampled_from([LEVEL, GENERATED]))
    target = draw(st.sampled_from(["dat", "dat", "dat", "raw", "no raw"]))
    if target == "dat":
        dat = draw(mutated(dat))
    elif target == "raw":
        raw = draw(mutated(raw))
    else:
        raw = None
    return dat, raw


@settings(max_examples=600, **SETTINGS)
@given(case=level_case())
def test_level_fuzz(folder, case):
    dat, raw = case
    path = _write(os.path.join(folder, "level9_Final.dat"), dat)
    raw_path = os.path.join(folder, "level9_Final.raw")
    if raw is None:
        if os.path.exists(raw_path):
            os.remove(raw_path)
    else:
        _write(raw_path, raw)
    within_limits(read_objects, path, len(raw or b""))


@settings(max_examples=400, **SETTINGS)
@given(name=st.sampled_from(sorted(LOOSE)), data=st.data())
def test_loose_folder_fuzz(folder, name, data):
    for other, contents in LOOSE.items():
        _write(os.path.join(folder, other), contents)
    _write(os.path.join(folder, name), data.draw(mutated(LOOSE[name])))
    within_limits(read_objects, os.path.join(folder, "OBOAlevel9_objects.oni"), sum(map(len, LOOSE.values())))


@settings(max_examples=400, **SETTINGS)
@given(name=st.sampled_from([n for n in sorted(LOOSE) if n[:4] in ("M3GM", "TXMP")]), data=st.data())
def test_mesh_and_texture_file_fuzz(folder, name, data):
    path = _write(os.path.join(folder, name), data.draw(mutated(LOOSE[name])))
    texture = _write(os.path.join(folder, "TXMPtex00_bgra4444.oni"), LOOSE["TXMPtex00_bgra4444.oni"]) \
        if name.startswith("M3GM") else None
    within_limits(read_mesh_file if name.startswith("M3GM") else read_texture_file, path,
                  os.path.getsize(texture) if texture else 0)


@settings(max_examples=200, **SETTINGS)
@given(data=st.binary(max_size=700), reader=st.sampled_from([read_objects, read_mesh_file, read_texture_file]),
       extension=st.sampled_from([".dat", ".oni"]))
def test_random_bytes(folder, data, reader, extension):
    within_limits(reader, _write(os.path.join(folder, "x" + extension), data))


def test_seeds_read_cleanly(folder):
    for dat, raw in (LEVEL, GENERATED):
        path = _write(os.path.join(folder, "level9_Final.dat"), dat)
        _write(os.path.join(folder, "level9_Final.raw"), raw)
        assert isinstance(within_limits(read_objects, path, len(raw)), Level)


def test_a_huge_texture_count_is_refused_before_allocating(folder):
    """A TXMP claiming 65535 x 65535 RGBA is refused by the raw data's size, not by memory."""
    data = bytearray(LOOSE["TXMPtex03_rgba.oni"])
    struct.pack_into("<HH", data, 0x88 + 0x84, 0xFFFF, 0xFFFF)
    error = within_limits(read_texture_file, _write(os.path.join(folder, "TXMPtex03_rgba.oni"), bytes(data)))
    assert isinstance(error, ObanError) and "outside the raw table" in str(error)


def test_legitimate_worst_case_fits(folder):
    """A 1024 x 512 DXT1 texture: the largest output per byte read."""
    scene = gen.Scene()
    t, raw = gen.random_texture(np.random.default_rng(0), "big", textures.DXT1, 1024, 512)
    scene.textures[t.name] = t
    gen.write_loose(scene, {t.name: raw}, folder)
    path = os.path.join(folder, "TXMPbig.oni")
    texture = within_limits(read_texture_file, path)
    assert texture.pixels.shape == (512, 1024, 4)
