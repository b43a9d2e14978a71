"""Bad input to read_stage (docs/stage.md 6, docs/bad_input.md "A level's stage"): OniSplit's
level12 and level0 (tests/data/cutscene) copied and patched where each layout puts a count, a
size or an index; every fault an ObanError naming the file, the instance and the problem,
raised before anything is allocated from it."""

import os
import shutil

import numpy as np
import pytest
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.library import Library
from oban_import.oni.io.level.model import ObjectList
from oban_import.oni.io.stage.characters import characters_of, flags_of
from oban_import.oni.io.stage.read import read_stage
from oban_import.oni.io.stage.sounds import sound_data_at

FOLDER = os.path.join(DATA, "cutscene")


@pytest.fixture
def level(tmp_path):
    for name in ("level12_Final.dat", "level12_Final.raw", "level0_Final.dat", "level0_Final.raw"):
        shutil.copy(os.path.join(FOLDER, "level", name), tmp_path / name)
    return tmp_path


def where(path, full_name):
    """The file offset of the instance named `full_name`'s data (past its 8-byte record header)."""
    with Library(str(path)) as library:
        c = library.main
        index = next(i for i in range(len(c.descriptors)) if c.full_name(i) == full_name)
        return c.record(index)[1] + 8


def where_unnamed(path, tag, k):
    """The data offset of the k-th instance of `tag` (as stored, reversed)."""
    with Library(str(path)) as library:
        return library.main.record(int(library.main.indices(tag)[k]))[1] + 8


def patch(path, at, value: bytes):
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(value)


def refused(path, *parts, **kwargs):
    with pytest.raises(ObanError) as info:
        read_stage(path, **kwargs)
    message = str(info.value)
    assert message.startswith(f"{info.value.path}: ") and len(message) < 400
    for part in parts:
        assert part in message, message
    return message


def test_a_file_without_a_level(level):
    refused(level / "level0_Final.dat", "holds no level (ONLV)")


def test_a_truncated_level(level):
    path = level / "level12_Final.dat"
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    refused(path, "lies outside the file")


def test_an_aisa_count_past_its_end(level):
    path = level / "level12_Final.dat"
    patch(path, where(path, "AISAcut_characters") + 0x16, (0xFFFF).to_bytes(2, "little"))
    refused(path, "instance", "(AISAcut_characters): character count says 65535 but only 1 fit in the instance")


def test_an_aisa_class_link_out_of_range(level):
    path = level / "level12_Final.dat"
    patch(path, where(path, "AISAcut_characters") + 0x18 + 0x28, (0xFFFF01).to_bytes(4, "little"))
    refused(path, "character 0 class link 0x00ffff01 points outside the")


def test_a_film_frame_count_past_its_end(level):
    path = level / "level12_Final.dat"
    patch(path, where(path, "FILMcut_walk") + 0x34, (0xFFFFFFFF).to_bytes(4, "little"))
    refused(path, "(FILMcut_walk): frame count says 4294967295 but only")


def test_a_film_frame_past_its_length(level):
    path = level / "level12_Final.dat"
    patch(path, where(path, "FILMcut_walk") + 0x1C, (10).to_bytes(4, "little"))
    refused(path, "(FILMcut_walk): frame 1 is at 30, past its 10 frames")


def test_a_script_quad_past_the_quads(level):
    path = level / "level12_Final.dat"
    with Library(str(path)) as library:
        c = library.main
        akev = c.first(b"VEKA")
        data, _ = c.instance(akev, b"VEKA")
        script_quads = int.from_bytes(data[40:44], "little") >> 8
        at = c.record(script_quads)[1] + 8
    patch(path, at + 0x18, (10).to_bytes(4, "little"))
    refused(path, "(AKEVlevel12): script quad 0 is quad 10, past the 10 quads")


def test_sound_data_past_the_raw_file(level):
    path = level / "level0_Final.dat"
    patch(path, where(path, "SNDDcut_line1.aif") + 0x38, (0x7FFFFFF0).to_bytes(4, "little"))
    refused(level / "level12_Final.dat", "(SNDDcut_line1.aif): 2147483632 bytes of raw data at",
            "lie outside level0_Final.raw")


def test_a_group_permutation_count_past_its_end(level):
    dat = level / "level0_Final.dat"
    with Library(str(dat)) as library:
        c = library.main
        index = next(i for i in range(len(c.descriptors)) if c.full_name(i) == "OSBDcut_line1.grp")
        data, _ = c.instance(index, b"DBSO")
        offset = int.from_bytes(data[4:8], "little")
    patch(level / "level0_Final.raw", offset + 0x1C, (0x40000000).to_bytes(4, "little"))
    refused(level / "level12_Final.dat", "(OSBDcut_line1.grp): permutation count says 1073741824 but only 1 "
                                         "fit in the instance")


def test_an_impulse_that_is_not_one(level):
    dat = level / "level0_Final.dat"
    with Library(str(dat)) as library:
        c = library.main
        index = next(i for i in range(len(c.descriptors)) if c.full_name(i) == "OSBDcut_line2.imp")
        offset = int.from_bytes(c.instance(index, b"DBSO")[0][4:8], "little")
    patch(level / "level0_Final.raw", offset, b"rGSO")
    refused(level / "level12_Final.dat", "(OSBDcut_line2.imp): a 'OSGr' sound, not an impulse (OSIm)")


def test_onisplits_wav_import_is_refused():
    """OniSplit v0.9.99.2's WAV import writes the PC layout 4 bytes late (tests/data/cutscene/README.md)."""
    path = os.path.join(FOLDER, "oni", "SNDDcut_wav.aif.oni")
    with Library(path) as library, pytest.raises(ObanError) as info:
        sound_data_at(library.main, 0)
    assert str(info.value) == f"{path}: instance 0 (SNDDcut_wav.aif): 0 channels at 65537 Hz (1 or 2 channels, a " \
                              f"positive rate)"


@pytest.mark.parametrize("kind, reader, least", [("CHAR", characters_of, 0x1FC), ("FLAG", flags_of, 0x88)])
def test_an_object_too_short_for_its_type(kind, reader, least):
    objects = ObjectList(name="x", types=np.array(["FLAG", kind]), ids=np.array([5, 6], np.uint32),
                         flags=np.zeros(2, np.uint32), positions=np.zeros((2, 3), np.float32),
                         rotations=np.zeros((2, 3), np.float32), payloads=[bytes(0x88), bytes(least - 1)])
    with pytest.raises(ObanError) as info:
        reader(objects, "PATH", "instance 9 (BINACJBOx)")
    assert str(info.value) == f"PATH: instance 9 (BINACJBOx): object 1 (id 6): a {kind} of {least - 1 + 0x24} " \
                              f"bytes, shorter than 0x{least + 0x24:x}"
