"""Outpost 2 op2_art.prt / op2_art.bmp (docs/outpost2.md): round trips, pixels and drawing
against plain loop re-implementations, every class of bad input, a fuzz test, and speed."""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limits import measured
from op2_generate import random_art, retail_size, write_pair
from op2_reference import loop_rgba

from oban_import.core.errors import ObanError
from oban_import.outpost2.engine.draw import draw_frame
from oban_import.outpost2.io.bmp import ArtBitmaps, find_bmp
from oban_import.outpost2.io.prt import SUBFRAME_DTYPE, parse_prt, read_prt
from oban_import.outpost2.io.writer import bmp_bytes, prt_bytes
from oban_import.ui.listing import sprite_rows

# ---- round trips, pixels, drawing --------------------------------------------------------

def test_read_write_gives_the_same_bytes(pair):
    prt_path, bmp_path, made, _ = pair
    data = prt_path.read_bytes()
    prt = read_prt(prt_path)
    assert prt_bytes(prt) == data
    assert prt_bytes(made) == data
    data = bmp_path.read_bytes()
    start = int.from_bytes(data[10:14], "little")   # where the pixel data begins (docs/outpost2.md 2)
    header, pixels = data[:start], data[start:]
    assert bmp_bytes(pixels, header) == bmp_path.read_bytes()


def test_samples_cover_the_spec_cases(pair):
    """docs/outpost2.md 5: several palettes, 8-bit and shadow bitmaps of odd widths, frames with
    0, 2 and 4 optional bytes, windows, negative offsets."""
    prt = read_prt(pair[0])
    assert len(prt.palettes) > 1
    assert {b.shadow for b in prt.bitmaps if b.width % 2} == {True, False}
    sizes = {(f.optional1 is not None) * 2 + (f.optional2 is not None) * 2
             for a in prt.animations for f in a.frames}
    assert sizes == {0, 2, 4}
    assert any(len(a.windows) for a in prt.animations)
    assert any((f.subframes["x"] < 0).any() for a in prt.animations for f in a.frames)


def test_bitmaps_decode_like_the_loop(pair):
    prt_path, bmp_path, _, images = pair
    prt = read_prt(prt_path)
    prt_data, bmp_data = prt_path.read_bytes(), bmp_path.read_bytes()
    assert len(images) == len(prt.bitmaps) > 0
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        for i, image in enumerate(images):
            assert np.array_equal(bitmaps.indices(i), image)
            assert np.array_equal(bitmaps.rgba(i), loop_rgba(prt_data, bmp_data, i)), i


def test_find_bmp_ignores_case(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(0), prt_name="OP2_ART.PRT", bmp_name="Op2_Art.Bmp")
    assert find_bmp(str(prt_path)) == str(tmp_path / "Op2_Art.Bmp")


LISTING_MEMORY = 40   # x the .prt's bytes: a retail-sized listing peaks at about 19.5 x


def test_a_retail_size_file_parses_and_lists_without_a_blow_up():
    prt, _, _ = retail_size(np.random.default_rng(1))
    data = prt_bytes(prt)
    assert sum(len(a.frames) for a in prt.animations) > 35000
    _, peak = measured(lambda: sprite_rows(parse_prt(data)))
    assert peak < LISTING_MEMORY * len(data), peak   # benchmarks/sprite_speed.py judges its speed
    assert prt_bytes(parse_prt(data)) == data


# ---- bad input ---------------------------------------------------------------------------

def small_pair(tmp_path, seed=0):
    return write_pair(tmp_path, np.random.default_rng(seed), palettes=2, bitmaps=3, animations=2,
                      max_frames=2, max_subframes=2)


def _offsets(prt):
    """Byte offsets: bitmap table, animation header, first animation."""
    bitmaps = 8 + 1052 * len(prt.palettes)
    header = bitmaps + 4 + 20 * len(prt.bitmaps)
    return bitmaps, header, header + 16


def prt_message(data, path="x.prt"):
    with pytest.raises(ObanError) as error:
        parse_prt(data, path)
    assert str(error.value).startswith(path + ": ")
    return error.value.problem


