"""The character readers fuzzed (docs/characters.md 8): read_characters and read_trams on a level
.dat + .raw, read_character on a folder of loose .oni files, read_tram_file on one TRAM.

Hypothesis mutates OniSplit's own files and generated ones (test_objects_fuzz's mutations:
byte flips, truncations, insertions, u32/u16 fields set to boundary values, links, other
fields' values; the .raw mutated or missing). For every input:

- only ObanError escapes, its message starting with the path it names;
- every texture a character's parts show decodes (Texture.pixels);
- what the import makes of what is read is finite and keeps to docs/characters.md 8: every
  part's rotation at every frame a unit quaternion, the root's motion, the heights and a
  part's translations added up from the root lengths whose squares float32 holds;
- the read's tracemalloc peak stays under max(4 MiB, 80 x the
  bytes read): what grows fastest is a TRAM whose 32 track offsets all name its one longest
  track (14 bytes of frames and values per 7 stored, 32 times: 64 x), checked below.
"""

import os
import tempfile

import characters_generate as cg
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from limits import measured
from paths import DATA as TEST_DATA
from test_objects_fuzz import SETTINGS, mutated

from oban_import.core.errors import ObanError
from oban_import.oni.engine import poses
from oban_import.oni.io.characters.model import Character
from oban_import.oni.io.characters.read import read_character, read_characters
from oban_import.oni.io.container.container import HEADER_DTYPE
from oban_import.oni.io.trams.files import read_tram_file, read_trams
from oban_import.oni.io.trams.tram import Tram
from oban_import.oni.io.trams.write import tram_oni_bytes

DATA = os.path.join(TEST_DATA, "characters")
MAX_SQUARE = float(np.finfo(np.float32).max)
MEMORY_FLOOR, MEMORY_FACTOR = 4 << 20, 80


def _read(path):
    return open(path, "rb").read()


def _seeds():
    level = tuple(_read(os.path.join(DATA, "level", "level3_Final" + ext)) for ext in (".dat", ".raw"))
    loose = {name: _read(os.path.join(DATA, "oni", name)) for name in sorted(os.listdir(os.path.join(DATA, "oni")))}
    scene = cg.standard_scene(np.random.default_rng(5), missing_texture=True)
    del scene.trams["long"], scene.trams["gaps"]        # small seeds: more mutations reach the fields
    for collection in scene.collections.values():
        collection.weights = [w for n, w in zip(collection.animations, collection.weights) if n in scene.trams]
        collection.animations = [n for n in collection.animations if n in scene.trams]
    with tempfile.TemporaryDirectory() as folder:
        path = cg.write_level(scene, folder)
        generated = (_read(path), _read(path[:-4] + ".raw"))
    trams = {name: cg.loose_file_bytes(scene, "TRAM" + name) for name in scene.trams}
    trams.update({name[4:-4]: data for name, data in loose.items() if name.startswith("TRAM")})
    return level, generated, loose, trams


LEVEL, GENERATED, LOOSE, TRAMS = _seeds()


def outcomes(found):
    """Every texture a character's parts show decoded; the Trams' arrays touched."""
    characters = found if isinstance(found, list) and found and isinstance(found[0], Character) else \
        [found] if isinstance(found, Character) else []
    for character in characters:
        for part in character.body.parts:
            if part.mesh is not None and part.mesh.texture is not None:
                assert part.mesh.texture.pixels.shape[2] == 4
    return found


def within_limits(reader, path, extra_bytes=0):
    size = os.path.getsize(path) + extra_bytes
    outcome, peak = measured(lambda: outcomes(reader(path)))
    limit = max(MEMORY_FLOOR, MEMORY_FACTOR * size)
    assert peak < limit, f"peak {peak} bytes for {size} bytes read"
    if isinstance(outcome, ObanError):
        message = str(outcome)
        assert message.startswith(f"{outcome.path}: "), message
        assert os.path.dirname(outcome.path) == os.path.dirname(path), message
        assert len(message) < 1000, message[:200]
    else:
        assert isinstance(outcome, (Character, Tram, list))
        kept_within_float32(outcome)
    return outcome


def kept_within_float32(found):
    """What the import makes of the Trams and bodies read (poses.py) is finite, within the lengths
    docs/characters.md 8 keeps (their squares at most float32's largest)."""
    found = found if isinstance(found, list) else [found]
    trams = [t for t in found if isinstance(t, Tram)] + [t for c in found if isinstance(c, Character)
                                                         for t in c.animations]
    for tram in trams:
        rotations = poses.part_rotations(tram)
        assert np.allclose(np.linalg.norm(rotations, axis=2), 1.0, rtol=0, atol=1e-9), tram.name
        location, heights = poses.root_motion(tram)
        assert np.square(location).sum(axis=1).max() <= MAX_SQUARE and np.square(heights).max() <= MAX_SQUARE
    for character in (c for c in found if isinstance(c, Character)):
        body = character.body
        reach = np.linalg.norm(body.translations, axis=1)
        for part, parent in enumerate(body.parents.tolist()):   # parents first
            assert parent < part
            reach[part] += reach[parent] if parent >= 0 else 0.0
        assert np.square(reach).max() <= MAX_SQUARE, character.name


