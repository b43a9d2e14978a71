"""png_bytes: the PNG that packs a decoded texture, read back by an independent decoder."""

import zlib

import numpy as np
import pytest
from pngs import read_png

from oban_import.core.png import png_bytes


@pytest.mark.parametrize("kind", ["noise", "smooth", "flat", "odd size", "opaque", "one pixel not opaque"])
def test_pixels_come_back_exactly(tmp_path, kind):
    """Every pixel; an RGB file (PNG colour type 2) exactly where every alpha is 255."""
    rng = np.random.default_rng(3)
    shape = (37, 53, 4) if kind in ("odd size", "opaque") else (128, 128, 4)
    pixels = {"noise": rng.integers(0, 256, shape),
              "smooth": np.add.outer(np.arange(shape[0]), np.arange(shape[1]))[:, :, None] + np.arange(4),
              "flat": np.full(shape, 200),
              "odd size": rng.integers(0, 256, shape),
              "opaque": np.concatenate([rng.integers(0, 256, shape[:2] + (3,)), np.full(shape[:2] + (1,), 255)], 2),
              "one pixel not opaque": np.full(shape, 255) - (np.arange(shape[0] * shape[1]).reshape(shape[:2]) == 77)[
                  :, :, None] * [0, 0, 0, 1]}[kind].astype(np.uint8)
    path = tmp_path / "t.png"
    path.write_bytes(png_bytes(pixels))
    np.testing.assert_array_equal(read_png(str(path)), pixels)
    assert path.read_bytes()[25] == (2 if (pixels[:, :, 3] == 255).all() else 6)
    assert kind not in ("opaque", "one pixel not opaque") or path.read_bytes()[25] == (2 if kind == "opaque" else 6)


def test_rows_are_filtered_up_and_texture_data_compressed():
    """Every row's filter byte is Up; noise stays about its size, blocky and smooth data shrink."""
    rng = np.random.default_rng(4)
    noise = rng.integers(0, 256, (256, 256, 4)).astype(np.uint8)
    blocky = np.repeat(np.repeat(rng.integers(0, 256, (16, 16, 4)), 16, axis=0), 16, axis=1).astype(np.uint8)
    ramp = (np.add.outer(np.arange(256), np.arange(256)) // 2).astype(np.uint8)
    smooth = np.stack([ramp, ramp // 2, 255 - ramp, np.full_like(ramp, 255)], axis=2)
    for pixels in (noise, blocky, smooth):
        data = png_bytes(pixels)
        raw = zlib.decompress(data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8])
        stride = 1 + pixels.shape[1] * (4 if pixels is not smooth else 3)
        assert set(raw[::stride]) == {2}
    assert noise.nbytes < len(png_bytes(noise)) < 1.01 * noise.nbytes
    assert len(png_bytes(blocky)) < blocky.nbytes / 4
    assert len(png_bytes(smooth)) < smooth.nbytes / 4
