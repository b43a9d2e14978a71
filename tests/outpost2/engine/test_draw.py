"""Drawing a frame (docs/outpost2.md 3) against a plain loop over every pixel (tests/fixtures/op2_reference.py)."""

import numpy as np
from op2_reference import loop_draw

from oban_import.outpost2.engine.draw import composite, draw_frame
from oban_import.outpost2.io.bmp import SHADOW_ALPHA, ArtBitmaps
from oban_import.outpost2.io.prt import read_prt


def test_drawing_matches_the_loop(pair):
    prt_path, bmp_path, _, _ = pair
    prt = read_prt(prt_path)
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        images = [bitmaps.rgba(i) for i in range(len(prt.bitmaps))]
        for a, animation in enumerate(prt.animations):
            for f in range(len(animation.frames)):
                canvas = draw_frame(prt, bitmaps.rgba, a, f)
                expected, left, top = loop_draw(prt, images, a, f)
                assert (canvas.left, canvas.top) == (left, top)
                assert np.array_equal(canvas.rgba, expected), (a, f)


def test_the_compositing_rule():
    canvas = np.zeros((1, 4, 4), np.uint8)
    canvas[0, :2] = (200, 100, 50, 255)
    shadow = np.zeros((1, 4, 4), np.uint8)
    shadow[..., 3] = SHADOW_ALPHA
    composite(canvas, shadow, 0, 0)
    assert canvas[0, 0].tolist() == [100, 50, 25, 255]          # opaque darkened to 127/255
    assert canvas[0, 2].tolist() == [0, 0, 0, 128]              # black at 50 % over nothing
    composite(canvas, shadow, 0, 0)
    assert canvas[0, 2].tolist() == [0, 0, 0, 192]
    opaque = np.full((1, 1, 4), 255, np.uint8)
    composite(canvas, opaque, 2, 0)
    assert canvas[0, 2].tolist() == [255, 255, 255, 255]        # opaque replaces
    composite(canvas, np.zeros((1, 1, 4), np.uint8), 2, 0)
    assert canvas[0, 2].tolist() == [255, 255, 255, 255]        # transparent leaves
