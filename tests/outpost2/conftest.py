"""The generated .prt and .bmp pairs the Outpost 2 tests share. numpy is imported in the
fixture: under pytest-blender the outer pytest (without numpy) loads this file too."""

import pytest

SEEDS = range(6)


@pytest.fixture(params=SEEDS)
def pair(request, tmp_path):
    import numpy as np
    from op2_generate import write_pair

    return write_pair(tmp_path, np.random.default_rng(request.param))
