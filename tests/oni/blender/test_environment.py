"""A level in Blender (docs/level.md, "In Blender") against OniSplit's own exports of the sample
level (tests/data/environment): every environment quad a face with OniSplit's points, texture
coordinates and shades, its flags and tag as face attributes, the material its texture and
flags say; what the game does not draw hidden; each door leaf where the engine puts it at
every frame (its setup's origin and its class's OBAN, written out plainly); every object of
the lists an Empty."""

import math
import os
import xml.etree.ElementTree as ET

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from environment_faces import environment_faces
from level_reference import DOOR_FLAG_BITS, collada_polygons, flag_bits, numbers, xml_akev, xml_objects
from paths import DATA
from reference_engine import matrix_at

from oban_import.oni.engine.to_blender import DEFAULT_AXES

pytestmark = pytest.mark.usefixtures("addon")

ENV = os.path.join(DATA, "environment")
LEVEL = os.path.join(ENV, "level", "level5_Final.dat")
LOOSE = os.path.join(ENV, "oni", "ONLVlevel5.oni")
EXPORTS = ("level5_env", "level5_env_markers", "level5_door", "level5_furn", "level5_bnv")
NOT_DRAWN = 0x1 | 0x2 | 0x4 | 0x8 | 0x2000 | 0x40000
SCALE = 0.5     # not the default: the scale must reach every point


def import_level(path=LEVEL, **options):
    assert bpy.ops.import_anim.oban(filepath=path, global_scale=SCALE, **options) == {"FINISHED"}


def environment_objects():
    return [obj for obj in bpy.data.objects if "oni_environment" in obj]


def face_data(obj):
    """Per face of an environment object: corner points in Oni axes (float64), UVs, RGBA bytes, and
    its flags, tag and quad index."""
    return [(face.points.astype(np.float64) @ DEFAULT_AXES / SCALE, face.uvs, face.colors.astype(np.float64),
             face.flags, face.tag, face.quad) for face in environment_faces(obj)]   # A is a rotation: A^-1 = A^T


@pytest.mark.parametrize("path", [LEVEL, LOOSE], ids=["level", "loose"])
def test_every_quad_is_a_face_as_onisplits_collada_has_it(path):
    import_level(path)
    polygons = [polygon for name in EXPORTS for polygon in collada_polygons(os.path.join(ENV, "dae", name + ".dae"))
                if not polygon.node.startswith("room_")]
    akev = xml_akev(os.path.join(ENV, "xml", "AKEVlevel5.xml"))
    faces = [face for obj in environment_objects() for face in face_data(obj)]
    assert len(faces) == len(akev["flags"]) == 266
    assert sorted(face[5] for face in faces) == list(range(266))   # each quad once
    for points, uvs, colors, flags, tag, quad in faces:
        nearest = min((i for i, p in enumerate(polygons) if len(p.points) == len(points)),
                      key=lambda i: np.abs(polygons[i].points - points).max() + np.abs(polygons[i].texcoords - uvs).max())
        polygon = polygons.pop(nearest)
        np.testing.assert_allclose(points, polygon.points, atol=1e-4)
        np.testing.assert_allclose(uvs, polygon.texcoords, atol=1e-6)   # (u, 1 - v): OniSplit's t
        if polygon.colors is not None:   # the rooms' file has none (the ghost's)
            np.testing.assert_array_equal(colors[:, :3], np.round(polygon.colors[:, :3] * 255))
        np.testing.assert_array_equal(colors[:, 3], akev["shades"][quad, :len(points)] >> 24)
        assert flags == np.int32(np.uint32(akev["flags"][quad]).view(np.int32)) and tag == akev["object_tags"][quad]
        assert len(points) == (3 if akev["flags"][quad] & 0x40 else 4)
    assert not polygons


def test_what_the_game_draws_is_visible_and_the_rest_hidden():
    import_level()
    for obj in environment_objects():
        faces = face_data(obj)
        drawn = [not (flags & NOT_DRAWN) and tag >> 24 != 3 for _, _, _, flags, tag, _ in faces]
        if obj.visible_get():
            assert all(drawn), obj.name
        else:
            assert not any(drawn) and not obj.users_collection[0].hide_render is False, obj.name
    visible = [obj.name for obj in environment_objects() if obj.visible_get()]
    assert visible == ["level5 environment"]
    gunk = [obj for obj in environment_objects() if obj.name.endswith(" gunk")]
    assert len(gunk) == 12 and all(tag >> 24 == 3 and tag & 0xFFFFFF == int(obj.name.split()[1])
                                   for obj in gunk for *_, tag, _ in face_data(obj))