def test_bad_prt_tags_and_lengths(tmp_path):
    data = bytearray(small_pair(tmp_path)[0].read_bytes())
    assert prt_message(b"XPAL" + bytes(data[4:])) == "byte 0: tag b'XPAL' is not b'CPAL' (not an op2_art.prt)"
    bad = bytearray(data)
    bad[11] = ord("X")
    assert prt_message(bytes(bad)) == ("palette 0 (byte 8): expected tag b'PPAL' with length 1048, "
                                       "found b'PPAX' with length 1048")
    bad = bytearray(data)
    bad[8 + 1052 + 12:8 + 1052 + 16] = (5).to_bytes(4, "little")
    assert prt_message(bytes(bad)) == ("palette 1 (byte 1068): expected tag b'head' with length 4, "
                                       "found b'head' with length 5")
    bad = bytearray(data)
    bad[8 + 24:8 + 28] = (1000).to_bytes(4, "little")
    assert prt_message(bytes(bad)) == ("palette 0 (byte 28): expected tag b'data' with length 1024, "
                                       "found b'data' with length 1000")


def test_counts_beyond_the_bytes_left(tmp_path):
    prt_path = small_pair(tmp_path)[0]
    data = prt_path.read_bytes()
    prt = read_prt(prt_path)
    bitmaps, header, first = _offsets(prt)
    huge = (0xFFFFFFFF).to_bytes(4, "little")
    assert prt_message(data[:4] + huge + data[8:]) == (
        f"4294967295 palettes at byte 8 needs {0xFFFFFFFF * 1052} bytes (4294967295 x 1052) "
        f"but only {len(data) - 8} are left")
    assert prt_message(data[:bitmaps] + huge + data[bitmaps + 4:]).startswith(
        f"4294967295 bitmap descriptions at byte {bitmaps + 4} needs")
    assert prt_message(data[:header] + huge + data[header + 4:]) == (
        f"animation count 4294967295 (byte {header}) needs at least {0xFFFFFFFF * 40} bytes but only "
        f"{len(data) - first} are left")
    frame_count_at = first + 32
    assert prt_message(data[:frame_count_at] + huge + data[frame_count_at + 4:]) == (
        f"animation 0 (byte {frame_count_at}): frame count 4294967295 needs at least {0xFFFFFFFF * 2} "
        f"bytes but only {len(data) - frame_count_at - 4} are left")
    windows_at = first + 36 + sum(len(prt_bytes_frame(f)) for f in prt.animations[0].frames)
    assert prt_message(data[:windows_at] + huge + data[windows_at + 4:]) == (
        f"animation 0 (byte {windows_at}): window count 4294967295 needs {0xFFFFFFFF * 16} bytes "
        f"but only {len(data) - windows_at - 4} are left")


def prt_bytes_frame(frame):
    from oban_import.outpost2.io.writer import frame_bytes
    return frame_bytes(frame)


def test_truncations_name_the_place(tmp_path):
    prt_path = small_pair(tmp_path)[0]
    data = prt_path.read_bytes()
    prt = read_prt(prt_path)
    _, header, first = _offsets(prt)
    assert prt_message(data[:2]) == "byte 0: tag b'CP' is not b'CPAL' (not an op2_art.prt)"
    assert prt_message(data[:6]) == "truncated at byte 6: the palette count at byte 4 needs 4 bytes"
    assert prt_message(data[:header + 10]) == (
        f"the animation header at byte {header} needs 16 bytes (1 x 16) but only 10 are left")
    last = prt.animations[-1]
    cut = data[:len(data) - 4 - 16 * len(last.windows) - 1]       # the last frame's last byte gone
    frame = prt_bytes_frame(last.frames[-1])
    assert prt_message(cut) == (f"animation {len(prt.animations) - 1} frame {len(last.frames) - 1} "
                                f"(byte {len(cut) + 1 - len(frame)}): needs {len(frame)} bytes but only "
                                f"{len(frame) - 1} are left")
    cut = data[:len(data) - 16 * len(last.windows) - 2]         # the window count cut
    assert prt_message(cut) == (f"animation {len(prt.animations) - 1} (byte {len(cut) - 2}): truncated at "
                                f"byte {len(cut)}: the window count needs 4 bytes")
    for size in range(len(data)):
        with pytest.raises(ObanError):
            parse_prt(data[:size], "x.prt")


