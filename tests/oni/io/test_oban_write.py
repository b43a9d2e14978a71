"""Writers: OniSplit XML and raw instance files read back to the same animation, bit for bit.
(.oni files: tests/oni/io/test_oban_read.py checks them byte for byte against OniSplit's.)"""

import os

import numpy as np
import pytest
from oban_generate import random_animation
from paths import DATA

from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.write import raw_file_bytes, xml_bytes

NAMES = ("camera_flyby", "door_swing", "fan_loop", "lift_pingpong", "spec_example")


def fields(animation):
    return (animation.name, animation.flags, animation.start_matrix.tobytes(), animation.base_matrix.tobytes(),
            animation.ticks_per_frame, animation.frames, animation.door_open_frame, animation.keys.tobytes(),
            animation.warnings)


def read_back(tmp_path, file_name, data):
    path = tmp_path / file_name
    path.write_bytes(data)
    animation, = read_file(str(path))
    return animation


def generated(count, seed):
    rng = np.random.default_rng(seed)
    for i in range(count):
        animation = random_animation(rng, name=f"gen{i}", key_count=10_000 if i % 4 == 0 else None, flags=i % 32)
        if i % 10 == 9:
            animation.flags |= 0x80000100        # unknown bits are written as a number
            animation.warnings.append("unknown flag bits 0x80000100 kept")
        animation.ticks_per_frame = int(rng.integers(0, 0x10000))
        animation.start_matrix = rng.normal(0, 10.0 ** rng.integers(-40, 38), 12).astype(np.float32)
        yield animation


# ---- XML ------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_xml_reads_back_bitwise(tmp_path, seed):
    for animation in generated(40, seed):
        assert fields(read_back(tmp_path, f"OBAN{animation.name}.xml", xml_bytes(animation))) == fields(animation)


@pytest.mark.parametrize("name", NAMES)
def test_samples_written_as_xml_read_back_bitwise(tmp_path, name):
    for folder, file_name in (("xml", f"OBAN{name}.xml"), ("oni", f"OBAN{name}.oni")):
        sample, = read_file(os.path.join(DATA, folder, file_name))
        assert fields(read_back(tmp_path, f"OBAN{name}.xml", xml_bytes(sample))) == fields(sample)


@pytest.mark.parametrize("name", NAMES[:4])
def test_xml_matches_the_samples_byte_for_byte(name):
    path = os.path.join(DATA, "xml", f"OBAN{name}.xml")
    assert xml_bytes(read_file(path)[0]) == open(path, "rb").read()


def test_xml_layout_is_the_spec_example_with_whole_numbers_as_floats():
    path = os.path.join(DATA, "xml", "OBANspec_example.xml")
    written = xml_bytes(read_file(path)[0]).decode()
    assert written.replace(".0 ", " ").replace(".0<", "<") == open(path, encoding="utf-8").read()


@pytest.mark.parametrize("flags, text", [
    (0, "<Flags />"),
    (0x01, "<Flags>NormalLoop</Flags>"),
    (0x1F, "<Flags>NormalLoop BackToBackLoop RandomStartFrame Autostart ZAxisUp</Flags>"),
    (0x12, "<Flags>BackToBackLoop ZAxisUp</Flags>"),
    (0x21, "<Flags>33</Flags>"),
    (0xFFFFFFFF, "<Flags>4294967295</Flags>"),
])
def test_flags_are_names_or_else_a_number(flags, text):
    animation = random_animation(np.random.default_rng(0), flags=flags)
    assert f"\n    {text}\n" in xml_bytes(animation).decode()


def test_every_float_reads_back_to_its_bits(tmp_path):
    rng = np.random.default_rng(5)
    bits = np.concatenate([
        rng.integers(0, 1 << 32, 400_000, dtype=np.uint64).astype(np.uint32),   # anything
        rng.integers(0, 1 << 23, 50_000, dtype=np.uint32),                      # denormals
        rng.integers(0x7F000000, 0x7F800000, 50_000, dtype=np.uint64).astype(np.uint32),  # huge
        np.array([0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
                  0xFF7FFFFF, 0x3F800000, 0x3F800001, 0x3F7FFFFF, 0x4B800001, 0x5F000001], np.uint32)])
    values = bits.view(np.float32)
    values = values[np.isfinite(values)][: len(values) // 28 * 28]
    animation = random_animation(rng, frames=len(values) // 28, key_count=len(values) // 28)
    animation.keys["rotation"] = values[: len(values) // 28 * 4].reshape(-1, 4)
    animation.keys["position"] = values[len(values) // 28 * 4: len(values) // 28 * 7].reshape(-1, 3)
    animation.start_matrix, animation.base_matrix = values[-24:-12].copy(), values[-12:].copy()
    back = read_back(tmp_path, "OBANbits.xml", xml_bytes(animation))
    assert back.keys.tobytes() == animation.keys.tobytes()
    assert back.start_matrix.tobytes() + back.base_matrix.tobytes() == \
           animation.start_matrix.tobytes() + animation.base_matrix.tobytes()


# ---- raw ------------------------------------------------------------------------------------

RAW_SAMPLES = sorted(os.listdir(os.path.join(DATA, "raw")))


def test_every_raw_sample_is_rewritten():
    assert len(RAW_SAMPLES) == 5


@pytest.mark.parametrize("file_name", RAW_SAMPLES)
def test_raw_samples_rewrite_byte_for_byte(file_name):
    path = os.path.join(DATA, "raw", file_name)
    assert raw_file_bytes(read_file(path)[0]) == open(path, "rb").read()


@pytest.mark.parametrize("seed", range(2))
def test_raw_reads_back_bitwise(tmp_path, seed):
    rng = np.random.default_rng(seed)
    for animation in generated(40, seed):
        animation.record_header = tuple(int(v) for v in rng.integers(0, 1 << 32, 2))
        data = raw_file_bytes(animation)
        back = read_back(tmp_path, f"00001-{animation.name}.OBAN", data)
        assert fields(back) == fields(animation) and back.record_header == animation.record_header
        assert raw_file_bytes(back) == data