def test_each_face_shows_its_texture_times_its_shade_blended_and_culled_as_its_flags_say():
    import_level()
    akev = xml_akev(os.path.join(ENV, "xml", "AKEVlevel5.xml"))
    for obj in environment_objects():
        mesh = obj.data
        slots = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("material_index", slots)
        for (*_, flags, _, quad), slot in zip(face_data(obj), slots):
            material = mesh.materials[slot]
            name = akev["texture_names"][akev["quad_textures"][quad]]
            images = [n.image.name for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage"]
            assert images == ([name] if name in bpy.data.images else []), (material.name, name)
            colour = [n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeVertexColor"]
            assert [n.layer_name for n in colour] == ["oni_shade"]
            bsdf = material.node_tree.nodes["Principled BSDF"]
            assert bsdf.inputs["Alpha"].is_linked == bool(flags & 0x80)
            assert material.use_backface_culling == (not flags & (0x200 | 0x80 | 0x20))


def oboa_origins():
    """{setup name: 4x4 origin} from OniSplit's XML of the level's OBOA."""
    root = ET.parse(os.path.join(ENV, "xml", "ONLVlevel5.xml")).getroot()
    found = {}
    for setup in root.iter("OBOAObject"):
        columns = numbers(setup.findtext("Transform"))
        if len(columns) == 12 and setup.findtext("Name"):
            matrix = np.eye(4)
            matrix[:3, :4] = columns.reshape(4, 3).T
            found[setup.findtext("Name")] = matrix
    return found


def door_motion(door_class):
    """(keys as matrix_at takes them, base by columns, frame count) of a door class's OBAN XML."""
    link = ET.parse(os.path.join(ENV, "xml", f"DOOR{door_class}.xml")).getroot().findtext("DOOR/Animation")
    oban = ET.parse(os.path.join(ENV, "xml", f"{link}.xml")).getroot().find("OBAN")
    keys = [(tuple(numbers(k.findtext("Rotation"))), tuple(numbers(k.findtext("Translation"))),
             int(k.findtext("Time"))) for k in oban.find("KeyFrames")]
    return keys, list(numbers(oban.findtext("BaseTransform"))), int(oban.findtext("FrameCount"))


def test_every_leaf_stands_where_the_engine_puts_it_at_every_frame():
    """W(f) = O . Rx(pi/2) . T(p) . R(q) . Base . [Rx(pi) if the leaf turns], O its setup's
    origin, the motion its class's OBAN; in Blender [sA] W [sA]^-1 from Start Frame on."""
    import_level()
    doors = {o["osd"].findtext("DoorId"): o for o in xml_objects(os.path.join(ENV, "xml", "BINACJBODoor.xml"))}
    origins = oboa_origins()
    change = np.eye(4)
    change[:3, :3] = SCALE * DEFAULT_AXES
    localized = [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    leaves = [obj for obj in bpy.data.objects if "oni_door_leaf" in obj]
    assert len(leaves) == 16
    scene = bpy.context.scene
    for obj in leaves:
        door = doors[str(obj["oni_door_id"])]
        keys, base, frames = door_motion(door["osd"].findtext("Class"))
        mirror = bool(flag_bits(door["osd"].findtext("Flags"), DOOR_FLAG_BITS) & 0x100)
        turn = np.diag([1.0, -1.0, -1.0, 1.0]) if mirror != bool(obj["oni_door_leaf"]) else np.eye(4)
        assert obj.parent is not None and obj.parent["oni_object_id"] == door["id"]
        for f in range(frames):
            scene.frame_set(1 + f)
            wanted = change @ origins[obj["oni_object_name"]] @ np.array(localized) @ \
                np.array(matrix_at(keys, base, False, f)) @ turn @ np.linalg.inv(change)
            got = np.array(obj.matrix_world)
            assert np.abs(got - wanted).max() < 1e-5 * max(1.0, np.abs(wanted).max()), (obj.name, f)


def euler(degrees):
    x, y, z = (math.radians(v) for v in degrees)
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rz @ ry @ rx


@pytest.mark.parametrize("kind", ["Door", "Furniture"])
def test_every_object_of_the_lists_is_an_empty_where_it_stands(kind):
    import_level()
    objects = xml_objects(os.path.join(ENV, "xml", f"BINACJBO{kind}.xml"))
    empties = {obj["oni_object_id"]: obj for obj in bpy.data.collections[f"level5 {kind}"].objects}
    assert sorted(empties) == sorted(o["id"] for o in objects)
    for wanted in objects:
        obj = empties[wanted["id"]]
        assert obj.type == "EMPTY" and obj["oni_type"] == wanted["type"]
        matrix = np.array(obj.matrix_world)
        np.testing.assert_allclose(matrix[:3, 3], SCALE * DEFAULT_AXES @ wanted["position"], atol=1e-5)
        np.testing.assert_allclose(matrix[:3, :3], DEFAULT_AXES @ euler(wanted["rotation"]) @ DEFAULT_AXES.T,
                                   atol=1e-6)
        osd = wanted["osd"]
        if kind == "Door":
            assert obj["oni_door_class"] == osd.findtext("Class") and obj["oni_door_id"] == int(osd.findtext("DoorId"))
            assert obj["oni_key_id"] == int(osd.findtext("KeyId"))
            assert obj["oni_door_flags"] == flag_bits(osd.findtext("Flags"), DOOR_FLAG_BITS)
            assert obj["oni_texture1"] == (osd.findtext("Texture1") or "")
        else:
            assert obj["oni_furniture_class"] == osd.findtext("Class")
            assert obj["oni_particle"] == (osd.findtext("Particle") or "")


def test_without_an_environment_the_furniture_stands_as_its_meshes(tmp_path):
    import_level(os.path.join(ENV, "oni", "BINACJBOFurniture.oni"))
    objects = xml_objects(os.path.join(ENV, "xml", "BINACJBOFurniture.xml"))
    placed = {obj.name: obj for obj in bpy.data.objects if obj.type == "MESH"}
    assert sorted(placed) == sorted(f"furniture_{o['id']}" for o in objects)
    for wanted in objects:
        matrix = np.array(placed[f"furniture_{wanted['id']}"].matrix_world)
        np.testing.assert_allclose(matrix[:3, 3], SCALE * DEFAULT_AXES @ wanted["position"], atol=1e-5)
        np.testing.assert_allclose(matrix[:3, :3], DEFAULT_AXES @ euler(wanted["rotation"]) @ DEFAULT_AXES.T,
                                   atol=1e-6)


def test_each_part_can_be_left_out():
    import_level(environment=False, object_lists=False)
    assert not environment_objects() and not [o for o in bpy.data.objects if "oni_type" in o]
    assert len([o for o in bpy.data.objects if "oni_door_leaf" in o]) == 16
    bpy.ops.wm.read_factory_settings(use_empty=True)
    import_level(objects=False)
    assert environment_objects() and not [o for o in bpy.data.objects if "oni_door_leaf" in o]


def test_a_failure_while_the_level_is_built_leaves_nothing_of_it(monkeypatch):
    from oban_import.oni.blender.level import environment
    made = environment.new_environment_mesh
    calls = []

    def failing(*args):   # a bug once the environment and its markers are made
        calls.append(args[0])
        if len(calls) == 3:
            raise RuntimeError("boom")
        return made(*args)

    monkeypatch.setattr(environment, "new_environment_mesh", failing)
    before = {kind: len(getattr(bpy.data, kind)) for kind in ("objects", "meshes", "materials", "images",
                                                              "collections")}
    with pytest.raises(RuntimeError, match="could not be imported: RuntimeError"):
        bpy.ops.import_anim.oban(filepath=LEVEL)
    assert len(calls) == 3
    assert {kind: len(getattr(bpy.data, kind)) for kind in before} == before


@pytest.mark.parametrize("command", COMMANDS)
def test_both_command_lines_import_a_level(tmp_path, command):
    out = tmp_path / "level.blend"
    done = run(command, LEVEL, "-o", out, "--no-object-lists")
    assert done.returncode == 0, done.stderr
    assert out.exists() and "level5" in done.stdout and "266" in done.stdout   # the environment's quads


def test_the_panel_shows_a_faces_flags_by_name_and_a_doors_fields():
    from oban_import.ui.panel import OBJECT_PT_oni_level, level_lines
    import_level()
    environment = bpy.data.objects["level5 environment"]
    bpy.context.view_layer.objects.active = environment
    assert OBJECT_PT_oni_level.poll(bpy.context)
    akev = xml_akev(os.path.join(ENV, "xml", "AKEVlevel5.xml"))
    lines = level_lines(environment)
    assert lines[0] == f"{len(environment.data.polygons)} quads of level5"
    quads = [face[5] for face in face_data(environment)]
    transparent = sum(bool(akev["flags"][q] & 0x80) for q in quads)
    assert f"Transparent: {transparent}" in lines and transparent
    bpy.ops.object.mode_set(mode="EDIT")
    import bmesh
    faces = bmesh.from_edit_mesh(environment.data).faces
    faces.ensure_lookup_table()
    quad = quads[5]
    faces.active = faces[5]
    lines = level_lines(environment)
    names = [name for name, bit in (("Triangle", 0x40), ("Transparent", 0x80), ("TwoSided", 0x200),
                                    ("Horizontal", 0x80000), ("Vertical", 0x100000)) if akev["flags"][quad] & bit]
    assert lines[0] == f"Quad {quad}" and all(name in lines for name in names) and lines[-1] == "Object: none"
    bpy.ops.object.mode_set(mode="OBJECT")
    door = next(obj for obj in bpy.data.objects if obj.get("oni_type") == "DOOR" and obj["oni_object_id"] == 7)
    lines = level_lines(door)
    assert lines[:4] == ["DOOR 7", "Class: dr_swing", "Door id 7, key id 2", "Flags: InDoorFrame DoubleDoor Mirror"]
    assert "Event: UnlockDoor: 12" in lines and "Event: ActivateTurret: 3" in lines
    leaf = bpy.data.objects["door_4103"]
    assert level_lines(leaf) == ["Leaf 1 of door 7"]