def test_header_totals_must_agree(tmp_path):
    prt_path = small_pair(tmp_path)[0]
    data = bytearray(prt_path.read_bytes())
    prt = read_prt(prt_path)
    _, header, _ = _offsets(prt)
    frames = sum(len(a.frames) for a in prt.animations)
    subframes = sum(len(f.subframes) for a in prt.animations for f in a.frames)
    bad = bytearray(data)
    bad[header + 4:header + 8] = (frames + 1).to_bytes(4, "little")
    assert prt_message(bytes(bad)) == (f"animation header (byte {header + 4}) says {frames + 1} frames in all "
                                       f"but the animations hold {frames}")
    bad = bytearray(data)
    bad[header + 8:header + 12] = (subframes + 3).to_bytes(4, "little")
    assert prt_message(bytes(bad)) == (f"animation header (byte {header + 8}) says {subframes + 3} subframes "
                                       f"in all but the animations hold {subframes}")


def test_indices_out_of_range(tmp_path):
    prt_path = small_pair(tmp_path)[0]
    data = bytearray(prt_path.read_bytes())
    prt = read_prt(prt_path)
    bitmaps, _, first = _offsets(prt)
    bad = bytearray(data)
    bad[bitmaps + 4 + 20 + 18:bitmaps + 4 + 20 + 20] = (2).to_bytes(2, "little")
    assert prt_message(bytes(bad)) == "bitmap 1: palette index 2 is out of range (2 palettes)"
    frame = prt.animations[0].frames[0]
    sub_at = first + 36 + 2 + 2 * (frame.optional1 is not None) + 2 * (frame.optional2 is not None)
    bad = bytearray(data)
    bad[sub_at:sub_at + 2] = (3).to_bytes(2, "little")
    assert prt_message(bytes(bad)) == (f"animation 0 frame 0 subframe 0 (byte {sub_at}): bitmap index 3 "
                                       f"is out of range (3 bitmaps)")


def test_bad_bmp(tmp_path):
    prt_path, bmp_path, _, _ = small_pair(tmp_path)
    prt = read_prt(prt_path)
    data = bmp_path.read_bytes()
    last = max(range(3), key=lambda i: prt.bitmaps[i].offset)
    b = prt.bitmaps[last]
    start = 1078 + b.offset
    bmp_path.write_bytes(data[:-1])
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        with pytest.raises(ObanError) as error:
            bitmaps.rgba(last)
    assert str(error.value) == (f"{bmp_path}: bitmap {last}: its pixels (bytes {start} to "
                                f"{start + b.stride * b.height}) reach past the end of the file "
                                f"({len(data) - 1} bytes)")
    bmp_path.write_bytes(b"XM" + data[2:])
    with pytest.raises(ObanError, match="byte 0: not a BMP file"):
        ArtBitmaps(bmp_path, prt)
    bmp_path.write_bytes(data[:10] + (10**6).to_bytes(4, "little") + data[14:])
    with pytest.raises(ObanError, match=f"byte 10: pixel data start 1000000 lies past the end of the file "
                                        f"\\({len(data)} bytes\\)"):
        ArtBitmaps(bmp_path, prt)
    bmp_path.unlink()
    with pytest.raises(ObanError, match="cannot be read"):
        ArtBitmaps(bmp_path, prt)
    with pytest.raises(ObanError) as error:
        find_bmp(str(prt_path))
    assert str(error.value).startswith(f"{prt_path}: no op2_art.bmp beside it")
    bmp_path.write_bytes(data)
    prt.bitmaps[0].stride = 0
    prt.bitmaps[0].width = 5
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        with pytest.raises(ObanError, match="bitmap 0: row stride 0 is less than"):
            bitmaps.rgba(0)
        with pytest.raises(ObanError, match=r"bitmap index 7 is out of range \(3 bitmaps\)"):
            bitmaps.rgba(7)