@pytest.fixture
def folder():
    with tempfile.TemporaryDirectory(prefix="oban-characters-fuzz-") as path:
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


@settings(max_examples=500, **SETTINGS)
@given(case=level_case(), reader=st.sampled_from([read_characters, read_trams]))
def test_level_fuzz(folder, case, reader):
    dat, raw = case
    path = _write(os.path.join(folder, "level3_Final.dat"), dat)
    if raw is not None:
        _write(os.path.join(folder, "level3_Final.raw"), raw)
    within_limits(reader, path, len(raw or b""))


@settings(max_examples=400, **SETTINGS)
@given(name=st.sampled_from(sorted(LOOSE)), data=st.data())
def test_loose_folder_fuzz(folder, name, data):
    for other, contents in LOOSE.items():
        _write(os.path.join(folder, other), contents)
    _write(os.path.join(folder, name), data.draw(mutated(LOOSE[name])))
    within_limits(read_character, os.path.join(folder, "ONCCchar0.oni"), sum(map(len, LOOSE.values())))


@settings(max_examples=500, **SETTINGS)
@given(name=st.sampled_from(sorted(TRAMS)), data=st.data())
def test_tram_file_fuzz(folder, name, data):
    path = _write(os.path.join(folder, f"TRAM{name}.oni"), data.draw(mutated(TRAMS[name])))
    within_limits(read_tram_file, path)


@settings(max_examples=200, **SETTINGS)
@given(data=st.binary(max_size=700), reader=st.sampled_from([read_character, read_characters, read_tram_file,
                                                             read_trams]),
       extension=st.sampled_from([".dat", ".oni"]))
def test_random_bytes(folder, data, reader, extension):
    within_limits(reader, _write(os.path.join(folder, "x" + extension), data))


def test_seeds_read_cleanly(folder):
    for dat, raw in (LEVEL, GENERATED):
        path = _write(os.path.join(folder, "level3_Final.dat"), dat)
        _write(os.path.join(folder, "level3_Final.raw"), raw)
        assert all(isinstance(c, Character) for c in within_limits(read_characters, path, len(raw)))
        assert all(isinstance(t, Tram) for t in within_limits(read_trams, path, len(raw)))
    for name, data in TRAMS.items():
        assert isinstance(within_limits(read_tram_file, _write(os.path.join(folder, f"TRAM{name}.oni"), data)), Tram)


def test_a_huge_frame_count_is_refused_before_allocating(folder):
    """A TRAM claiming 65535 frames of 32 parts is refused by its raw data's size, not by memory."""
    data = bytearray(TRAMS["char0_stand104"])
    at = _record_at(data)
    data[at + 0x164:at + 0x166] = b"\xff\xff"
    error = within_limits(read_tram_file, _write(os.path.join(folder, "TRAMhuge.oni"), bytes(data)))
    assert isinstance(error, ObanError) and "outside the raw table" in str(error)


def test_legitimate_worst_case_fits(folder):
    """32 parts whose offsets all name one track of 4681 keys (all the u8 gaps of 1): the largest
    output per byte read, within the limits."""
    frames = 4681
    rng = np.random.default_rng(0)
    track = cg.random_track(rng, frames, 6, max_gap=1)
    tram = Tram(name="worst", frames=frames, key_size=6, flags=0, used_parts=0, replaced_parts=0,
                heights=np.ones(frames, np.float32), velocities=np.zeros((frames, 2), np.float32), tracks=[track])
    data = bytearray(tram_oni_bytes(tram))
    header_at, raw_at = _record_at(data), int(np.frombuffer(data, HEADER_DTYPE, 1)[0]["raw_offset"])
    record = np.frombuffer(bytes(data), cg.tr.RECORD_DTYPE, 1, header_at)[0]
    rotations = raw_at + int(record["rotations_at"])
    body = bytes(data[rotations + 2:])
    data[header_at + 0x162:header_at + 0x164] = (32).to_bytes(2, "little")
    data[rotations:] = np.full(32, 64, "<u2").tobytes() + body   # 32 offsets, all to the one track
    data[0x34:0x38] = (len(data) - raw_at).to_bytes(4, "little")    # the raw table's size
    found = within_limits(read_tram_file, _write(os.path.join(folder, "TRAMworst.oni"), bytes(data)))
    assert isinstance(found, Tram) and found.parts == 32
    assert all(np.array_equal(t.frames, track.frames) for t in found.tracks)


def _record_at(data):
    return int(np.frombuffer(data, HEADER_DTYPE, 1)[0]["data_offset"]) + 8
