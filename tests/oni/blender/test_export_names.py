"""A name OniSplit cannot open (more than 64 characters with its tag: docs/objects.md 9) is
refused by every export, naming the object, image, action or armature it would be written of;
nothing is written for it, and one of 60 characters after the tag is written."""

import os

import bpy
import numpy as np
import pytest
from paths import DATA

from oban_import.oni.blender.characters.armature_body import character_armatures
from oban_import.oni.export.bodies.export import export_bodies
from oban_import.oni.export.meshes import export_meshes
from oban_import.oni.export.oban import export_objects
from oban_import.oni.export.trams.export import export_characters
from oban_import.oni.io.container.instance_file import MAX_NAME
from oban_import.ui.options import BodyExportSettings, CharacterExportSettings, MeshExportSettings, OniExportSettings

pytestmark = pytest.mark.usefixtures("addon")
LONGEST = MAX_NAME - 4          # characters after a four-letter tag
ONCC = os.path.join(DATA, "characters", "oni", "ONCCchar0.oni")


def name(length):
    return ("n" * length)[:length]


def new_mesh_object(label, image_name):
    """A new quad whose material shows a new 4 x 4 image."""
    mesh = bpy.data.meshes.new(label)
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [], [(0, 1, 2, 3)])
    mesh.uv_layers.new(name="UVMap")
    image = bpy.data.images.new(image_name, 4, 4)
    image.pixels.foreach_set(np.ones(64, np.float32))
    material = bpy.data.materials.new("m")
    material.use_nodes = True
    node = material.node_tree.nodes.new("ShaderNodeTexImage")
    node.image = image
    mesh.materials.append(material)
    obj = bpy.data.objects.new(label, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


@pytest.mark.parametrize("too_long", ["object", "image"])
def test_a_mesh_or_image_name_onisplit_cannot_open_is_refused(tmp_path, too_long):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    obj = new_mesh_object(name(LONGEST + (too_long == "object")), name(LONGEST + (too_long == "image")))
    report = export_meshes(bpy.context, [obj], str(tmp_path), MeshExportSettings(global_scale=1.0))
    assert not report.made and len(report.errors) == 1, report.errors
    named = f"part '{obj.name}'" if too_long == "object" else f"texture '{name(LONGEST + 1)}'"
    assert report.errors[0].startswith(f"object '{obj.name}'") and named in report.errors[0], report.errors
    assert f"the name is {MAX_NAME + 1} characters with its tag: OniSplit opens no file holding a name of more " \
           f"than {MAX_NAME}" in report.errors[0], report.errors
    assert os.listdir(tmp_path) == []
    obj.name = obj.data.materials[0].node_tree.nodes[-1].image.name = name(LONGEST)
    report = export_meshes(bpy.context, [obj], str(tmp_path), MeshExportSettings(global_scale=1.0))
    assert not report.errors and sorted(os.listdir(tmp_path)) == [f"M3GM{name(LONGEST)}.oni",
                                                                   f"TXMP{name(LONGEST)}.oni"]


@pytest.mark.parametrize("fmt", ["oni", "xml"])
def test_an_animation_name_onisplit_cannot_open_is_refused(tmp_path, fmt):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    obj = bpy.data.objects.new(name(LONGEST + 1), None)
    bpy.context.scene.collection.objects.link(obj)
    obj.keyframe_insert("location", frame=1)
    obj.location.x = 3.0
    obj.keyframe_insert("location", frame=10)
    report = export_objects(bpy.context, [obj], str(tmp_path), OniExportSettings(file_format=fmt, global_scale=1.0))
    assert not report.made and report.errors == [
        f"object '{obj.name}': OBAN{obj.name}: the name is {MAX_NAME + 1} characters with its tag: OniSplit opens "
        f"no file holding a name of more than {MAX_NAME}; nothing written for it"]
    obj.name = name(LONGEST)
    report = export_objects(bpy.context, [obj], str(tmp_path), OniExportSettings(file_format=fmt, global_scale=1.0))
    assert not report.errors and os.listdir(tmp_path) == [f"OBAN{obj.name}.{fmt}"]


def test_a_character_name_onisplit_cannot_open_is_refused(tmp_path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_anim.oban(filepath=ONCC, character_animations="NONE") == {"FINISHED"}
    armature = bpy.data.objects["char0"]
    armature["oni_body"] = name(LONGEST + 1)
    report = export_bodies(bpy.context, [armature], str(tmp_path), BodyExportSettings())
    assert not report.made and len(report.errors) == 1 and report.errors[0].startswith(
        f"armature 'char0': TRBS{name(LONGEST + 1)}: the name is {MAX_NAME + 1} characters"), report.errors
    action = bpy.data.actions.new(name(LONGEST + 1))
    armature.animation_data_create().action = action
    armature.pose.bones["Head"].keyframe_insert("rotation_quaternion", frame=1)
    report = export_characters(bpy.context, character_armatures([armature]), str(tmp_path),
                               CharacterExportSettings(character_actions="ASSIGNED"))
    assert not report.made and len(report.errors) == 1 and "a name is printable and at most 60 characters" in \
        report.errors[0], report.errors
    assert os.listdir(tmp_path) == []
