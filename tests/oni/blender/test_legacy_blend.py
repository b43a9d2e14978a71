"""A .blend saved by the last release (tests/data/legacy/, one per Blender version) opens and exports as
before: the keys that meant two things (a placed object's setup position, rotation and flags, a
mesh's M3GM parts) are today's once it is opened, or before an export reads it when it was opened
without the add-on; and each export writes of it what it writes of the same files imported today."""

import filecmp
import os
import shutil

import bpy
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from paths import DATA, EXAMPLES

from oban_import.core.id_properties import plain
from oban_import.oni.blender.shared.legacy import upgrade
from oban_import.oni.io.objects.properties import (LEGACY_MESH_KEYS, LEGACY_OBJECT_KEYS, MESH_PARTS, OBJECT_NAME,
                                                   SETUP_ROTATION)
from oban_import.ui.exports import EXPORTS

pytestmark = pytest.mark.usefixtures("addon")
LEGACY = os.path.join(DATA, "legacy", "last_release_{}.{}.blend".format(*bpy.app.version[:2]))
MADE_FROM = "/work/wtold/examples"   # where the last release imported the examples from (legacy/README.md)
IMPORTED = ("level9_Final.dat", "ONCCchar0.oni", "00002-fan_loop.OBAN")


def examples(tmp_path):
    """A copy of examples/ (the files the .blend was imported from), and the .blend pointing at it."""
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder)
    return str(folder)


