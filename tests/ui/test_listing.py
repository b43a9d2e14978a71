"""The command line's --list tables (no Blender)."""

import numpy as np
import pytest
from op2_generate import write_pair

from oban_import.outpost2.engine.draw import frame_bounds
from oban_import.outpost2.io.prt import read_prt
from oban_import.ui.listing import sprite_rows


@pytest.mark.parametrize("seed", range(4))
def test_listing_rows(tmp_path, seed):
    prt = read_prt(write_pair(tmp_path, np.random.default_rng(seed))[0])
    rows = sprite_rows(prt)
    for i, animation in enumerate(prt.animations):
        subs = [s for f in animation.frames for s in f.subframes]
        boxes = [frame_bounds(prt, i, f) for f in range(len(animation.frames)) if len(animation.frames[f].subframes)]
        box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
               max(b[3] for b in boxes)) if boxes else (0, 0, 0, 0)
        assert rows[i] == (i, len(animation.frames), len(subs), len({int(s["bitmap"]) for s in subs})) + box
