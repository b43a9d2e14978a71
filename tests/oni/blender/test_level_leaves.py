"""Door leaves through both level exports (docs/level.md 11): a leaf deleted, or copied (Shift+D
keeps its properties), is named by the rebuild and the in-place patch, the level refused unless
Despite Edits; a re-modelled leaf whose class mesh a furniture class shares, or whose parts are
not its class's mesh as read, is refused by the rebuild naming the leaf and why, on OniSplit's
level holding those cases (tests/data/environment/odd_classes)."""

import lzma
import os
import xml.etree.ElementTree as ET

import bpy
import numpy as np
import pytest
from level_reference import xml_onlv
from paths import DATA
from test_level_remodel import oni_points, raise_mesh

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.ui.options import LevelPatchSettings, LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")

ENV = os.path.join(DATA, "environment")
ODD = os.path.join(ENV, "odd_classes")


def setup_of(door_id):
    """The OBOA setup of the leaf of `door_id` (a DoubleDoor's second: door id | 0x1000) in
    OniSplit's XML of the sample level's ONLV."""
    return [door for door, _ in xml_onlv(os.path.join(ENV, "xml", "ONLVlevel5.xml"))["setups"]].index(door_id)


def both(tmp_path, despite=False):
    """(the rebuild's report, the patch's report), each into a folder of its own."""
    return (export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild"),
                                  LevelRebuildSettings(use_selection=False, despite_edits=despite)),
            export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch"),
                                 LevelPatchSettings(use_selection=False, despite_edits=despite)))


def assert_named_by_both(tmp_path, said):
    """Both exports refuse the level naming `said`, nothing written; with Despite Edits both
    write it, `said` a warning."""
    for report, folder in zip(both(tmp_path / "refused"), ("rebuild", "patch")):
        assert not report.made and len(report.errors) == 1 and said in report.errors[0], report.errors
        assert not (tmp_path / "refused" / folder).exists()
    for report in both(tmp_path / "despite", despite=True):
        assert report.made and not report.errors, report.errors
        assert any("left out" in warning and said in warning for warning in report.warnings), report.warnings


def test_a_deleted_leaf_is_named_by_both_exports(tmp_path, sample_level):
    """Door 3's second leaf (door id 3 | 0x1000) deleted: OniSplit's rebuild would make it again
    of the class, the patch keep it."""
    bpy.data.objects.remove(bpy.data.objects["door_4099"])
    assert_named_by_both(tmp_path, f"object 'DOOR 3': its leaf 1 (setup {setup_of(3 | 0x1000)}) was deleted")


def test_a_copied_leaf_is_named_by_both_exports(tmp_path, sample_level):
    """Door 8's leaf copied by Shift+D (the operator: its mesh copied, every property kept) and
    moved along its door: one leaf each is written."""
    leaf = bpy.data.objects["door_8"]
    bpy.ops.object.select_all(action="DESELECT")
    leaf.select_set(True)
    bpy.context.view_layer.objects.active = leaf
    assert bpy.ops.object.duplicate() == {"FINISHED"}
    copy = bpy.context.view_layer.objects.active
    assert copy is not leaf and copy["oni_setup"] == leaf["oni_setup"] and copy.parent == leaf.parent
    assert_named_by_both(tmp_path, f"objects 'door_8', '{copy.name}' are each leaf 0 (setup {setup_of(8)}) of door "
                                   "object 'DOOR 8'")


@pytest.fixture
def odd_classes(tmp_path):
    """tests/data/environment/odd_classes in tmp_path/in, imported with the defaults."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        with lzma.open(os.path.join(ODD, name + ".xz")) as f:
            (folder / name).write_bytes(f.read())
    assert bpy.ops.import_anim.oban(filepath=str(folder / "level5_Final.dat")) == {"FINISHED"}
    return folder / "level5_Final.dat"


def rebuild(tmp_path):
    return export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild"),
                                 LevelRebuildSettings(use_selection=False, despite_edits=False))


def test_the_odd_classes_level_unedited_is_written(tmp_path, odd_classes):
    report = rebuild(tmp_path)
    assert report.made and not report.errors, report.errors


def test_a_door_mesh_furniture_shares_is_refused_naming_both(tmp_path, odd_classes):
    """Furniture class fu_blocker is made of door class dr_offc's mesh (OniSplit's XML it was
    made of): door 8's leaf re-modelled would re-model furniture 15 too."""
    geometry = ET.parse(os.path.join(ODD, "OFGAfu_blocker.xml")).getroot().find(".//Geometry").text
    assert geometry == "M3GMdr_offc_panel"
    raise_mesh("door_8")
    report = rebuild(tmp_path)
    assert not report.made and len(report.errors) == 1, report.errors
    assert ("object 'door_8': M3GM 'dr_offc_panel' of door class 'dr_offc' is also furniture class 'fu_blocker''s: "
            "re-modelled, it would re-model that furniture too") in report.errors[0]
    assert not (tmp_path / "rebuild").exists()


def test_a_leaf_of_other_points_than_its_class_mesh_is_refused(tmp_path, odd_classes):
    """Door 9's leaf, which -create:level made of dr_scaled's mesh 27.62 units high, against the
    class mesh the level holds, 37.62 high (OniSplit's XML it was made of): re-modelled, it is
    refused, not written as that class mesh."""
    positions = ET.parse(os.path.join(ODD, "M3GMdr_scaled_panel.xml")).getroot().find(".//PNTA/Positions")
    assert np.abs(np.array([v.text.split() for v in positions], np.float32)).max() == np.float32(37.62)
    assert np.isclose(np.abs(oni_points("door_9")).max(), 27.62, rtol=1e-6)
    raise_mesh("door_9")
    report = rebuild(tmp_path)
    assert not report.made and len(report.errors) == 1, report.errors
    assert ("object 'door_9': its mesh was edited, but it cannot be written as door class 'dr_scaled''s geometry: "
            "the leaf's part 0 was not its M3GM 'dr_scaled_panel' (other points), which OniSplit makes every leaf "
            "of") in report.errors[0]