def opened(tmp_path, folder, blend=LEGACY):
    """The scene of `blend` (the last release's), its recorded paths pointing at `folder`, saved
    as a .blend of its own."""
    bpy.ops.wm.open_mainfile(filepath=blend)
    for owner in [*bpy.data.objects, *bpy.data.meshes, *bpy.data.images, *bpy.data.actions]:
        for key in owner.keys():
            value = plain(owner[key])
            if isinstance(value, str) and value.startswith(MADE_FROM):
                owner[key] = folder + value[len(MADE_FROM):]
            elif isinstance(value, list) and any(isinstance(v, str) and v.startswith(MADE_FROM) for v in value):
                owner[key] = [folder + v[len(MADE_FROM):] if v.startswith(MADE_FROM) else v for v in value]
    assert not [key for owner in [*bpy.data.objects, *bpy.data.meshes, *bpy.data.images] for key in owner.keys()
                if MADE_FROM in str(plain(owner[key]))]
    blend = os.path.join(os.path.dirname(folder), "legacy.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    return blend


def written(tmp_path, name, blend=None, files=IMPORTED, folder=None):
    """{format: output folder} of every export of the scene (`blend` opened, else the files
    imported today from `folder`), into tmp_path/name."""
    if blend:
        bpy.ops.wm.open_mainfile(filepath=blend)
    else:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        for file in files:
            options = {"character_animations": "NONE"} if file.startswith("ONCC") else {}
            assert bpy.ops.import_anim.oban(filepath=os.path.join(folder, file), **options) == {"FINISHED"}
    outputs = {}
    for export in EXPORTS:
        if export.name in ("level-patch", "cutscene") or export.dialog.idname == "export_anim.tram":
            continue   # no environment, no animation of the character, no camera in these files
        chosen = export.function("chooser")(bpy.context.scene.objects)
        out = tmp_path / name / (export.name or export.dialog.idname)
        settings = export.settings(use_selection=False)
        report = export.run(bpy.context, chosen, str(out), settings)
        assert report.made and not report.errors, (export.dialog.idname, report.errors)
        outputs[export.dialog.idname] = out
    return outputs


def same_tree(a, b) -> list:
    """The files that differ between two folders, or are in one only."""
    found = filecmp.dircmp(a, b)
    differ = found.left_only + found.right_only + found.diff_files + found.funny_files
    return differ + [d for sub in found.common_dirs for d in same_tree(os.path.join(a, sub), os.path.join(b, sub))]


def test_its_keys_are_todays_once_opened(tmp_path):
    folder = examples(tmp_path)
    bpy.ops.wm.open_mainfile(filepath=LEGACY)
    placed = [obj for obj in bpy.data.objects if OBJECT_NAME in obj]
    meshes = [mesh for mesh in bpy.data.meshes if MESH_PARTS in mesh]
    assert len(placed) == 9 and len(meshes) >= 9
    for obj in placed:
        assert not set(LEGACY_OBJECT_KEYS.values()) & set(obj.keys()), obj.name
        assert len(obj[SETUP_ROTATION]) == 4 and set(LEGACY_OBJECT_KEYS) <= set(obj.keys()), obj.name
    assert not any(set(LEGACY_MESH_KEYS.values()) & set(mesh.keys()) for mesh in meshes)
    armature = bpy.data.objects["char0"]
    assert armature["oni_parts"][0] == "Pelvis"   # a character's part names keep their key
    assert opened(tmp_path, folder)


def test_opened_without_the_add_on_its_keys_move_before_an_export(tmp_path):
    """The handler that moves them on load is the add-on's: a scene opened without it (a script
    in `blender -b` before enabling it) still holds the old keys until an export's run."""
    bpy.app.handlers.load_post.clear()
    try:
        bpy.ops.wm.open_mainfile(filepath=LEGACY)
        obj = next(obj for obj in bpy.data.objects if OBJECT_NAME in obj)
        rotation = obj["oni_rotation"].to_list()
        assert SETUP_ROTATION not in obj and len(rotation) == 4
        assert upgrade() > 9 and upgrade() == 0      # once: nothing left to move the second time
        assert obj[SETUP_ROTATION].to_list() == rotation and "oni_rotation" not in obj
    finally:
        from oban_import.oni.blender.shared.legacy import upgrade_loaded
        bpy.app.handlers.load_post.append(upgrade_loaded)


def test_every_export_writes_of_it_what_it_writes_of_the_files_imported_today(tmp_path):
    folder = examples(tmp_path)
    blend = opened(tmp_path, folder)
    old = written(tmp_path, "old", blend=blend)
    new = written(tmp_path, "new", folder=folder)
    assert old.keys() == new.keys()
    for idname in old:
        assert os.listdir(old[idname]) and not same_tree(old[idname], new[idname]), idname
    for name in ("ONCCchar0.oni", "TRBSchar0.oni", "TXMPchar0_face.oni"):
        where = old["export_anim.oni_mesh" if name.startswith("M3GM") else "export_anim.oni_body"]
        assert (where / name).read_bytes() == open(os.path.join(EXAMPLES, name), "rb").read(), name
    assert (old["export_anim.oban"] / "OBANfan_loop.oni").is_file()


@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_exports_it(tmp_path, command):
    blend = opened(tmp_path, examples(tmp_path))
    done = run(command, "export", blend, "-o", tmp_path / "meshes", "--format", "mesh", "--objects", "object03")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "meshes" / "M3GMobj03_part0.oni").read_bytes() == \
        open(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"), "rb").read()   # OniSplit's, as level9 holds it


def test_a_blend_saved_by_another_blender_exports_its_unedited_parts_as_stored(tmp_path):
    """Today's import saved by Blender 3.4 (custom normals in 16 bits), opened in this Blender:
    every mesh and body part is still an unchanged import, written as OniSplit stored it."""
    folder = examples(tmp_path)
    blend = opened(tmp_path, folder, os.path.join(DATA, "legacy", "today_3.4.blend"))
    old = written(tmp_path, "old", blend=blend)
    new = written(tmp_path, "new", folder=folder)
    for idname in ("export_anim.oni_mesh", "export_anim.oni_body", "export_anim.oni_level"):
        assert not same_tree(old[idname], new[idname]), idname
    for name in ("ONCCchar0.oni", "TRBSchar0.oni", "M3GMobj03_part0.oni"):
        where = old["export_anim.oni_mesh" if name.startswith("M3GM") else "export_anim.oni_body"]
        assert (where / name).read_bytes() == open(os.path.join(EXAMPLES, name), "rb").read(), name
