"""A TRAM described on an action (oni/io/tram_properties.py) and read back gives the same
TRAM: the same .oni bytes as OniSplit wrote, for every sample and generated animation, with
markers for the timed events and edits of them taken."""

import glob
import os

import numpy as np
import pytest
from paths import DATA

from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.properties import tram_from_properties, tram_markers, tram_properties
from oban_import.oni.io.trams.tram import PART_NAMES
from oban_import.oni.io.trams.write import tram_oni_bytes

SAMPLES = sorted(glob.glob(os.path.join(DATA, "characters", "oni", "TRAM*.oni")))


def test_the_samples_are_all_there():
    assert len(SAMPLES) == 6


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_described_and_read_back_it_is_written_as_onisplit_wrote_it(path):
    tram = read_tram_file(path)
    back = tram_from_properties(tram_properties(tram), tram_markers(tram, list(PART_NAMES)), list(PART_NAMES))
    assert tram_oni_bytes(back) == open(path, "rb").read()


def test_the_walks_footsteps_and_sound_are_markers():
    tram = read_tram_file(os.path.join(DATA, "characters", "oni", "TRAMchar0_walk00.oni"))
    markers = tram_markers(tram, list(PART_NAMES))
    assert markers == [("footstep: Left", 1), ("footstep: Right", 13), ("footstep: Left", 25),
                       ("footstep: Right", 37), ("footstep: Left", 49), ("sound: footstep_walk", 1)]


def test_the_punchs_particles_name_their_part_and_last_frame():
    tram = read_tram_file(os.path.join(DATA, "characters", "oni", "TRAMchar0_punch02.oni"))
    particles = [(name, frame) for name, frame in tram_markers(tram, list(PART_NAMES)) if name.startswith("particle")]
    assert len(particles) == len(tram.particles) > 0
    for (name, frame), stored in zip(particles, tram.particles):
        assert frame == stored["first_frame"]
        assert name.endswith(f", {PART_NAMES[stored['part']]}, to {stored['last_frame']}")


def test_edited_markers_are_what_is_read_back():
    tram = read_tram_file(os.path.join(DATA, "characters", "oni", "TRAMchar0_walk00.oni"))
    markers = tram_markers(tram, list(PART_NAMES))[1:]            # the first footstep deleted
    markers += [("footstep: Right", 7), ("particle: dust, RightFoot, to 9", 4), ("my own note", 3)]
    back = tram_from_properties(tram_properties(tram), markers, list(PART_NAMES))
    assert back.footsteps.tolist() == [(13, 2), (25, 1), (37, 2), (49, 1), (7, 2)]
    assert back.particles.tolist() == [(4, 9, PART_NAMES.index("RightFoot"), 0, b"dust")]
    with pytest.raises(ValueError, match="particle: dust"):
        tram_from_properties(tram_properties(tram), [("particle: dust", 4)], list(PART_NAMES))


def test_the_motion_as_read_is_the_tracks_end_to_end():
    """tram_key_counts, _frames and _values are the parts' keys end to end (each part's as
    read, in part order); key counts that do not add up to the keys are refused."""
    tram = read_tram_file(os.path.join(DATA, "characters", "oni", "TRAMchar0_punch02.oni"))
    described = tram_properties(tram)
    assert described["tram_key_counts"].tolist() == [len(track.frames) for track in tram.tracks]
    assert described["tram_key_frames"].tolist() == [int(f) for track in tram.tracks for f in track.frames]
    assert described["tram_key_values"].tolist() == [float(v) for track in tram.tracks for v in track.values.ravel()]
    described["tram_key_counts"] = described["tram_key_counts"][1:]
    with pytest.raises(ValueError, match="tram_key_counts sum to"):
        tram_from_properties(described, [], list(PART_NAMES))


def test_names_with_bytes_after_their_end_keep_them():
    tram = read_tram_file(os.path.join(DATA, "characters", "oni", "TRAMchar0_walk00.oni"))
    tram.sounds = tram.sounds.copy()
    tram.sounds[0]["name"] = b"step\0garbage"
    tram.impact = b"hit\0\x01\x02" + bytes(10)
    back = tram_from_properties(tram_properties(tram), tram_markers(tram, list(PART_NAMES)), list(PART_NAMES))
    assert bytes(back.sounds[0]["name"]) == b"step\0garbage" and back.impact == tram.impact
    assert np.array_equal(back.sounds, tram.sounds)


def plain(value):
    """Every int in the description fits the signed 32 bits an IDProperty holds."""
    if isinstance(value, dict):
        return all(plain(v) for v in value.values())
    if isinstance(value, (list, tuple, np.ndarray)):
        return all(plain(v) for v in np.asarray(value, object).ravel()) if len(value) else True
    return not isinstance(value, (int, np.integer)) or -(1 << 31) <= int(value) < (1 << 31)


def test_every_generated_case_goes_back_bit_for_bit_with_idproperty_sized_values():
    """Random bytes in every event array (NaN payloads, u32 past int32, garbage in the pads)."""
    import characters_generate as cgen
    for tram in cgen.every_tram(np.random.default_rng(7)).values():
        names = [f"Part{p}" for p in range(tram.parts)]
        described = tram_properties(tram)
        assert plain(described), tram.name
        back = tram_from_properties(described, tram_markers(tram, names), names)
        assert cgen.tram_differences(back, tram) == [], tram.name
        assert tram_oni_bytes(back) == tram_oni_bytes(tram)


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_an_arrays_bytes_as_read_are_kept_where_it_has_records(path):
    """Beside a non-empty array its bytes; an empty one has none (they would say nothing more)."""
    tram = read_tram_file(path)
    described = tram_properties(tram)
    for name in ("attacks", "self_damage", "motion_blur", "shortcuts", "throw", "extents", "footsteps", "sounds",
                 "particles"):
        array = getattr(tram, name)
        assert (f"tram_{name}_bytes" in described) == bool(len(array)), name
        if len(array):
            assert described[f"tram_{name}_bytes"] == array.tobytes()
    assert described["tram_extent_info_bytes"] == tram.extent_info.tobytes()
