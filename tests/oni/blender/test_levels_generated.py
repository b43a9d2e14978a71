"""Generated levels of every case in Blender (tools/generate/level_generate.py): every quad a face
with its points, texture coordinates, shades, flags and tag exactly (triangles, every flag bit,
tags of every type), sorted into drawn, markers and door gunk by the rules written out here;
doors without object setups placed by Bungie's rule (tests/fixtures/door_reference.py);
a level and its loose files alike; each face's material blended and culled as its flags say;
with level_generate.rare_cases, the door frame an InDoorFrame door hides and the leaves of two
doors of one door id."""

import os
import struct

import bpy
import level_generate as lg
import numpy as np
import pytest
from blender_materials import is_alpha_blended
from commands import COMMANDS, run
from door_reference import plain_keys, spec_origins
from environment_faces import environment_faces
from reference_engine import matrix_at

from oban_import.oni.engine.to_blender import DEFAULT_AXES

pytestmark = pytest.mark.usefixtures("addon")

SCALE = 0.25
NOT_DRAWN = 0x1 | 0x2 | 0x4 | 0x8 | 0x2000 | 0x40000
JELLO, TRANSPARENT, TWO_SIDED, IN_DOOR_FRAME = 0x20, 0x80, 0x200, 0x4   # LEVEL.md 5 and 1


def generated(tmp_path, seed=3, loose=False, no_setups=False, rare=False, **kinds):
    level = lg.standard_level(np.random.default_rng(seed), **kinds)
    if no_setups:
        level.setups = None
    if rare:
        lg.rare_cases(level)
    path = lg.write_loose(level, tmp_path) if loose else lg.write_level(level, tmp_path)
    return level, str(path)


def import_path(path, **options):
    assert bpy.ops.import_anim.oban(filepath=path, global_scale=SCALE, **options) == {"FINISHED"}


@pytest.mark.parametrize("loose", [False, True], ids=["level", "loose"])
def test_every_generated_quad_is_a_face_as_written(tmp_path, loose):
    level, path = generated(tmp_path, loose=loose)
    import_path(path)
    env = level.environment
    seen = {}
    for obj in [o for o in bpy.data.objects if "oni_environment" in o]:
        for quad, points, uvs, colors, flags, tag in environment_faces(obj):
            seen[quad] = obj
            k = 3 if env.flags[quad] & 0x40 else 4
            corners = env.quad_points[quad, :k]
            expected = (SCALE * env.points[corners].astype(np.float64) @ DEFAULT_AXES.T).astype(np.float32)
            np.testing.assert_array_equal(points, expected)
            uv = env.uvs[env.quad_uvs[quad, :k]]
            np.testing.assert_array_equal(uvs, np.column_stack([uv[:, 0], np.float32(1) - uv[:, 1]]))
            shades = env.shades[quad, :k].astype(np.int64)
            np.testing.assert_array_equal(colors, np.stack([shades >> 16, shades >> 8, shades, shades >> 24], -1) & 255)
            assert np.array(flags, np.int32).view(np.uint32) == env.flags[quad] and tag == env.tags[quad]
    assert sorted(seen) == list(range(len(env.flags)))
    for quad, obj in seen.items():
        flags, tag = int(env.flags[quad]), int(env.tags[quad])
        if tag >> 24 == 3:
            assert obj.name == f"DOOR {tag & 0xFFFFFF} gunk" and not obj.visible_get()
        elif flags & NOT_DRAWN:
            assert obj.name == "gen markers" and not obj.visible_get()
        else:
            assert obj.name == "gen environment" and obj.visible_get()


def test_doors_without_setups_stand_by_bungies_rule(tmp_path):
    level, path = generated(tmp_path, no_setups=True)
    import_path(path)
    change = np.eye(4)
    change[:3, :3] = SCALE * DEFAULT_AXES
    localized = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    animation = level.animations["door_anim"]
    doors = {entry.id: entry for entry in level.lists["Door"]}
    leaves = [obj for obj in bpy.data.objects if "oni_door_leaf" in obj]
    assert len(leaves) == 6   # two single doors, two double ones
    for obj in leaves:
        entry = doors[obj.parent["oni_object_id"]]
        flags = obj.parent["oni_door_flags"]
        first_mesh = level.meshes[level.geometries["dr_main"][0][1]]
        origins, _ = spec_origins(entry.position, entry.rotation, first_mesh.points.tolist(), bool(flags & 0x80),
                                  bool(flags & 0x100))
        leaf = obj["oni_door_leaf"]
        turn = np.diag([1.0, -1, -1, 1]) if bool(flags & 0x100) != bool(leaf) else np.eye(4)
        bpy.context.scene.frame_set(1)
        wanted = change @ origins[leaf] @ localized @ np.array(
            matrix_at(plain_keys(animation), list(map(float, animation.base_matrix)), False, 0)) @ turn
        wanted = wanted @ np.linalg.inv(change)   # float32 keys and parent: a few steps of the largest entry
        np.testing.assert_allclose(np.array(obj.matrix_world), wanted, atol=2e-6 * np.abs(wanted).max())


