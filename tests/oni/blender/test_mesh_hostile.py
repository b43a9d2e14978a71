"""What a new user might do to a mesh before the mesh export (oni/export/meshes.py, docs/objects.md
10): each edit refused naming the object and why, with nothing written, or written as Blender
shows it (read back: every triangle Blender's, bit for bit), never a traceback, never silently
other than shown."""

import os
import re

import bpy
import numpy as np
import pytest
from mesh_edits import removed
from paths import EXAMPLES
from test_mesh_export import assert_as_blender_holds, export, import_files

from oban_import.oni.io.objects.read import read_mesh_file

pytestmark = pytest.mark.usefixtures("addon")
OBJ03 = os.path.join(EXAMPLES, "M3GMobj03_part0.oni")


def obj03():
    return import_files(OBJ03)[0]


def image_node(material):
    return next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage")


def emptied():
    obj = obj03()
    removed(obj.data, "VERTS")
    return obj


def loose_edges_only():
    obj = obj03()
    removed(obj.data, "FACES_ONLY")
    return obj


def ten_thousand_faces():
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=101, y_subdivisions=101)
    return bpy.context.object


def an_image_of_no_pixels():
    obj = obj03()
    image = bpy.data.images.new("nothing", 4, 4)
    image.source, image.filepath = "FILE", "//no such file.png"
    image_node(obj.data.materials[0]).image = image
    return obj


REFUSED = {   # edit -> (the object it leaves, the error)
    "emptied": (emptied, "object 'obj03_part0' part 'obj03_part0': has no faces (an M3GM needs a triangle); nothing "
                         "written for the object"),
    "loose_edges_only": (loose_edges_only, "object 'obj03_part0' part 'obj03_part0': has no faces (an M3GM needs a "
                                           "triangle); nothing written for the object"),
    "ten_thousand_faces": (ten_thousand_faces,   # <N>: a vertex per point, UV and normal drawn (by version)
                           "object 'Grid' part 'Grid': <N> points and 20402 triangles: the engine draws at most 2047 "
                           "and 4095 of one mesh (BFW_Motoko.h); split it into more objects; nothing written for the "
                           "object"),
    "an_image_of_no_pixels": (an_image_of_no_pixels, "object 'obj03_part0' texture 'tex03_rgba' (image 'nothing'): "
                                                     "has no pixels (its file is missing); nothing written for the "
                                                     "object"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_edit_an_m3gm_cannot_hold_is_refused_by_name(tmp_path, case):
    make, said = REFUSED[case]
    report = export(tmp_path, [make()])
    assert len(report.errors) == 1 and re.fullmatch(re.escape(said).replace("<N>", r"\d+"), report.errors[0]), \
        report.errors
    assert not report.made and not os.listdir(tmp_path)


def a_texture_node_without_an_image(obj):
    image_node(obj.data.materials[0]).image = None


def an_empty_material_slot(obj):
    obj.data.materials[0] = None


def a_degenerate_triangle(obj):
    first = obj.data.polygons[0].vertices[0]
    for vertex in obj.data.polygons[0].vertices:
        obj.data.vertices[vertex].co = obj.data.vertices[first].co


def transforms_applied(obj):
    """Turned, scaled unevenly (mirrored) and moved, then Object > Apply > All Transforms: its mesh
    holds them."""
    obj.location, obj.rotation_euler, obj.scale = (1, 2, 3), (0.5, 0.25, 1.0), (2, -3, 0.5)
    bpy.context.view_layer.update()
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.transform_apply(location=True, rotation=True, scale=True) == {"FINISHED"}


def in_edit_mode(obj):
    import bmesh  # once bpy is

    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edited = bmesh.from_edit_mesh(obj.data)
    edited.verts.ensure_lookup_table()
    edited.verts[0].co.x += 1.0
    bmesh.update_edit_mesh(obj.data)


CARRIED = {   # edit -> (M3GM note, the texture it links, the TXMP written or None, the report's notes)
    "a_texture_node_without_an_image": (a_texture_node_without_an_image, "unchanged import", "tex03_rgba", None,
                                        ["object 'obj03_part0' part 'obj03_part0': its texture 'tex03_rgba' is "
                                         "linked, not written (its material shows no image)"]),
    "an_empty_material_slot": (an_empty_material_slot, "unchanged import", "", None, []),
    "a_degenerate_triangle": (a_degenerate_triangle, "edited", "tex03_rgba", "TXMPtex03_rgba.oni", []),
    "in_edit_mode": (in_edit_mode, "edited", "tex03_rgba", "TXMPtex03_rgba.oni", []),
    "transforms_applied": (transforms_applied, "edited", "tex03_rgba", "TXMPtex03_rgba.oni", []),
}


@pytest.mark.parametrize("case", sorted(CARRIED))
def test_an_edit_an_m3gm_holds_is_written_as_blender_shows_it(tmp_path, case):
    """The mesh read back is Blender's (an object in edit mode with its edits), or where its
    faces are as imported OniSplit's arrays; the texture it links the one its material shows
    (none: links none), said where no image shows it."""
    edit, note, texture, txmp, notes = CARRIED[case]
    obj = obj03()
    edit(obj)
    report = export(tmp_path, [obj])
    assert not report.errors and not report.warnings and report.notes == notes
    assert {os.path.basename(m.path): m.note for m in report.made} == \
        {"M3GMobj03_part0.oni": note} | ({txmp: "unchanged import"} if txmp else {})
    back = read_mesh_file(str(tmp_path / "M3GMobj03_part0.oni"))
    assert back.texture_name == texture
    if note == "unchanged import":
        theirs = read_mesh_file(OBJ03)
        assert all(np.array_equal(getattr(back, field), getattr(theirs, field))
                   for field in ("points", "normals", "uvs", "strips", "face_normals", "face_normal_indices"))
    else:
        bpy.ops.object.mode_set(mode="OBJECT") if obj.mode == "EDIT" else None
        assert_as_blender_holds(obj, str(tmp_path / "M3GMobj03_part0.oni"))
