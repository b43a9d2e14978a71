"""place.py, the step after -create:level (docs/level.md 13), on OniSplit's own builds of the
placed level's variants (tests/data/environment/placed/merge): the placed setups written into
-create:level's leaves-only level instance give its `<Physics>` build byte for byte, for every
edit kind that renumbers its object quad map (ONOA), whose lists carry their objects' tags; bad
input is named, nothing written."""

import os
import shutil

import numpy as np
import pytest
from commands import python_module, run
from placed_step import VARIANTS, leaves_out, placed_from, unpacked

from oban_import.core.errors import ObanError
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.level_rebuild.place import ORDER_FILE, PLACED_FOLDER, place


def built(tmp_path, variant):
    """(OUT, the level's folder, the <Physics> ONLV's path) of `variant` in tmp_path."""
    physics = unpacked(os.path.join(variant, "physics", "ONLVlevel5.oni.xz"), str(tmp_path / "physics.oni"))
    return leaves_out(str(tmp_path), variant), placed_from(physics, str(tmp_path)), physics


def quad_lists(path):
    level = read_level(path)
    return level, {tag: quads.tolist() for tag, quads in level.object_quads.items()}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_placed_setups_merged_are_onisplits_physics_build(tmp_path, variant):
    out, level, physics = built(tmp_path, variant)
    said = place(out, level)
    merged = os.path.join(out, "ONLVlevel5.oni")
    assert said == f"{merged}: 9 placed objects written beside its {17 if 'door' in variant or variant == 'all' else 16} " \
                   f"door leaf setups ({os.path.getsize(merged)} bytes)"
    assert open(merged, "rb").read() == open(physics, "rb").read()
    read, lists = quad_lists(merged)
    tags = read.environment.object_tags
    assert lists and all((tags[quads] == tag).all() for tag, quads in read.object_quads.items())
    if variant != "unedited":   # the edit renumbered the object quad map
        shutil.rmtree(tmp_path / "OUT")
        assert lists != quad_lists(leaves_out(str(tmp_path / "unedited"), "unedited") + "/ONLVlevel5.oni")[1]


def test_a_missing_file_is_named(tmp_path):
    out, level, _ = built(tmp_path, "unedited")
    os.remove(os.path.join(out, "AKEVlevel5.oni"))
    with pytest.raises(ObanError, match="AKEVlevel5.oni: not found"):
        place(out, level)
    with pytest.raises(ObanError, match="OBOAelsewhere_placed.oni: not found"):
        place(out, str(tmp_path / "elsewhere"))


def test_a_level_instance_placed_already_is_refused(tmp_path):
    out, level, _ = built(tmp_path, "all")
    place(out, level)
    before = open(os.path.join(out, "ONLVlevel5.oni"), "rb").read()
    with pytest.raises(ObanError, match=r"holds 9 setups that are no door leaf \('obj00_part0'\).*ran already"):
        place(out, level)
    assert open(os.path.join(out, "ONLVlevel5.oni"), "rb").read() == before


def test_an_order_that_does_not_count_the_placed_setups_is_refused(tmp_path):
    out, level, _ = built(tmp_path, "unedited")
    order = os.path.join(level, PLACED_FOLDER, ORDER_FILE.format("level5"))
    with open(order, "a") as f:
        f.write("placed 3\n")
    with pytest.raises(ObanError, match="names 10 placed setups where the placed objects' file holds 9"):
        place(out, level)
    with open(order, "w") as f:
        f.write("door_1\n")
    with pytest.raises(ObanError, match="line 1: 'door_1' is neither"):
        place(out, level)


def test_an_object_quad_map_whose_quads_carry_other_tags_is_refused(tmp_path):
    """The leaves-only ONLV of the level with a quad deleted beside the unedited level's AKEV: its
    lists name quads one before their objects'."""
    out, level, _ = built(tmp_path, "quad_deleted")
    unpacked(os.path.join("unedited", "AKEVlevel5.oni.xz"), os.path.join(out, "AKEVlevel5.oni"))
    before = open(os.path.join(out, "ONLVlevel5.oni"), "rb").read()
    with pytest.raises(ObanError, match="its object quad map lists quad 32 for object tag 0x03000001, which that quad "
                                        "does not carry"):
        place(out, level)
    assert open(os.path.join(out, "ONLVlevel5.oni"), "rb").read() == before


def test_the_command_line_names_a_wrong_path(tmp_path):
    done = run(python_module, "place", tmp_path / "OUT", tmp_path / "level5")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == (f"oban_import place: {tmp_path / 'level5' / 'placed' / 'OBOAlevel5_placed.oni'}: not found "
                           "(the rebuild's placed objects; run -create:level OUT, then this step, on the level's "
                           "folder)\n")
    out, level, physics = built(tmp_path, "all")
    done = run(python_module, "place", out, level)
    assert done.returncode == 0 and done.stdout.startswith(f"{out}/ONLVlevel5.oni: 9 placed objects"), done.stderr
    assert np.array_equal(np.fromfile(os.path.join(out, "ONLVlevel5.oni"), np.uint8), np.fromfile(physics, np.uint8))