def test_a_level_without_an_environment_shows_its_furniture(tmp_path):
    level, path = generated(tmp_path, environment=False)
    import_path(path)
    assert not [o for o in bpy.data.objects if "oni_environment" in o]
    assert sorted(o.name for o in bpy.data.objects if o.name.startswith("furniture_")) == ["furniture_5", "furniture_6"]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_listing_names_every_door_and_list(tmp_path, command):
    level, path = generated(tmp_path)
    done = run(command, path, "--list")
    assert done.returncode == 0, done.stderr
    for entry in level.lists["Door"]:
        assert f"  {entry.id}  " in done.stdout or f" {entry.id} " in done.stdout
    for kind in ("DOOR", "FURN", "CMBT", "TRIG", "WEAP"):
        assert kind in done.stdout
    assert "gen" in done.stdout and os.path.basename(path) in done.stdout


def test_each_face_is_blended_and_culled_as_its_flags_say(tmp_path):
    """LEVEL.md 5: Transparent quads alpha blended, every other quad opaque; TwoSided,
    Transparent and Jello quads drawn from both sides, every other one culled; the level holds
    each of the three alone."""
    import_path(generated(tmp_path)[1])
    seen = set()
    for obj in [o for o in bpy.data.objects if "oni_environment" in o]:
        mesh = obj.data
        slots = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("material_index", slots)
        for face, slot in zip(environment_faces(obj), slots.tolist()):
            flags = int(face.flags) & 0xFFFFFFFF
            material = mesh.materials[slot]
            transparent, two_sided = bool(flags & TRANSPARENT), bool(flags & (TWO_SIDED | TRANSPARENT | JELLO))
            assert is_alpha_blended(material) == transparent, (material.name, hex(flags))
            assert material.node_tree.nodes["Principled BSDF"].inputs["Alpha"].is_linked == transparent
            assert material.use_backface_culling == (not two_sided), (material.name, hex(flags))
            assert material.name.endswith(" transparent" if transparent else " two-sided" if two_sided else " shaded")
            seen.add(flags & (TWO_SIDED | TRANSPARENT | JELLO))
    assert {0, JELLO, TRANSPARENT, TWO_SIDED} <= seen


def door_fields(entry):
    """(door id, door flags, frame position) of a DOOR entry's own data (docs/level.md 1: 0x63, 0x67, 0x69)."""
    door_id, = struct.unpack_from("<H", entry.payload, 0x63 - 0x24)
    flags, = struct.unpack_from("<H", entry.payload, 0x67 - 0x24)
    return door_id, flags, struct.unpack_from("<3f", entry.payload, 0x69 - 0x24)


def test_an_in_door_frame_door_hides_the_frame_at_its_frame_position(tmp_path):
    """docs/level.md 9: the door frames (AKDA) an InDoorFrame door hides are found by their
    position equal to the door's frame position, not its own; the level has one of each."""
    level, path = generated(tmp_path, rare=True)
    import_path(path)
    in_door_frame = [(door_fields(entry)[2], entry.position) for entry in level.lists["Door"]
                     if door_fields(entry)[1] & IN_DOOR_FRAME]

    def frames_at(points):
        """The quads of the door frames standing at one of `points` (float32, exactly)."""
        return [quad for quad, _, position, *_ in level.environment.door_frames
                if any((np.float32(position) == np.float32(point)).all() for point in points)]

    hidden = frames_at([center for center, _ in in_door_frame])
    at_door = frames_at([position for _, position in in_door_frame])
    assert hidden and at_door and not set(hidden) & set(at_door)
    framed = bpy.data.objects["gen door frames"]
    assert sorted(face.quad for face in environment_faces(framed)) == hidden and not framed.visible_get()
    assert set(at_door) <= {face.quad for face in environment_faces(bpy.data.objects["gen environment"])}


def test_the_leaves_of_a_door_id_are_held_by_its_first_door(tmp_path):
    """docs/level.md 3 and 10: where two doors have one door id, its leaves are the first door's."""
    level, path = generated(tmp_path, rare=True)
    import_path(path)
    first = {}
    for entry in level.lists["Door"]:
        first.setdefault(door_fields(entry)[0], entry.id)
    assert len(first) < len(level.lists["Door"])
    leaves = [obj for obj in bpy.data.objects if "oni_door_leaf" in obj]
    assert {obj["oni_door_id"] for obj in leaves} == set(first)
    for obj in leaves:
        assert obj.parent["oni_object_id"] == first[obj["oni_door_id"]], obj.name
