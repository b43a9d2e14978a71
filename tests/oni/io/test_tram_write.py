"""The TRAM writer (oni/io/trams/write.py, docs/characters.md 6): OniSplit's own
files (tests/data/characters) written back byte for byte, loose and from the level; every
generated case written and read back to the same Tram with the tracks a reference walker reads;
counts and pointers following edited arrays; what cannot be stored refused."""

import numpy as np
import pytest
from test_tram import (GENERATED, LEVEL, SAMPLES, assert_tracks_equal_reference, cg, plain_tram, record_at, sample_path,
                       samples)

from oban_import.oni.io.trams.files import read_tram_file, read_trams
from oban_import.oni.io.trams.tram import RECORD_DTYPE, Track, Tram
from oban_import.oni.io.trams.write import tram_oni_bytes

__all__ = ["samples"]    # the fixture, shared with test_tram.py


@pytest.mark.parametrize("name", SAMPLES)
def test_read_write_gives_onisplit_bytes(samples, name):
    assert tram_oni_bytes(samples[name]) == open(sample_path(name), "rb").read()


@pytest.mark.parametrize("name", SAMPLES)
def test_level_tram_written_loose_gives_onisplit_bytes(name):
    """The level's TRAM (raw data in the .raw, other pointers) written as a .oni is OniSplit's .oni."""
    packed = {"TRAM" + t.name: t for t in read_trams(LEVEL)}
    assert tram_oni_bytes(packed[name]) == open(sample_path(name), "rb").read()


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_round_trip(tmp_path, name):
    tram = GENERATED[name]
    data = tram_oni_bytes(tram)
    path = tmp_path / f"TRAM{name}.oni"
    path.write_bytes(data)
    back = read_tram_file(str(path))
    assert cg.tram_differences(back, tram) == []
    assert tram_oni_bytes(back) == data
    assert_tracks_equal_reference(back, data)


def test_edited_tram_is_written_consistently(tmp_path, samples):
    """Counts, track offsets and raw pointers follow edited arrays."""
    t = samples["TRAMchar0_punch02"]
    rng = np.random.default_rng(1)
    frames = 80
    edited = Tram(**{**t.__dict__, "frames": frames, "heights": np.arange(frames, dtype=np.float32),
                     "velocities": np.ones((frames, 2), np.float32), "positions": t.positions[:0],
                     "tracks": [cg.random_track(rng, frames, 6) for _ in range(19)],
                     "sounds": np.concatenate([t.sounds] * 3), "attacks": t.attacks[:0],
                     "throw": cg.random_records(rng, cg.tr.THROW_DTYPE, 1), "direct_animations": ("", "x")})
    path = tmp_path / "TRAMedited.oni"
    data = tram_oni_bytes(edited)
    path.write_bytes(data)
    back = read_tram_file(str(path))
    assert cg.tram_differences(back, edited) == []
    record = np.frombuffer(data, RECORD_DTYPE, 1, record_at(data))[0]
    assert (record["frames"], record["sound_count"], record["attack_count"], record["positions_at"]) == (80, 9, 0, 0)
    assert record["throw_at"] > 0 and record["direct_animations"][1] == 0x101


@pytest.mark.parametrize("edit,message", [
    (dict(frames=0), "0 frames"),
    (dict(key_size=8), "key size 8 is not supported"),
    (dict(key_size=7), "key size 7 is not one the engine reads"),
    (dict(heights=np.ones(4, np.float32)), "heights of shape (4,)"),
    (dict(positions=np.zeros(2, cg.tr.POSITION_DTYPE)), "2 position points for 5 frames"),
    (dict(throw=np.zeros(2, cg.tr.THROW_DTYPE)), "2 throws"),
    (dict(footsteps=np.zeros(256, cg.tr.FOOTSTEP_DTYPE)), "256 footsteps (at most 255)"),
    (dict(tracks=[]), "0 tracks"),
    (dict(tracks=[Track(np.array([0, 3]), np.zeros((2, 3), np.uint16))]), "from frame 0 to the last frame 4"),
    (dict(frames=300, heights=np.ones(300, np.float32), velocities=np.zeros((300, 2), np.float32),
          tracks=[Track(np.array([0, 299]), np.zeros((2, 3), np.uint16))]), "1 to 255 frames"),
    (dict(tracks=[Track(np.array([0, 2, 2, 4]), np.zeros((4, 3), np.uint16))]), "1 to 255 frames"),
    (dict(tracks=[Track(np.array([0, 4]), np.zeros((2, 4), np.float32))]), "values of shape (2, 4)"),
    (dict(frames=5000, heights=np.ones(5000, np.float32), velocities=np.zeros((5000, 2), np.float32),
          tracks=[Track(np.arange(5000), np.zeros((5000, 3), np.uint16))] * 3), "past what a u16 offset reaches"),
])
def test_the_writer_refuses_what_cannot_be_stored(edit, message):
    tram = plain_tram()
    with pytest.raises(ValueError) as error:
        tram_oni_bytes(Tram(**{**tram.__dict__, **edit}))
    assert message in str(error.value)