def test_missing_prt(tmp_path):
    with pytest.raises(ObanError, match="cannot be read"):
        read_prt(tmp_path / "none.prt")


def test_a_huge_canvas_is_refused(tmp_path):
    prt_path, bmp_path, _, _ = small_pair(tmp_path)
    prt = read_prt(prt_path)
    subs = prt.animations[0].frames[0].subframes = np.zeros(2, SUBFRAME_DTYPE)
    subs["x"][0], subs["y"][0], subs["x"][1], subs["y"][1] = -32768, -32768, 32767, 32767
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        with pytest.raises(ObanError, match="animation 0 frame 0: a canvas of"):
            draw_frame(prt, bitmaps.rgba, 0, 0, path="x.prt")


# ---- fuzz --------------------------------------------------------------------------------

def _seed_files():
    prt, pixels, _ = random_art(np.random.default_rng(7), palettes=2, bitmaps=4, animations=2,
                                max_frames=3, max_subframes=3, max_size=9)
    return prt_bytes(prt), bmp_bytes(pixels)


SEED_PRT, SEED_BMP = _seed_files()


@st.composite
def mutated(draw, seed):
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete", "u32", "u16"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 8))]
        elif kind in ("u32", "u16"):
            size = 4 if kind == "u32" else 2
            value = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0xFFFFFFFF, 0x80000000]))
            data[at:at + size] = (value & (256 ** size - 1)).to_bytes(size, "little")
    return bytes(data)


MAX_PIXELS = 1 << 22   # of a drawn frame's canvas; more is refused
DRAWING_MEMORY = 5 * MAX_PIXELS + (1 << 20)   # a canvas costs about 4 bytes a pixel; the rest is small


def everything(tmp_path, prt_data, bmp_data):
    """Parse, decode every bitmap and draw every frame: the values, or the ObanError."""
    prt_path, bmp_path = tmp_path / "f.prt", tmp_path / "f.bmp"
    prt_path.write_bytes(prt_data)
    bmp_path.write_bytes(bmp_data)
    prt = read_prt(prt_path)
    sprite_rows(prt)
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        for a, animation in enumerate(prt.animations):
            for f in range(len(animation.frames)):
                draw_frame(prt, bitmaps.rgba, a, f, path=str(prt_path), max_pixels=MAX_PIXELS)


FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                   HealthCheck.data_too_large])


@settings(max_examples=3000, **FUZZ)
@given(prt_data=mutated(SEED_PRT), bmp_data=st.one_of(st.just(SEED_BMP), mutated(SEED_BMP)))
def test_fuzz_only_oban_error_escapes(tmp_path, prt_data, bmp_data):
    error, peak = measured(lambda: everything(tmp_path, prt_data, bmp_data))
    assert error is None or str(error).startswith(str(tmp_path)), error
    assert peak < DRAWING_MEMORY, peak


@settings(max_examples=200, **FUZZ)
@given(prt_data=st.binary(max_size=200).map(lambda b: b"CPAL" + b), bmp_data=st.binary(max_size=100))
def test_fuzz_raw_bytes(tmp_path, prt_data, bmp_data):
    try:
        everything(tmp_path, prt_data, bmp_data)
    except ObanError:
        pass


def test_a_missing_bmp_in_full(tmp_path):
    """No .bmp beside the .prt, or a --bmp that does not exist: the whole messages of
    docs/bad_input.md."""
    prt_path, bmp_path, _, _ = small_pair(tmp_path)
    prt = read_prt(prt_path)
    bmp_path.unlink()
    with pytest.raises(ObanError) as error:
        find_bmp(str(prt_path))
    assert str(error.value) == f"{prt_path}: no op2_art.bmp beside it (looked in {tmp_path})"
    with pytest.raises(ObanError) as error:
        ArtBitmaps(bmp_path, prt)
    assert str(error.value) == f"{bmp_path}: cannot be read: No such file or directory"
