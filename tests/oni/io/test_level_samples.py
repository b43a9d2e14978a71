"""The level readers (docs/level.md) on OniSplit's own level (tests/data/environment): the
environment's every quad against OniSplit's Collada and OBJ exports, its arrays against its XML;
the object lists, door classes, furniture geometry, object quad map and OBOA setups against
its XML and the authored values (expected.json); the same from the level .dat, the loose .oni
files and (the environment) -create:akev's file alone.

Which export holds a quad (docs/level.md 5): `_door` / `_furn` the gunk of door / furniture
object N (tag type 3 / 5) as node `door_N` / `furn_N` whose points are relative to its
translate; `_bnv` the ghosts (node `ghost_N`, with the rooms); `_env_markers` the quads of a
`_marker_` texture; `_env` the rest. Every Collada polygon is an AKEV quad in stored corner
order, a Triangle quad three corners; its texture coordinate t is 1 − v of the stored v (as
in OniSplit's OBJ, and Blender's UV); its COLOR is the shade's RGB / 255 with alpha written 0.
"""

import json
import os
import shutil

import numpy as np
import pytest
from level_reference import (DOOR_FLAG_BITS, SOUND_ALLOW, SOUND_TYPE, collada_polygons, flag_bits, numbers,
                             obj_polygons, xml_akev, xml_events, xml_instances, xml_objects, xml_onlv)
from paths import DATA as TEST_DATA

from oban_import.oni.io.level.model import TRIANGLE
from oban_import.oni.io.level.read import read_level

DATA = os.path.join(TEST_DATA, "environment")
LEVEL = os.path.join(DATA, "level", "level5_Final.dat")
LOOSE = os.path.join(DATA, "oni", "ONLVlevel5.oni")
AKEV_ALONE = os.path.join(DATA, "akev", "AKEVlevel5_env.oni")
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))
EXPORTS = ("level5_env", "level5_env_markers", "level5_door", "level5_furn", "level5_bnv")
MISSING_MARKERS = ("TXMP_marker_door", "TXMP_marker_ghost")   # linked by -create:level, never written (7.5)


@pytest.fixture(scope="module")
def level():
    return read_level(LEVEL)


@pytest.fixture(scope="module")
def loose():
    return read_level(LOOSE)


# --- helpers ---------------------------------------------------------------------------------

def export_of(env, quad):
    """The export and node that hold an AKEV quad (the module's docstring)."""
    kind, object_id = int(env.object_types[quad]), int(env.object_ids[quad])
    if kind in (3, 5):
        return ("level5_door", f"door_{object_id}") if kind == 3 else ("level5_furn", f"furn_{object_id}")
    if env.flags[quad] & 0x2:
        return "level5_bnv", "ghost_0"
    name = env.texture_names[env.quad_textures[quad]]
    return ("level5_env_markers" if name.startswith("_marker") else "level5_env"), "world"


def corners(env, quad):
    """(points (k, 3), texture coordinates as Blender's (u, 1 - v) (k, 2), shade RGB / 255 (k, 3)) of a quad."""
    k = int(env.corner_counts()[quad])
    uv = env.texture_coordinates[env.quad_uvs[quad, :k]].astype(np.float64)
    return (env.points[env.quad_points[quad, :k]].astype(np.float64), np.column_stack([uv[:, 0], 1 - uv[:, 1]]),
            env.shade_bytes()[quad, :k, :3] / 255.0)


def assert_quads_are_polygons(env, quads, polygons):
    """`quads` and `polygons` one to one: each polygon the quad of its points (1e-4), texture
    coordinates (1e-6) and colours if it has them (1e-6), in the same corner order."""
    assert len(quads) == len(polygons)
    unmatched = set(quads)
    for polygon in polygons:
        with_colors = polygon.colors is not None

        def distance(quad):
            points, uvs, shades = corners(env, quad)
            if len(points) != len(polygon.points):
                return np.inf
            return max(np.abs(points - polygon.points).max() * 1e-2, np.abs(uvs - polygon.texcoords).max(),
                       np.abs(shades - polygon.colors[:, :3]).max() if with_colors else 0)
        best = min(unmatched, key=distance)
        assert distance(best) < 1e-6, (polygon.node, polygon.material, distance(best))
        material = env.texture_names[env.quad_textures[best]]
        assert polygon.material == material or polygon.material.startswith("_marker"), (polygon.material, material)
        if with_colors:
            assert (polygon.colors[:, 3] == 0).all()   # OniSplit writes no alpha; the shades' is 255
        unmatched.remove(best)


def by_export(env):
    grouped = {}
    for quad in range(len(env.flags)):
        grouped.setdefault(export_of(env, quad)[0], []).append(quad)
    return grouped


def exported(folder, reader, extension):
    """{export: [polygons]} of the five exports, the rooms' floors left out."""
    return {name: [p for p in reader(os.path.join(DATA, folder, name + extension)) if not p.node.startswith("room_")]
            for name in EXPORTS}


# --- the environment -------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["level", "loose"])
def test_every_quad_is_onisplits_collada_polygon(source, level, loose):
    env = (level if source == "level" else loose).environment
    polygons, quads = exported("dae", collada_polygons, ".dae"), by_export(env)
    assert {name: len(p) for name, p in polygons.items()} == {"level5_env": 31, "level5_env_markers": 4,
                                                              "level5_door": 188, "level5_furn": 42, "level5_bnv": 1}
    assert sum(map(len, quads.values())) == len(env.flags) == 266
    for name in EXPORTS:
        for node in sorted({p.node for p in polygons[name]}):
            assert_quads_are_polygons(env, [q for q in quads[name] if export_of(env, q)[1] == node],
                                      [p for p in polygons[name] if p.node == node])


@pytest.mark.parametrize("source", ["level", "loose"])
def test_every_quad_is_onisplits_obj_face(source, level, loose):
    env = (level if source == "level" else loose).environment
    polygons, quads = exported("obj", obj_polygons, ".obj"), by_export(env)
    for name in EXPORTS:
        for node in sorted({p.node for p in polygons[name]}):
            assert_quads_are_polygons(env, [q for q in quads[name] if export_of(env, q)[1] == node],
                                      [p for p in polygons[name] if p.node == node])


def test_the_environment_alone_is_onisplits_env_and_markers():
    """-create:akev of the environment Collada: no gunk, no ghost; its 35 quads are the two
    environment exports' polygons and the authored polygons."""
    read = read_level(AKEV_ALONE)
    env = read.environment
    assert read.name == "level5_env" and read.warnings == [] and read.object_lists == []
    polygons = exported("dae", collada_polygons, ".dae")
    quads = by_export(env)
    assert sorted(quads) == ["level5_env", "level5_env_markers"]
    for name in quads:
        assert_quads_are_polygons(env, quads[name], polygons[name])
    authored = EXPECTED["environment"]["polygons"]
    assert len(authored) == len(env.flags) == 35
    for quad, polygon in zip(range(len(env.flags)), authored):
        points, uvs, shades = corners(env, quad)
        np.testing.assert_allclose(points, polygon["points"], atol=2e-5)
        np.testing.assert_allclose(uvs, polygon["uv"], atol=1e-6)
        colors = np.array(polygon["colors"] or [[207, 207, 207, 255]] * len(points))
        assert (env.shade_bytes()[quad, :len(points)] == colors).all()
        assert env.texture_names[env.quad_textures[quad]] == polygon["material"]
    assert [bool(t.has_alpha) for t in env.textures] == [EXPECTED["environment"]["materials"][n]["alpha"]
                                                         for n in env.texture_names]


def test_the_environment_is_onisplits_xml(level):
    xml = xml_akev(os.path.join(DATA, "xml", "AKEVlevel5.xml"))
    env = level.environment
    for field in ("points", "planes", "texture_coordinates", "collision_boxes", "bounding_box"):
        ours = env.collision_boxes if field == "collision_boxes" else getattr(env, field)
        assert (ours == xml[field].astype(np.float32)).all(), field   # OniSplit writes float32 round-trip digits
    for field in ("quad_points", "quad_uvs", "shades", "flags", "object_tags", "quad_textures", "collision_planes"):
        assert (getattr(env, field) == xml[field]).all(), field
    assert env.texture_names == xml["texture_names"]
    assert (env.rooms["box"] == xml["room_boxes"].astype(np.float32)).all()
    assert (env.rooms["flags"] == xml["room_flags"]).all()
    assert (env.rooms["floor"] == xml["room_floors"].astype(np.float32)).all()
    assert (env.rooms["height"] == xml["room_heights"].astype(np.float32)).all()
    assert len(env.door_frames) == xml["door_frames"] == 0      # OniSplit writes AKDA empty (7.5)
    assert not env.zero_area.any()
    triangles = np.flatnonzero(env.flags & TRIANGLE)
    assert len(triangles) == 126 and (env.quad_points[triangles, 3] == env.quad_points[triangles, 2]).all()


def test_textures_are_found_where_they_are_and_named_where_not(level, loose):
    for read in (level, loose):
        env = read.environment
        missing = [n for n, t in zip(env.texture_names, env.textures) if t is None]
        assert ["TXMP" + n for n in missing] == list(MISSING_MARKERS)
        assert all(t.name == n for n, t in zip(env.texture_names, env.textures) if t is not None)
        assert sorted(w.split()[0] for w in read.warnings) == list(MISSING_MARKERS)


def test_level_and_loose_files_give_the_same(level, loose):
    alone = read_level(os.path.join(DATA, "oni", "AKEVlevel5.oni")).environment
    for env in (loose.environment, alone):
        for field in ("points", "texture_coordinates", "quad_points", "quad_uvs", "shades", "flags", "object_tags",
                      "quad_textures", "collision_planes", "collision_boxes", "planes", "rooms", "door_frames",
                      "bounding_box"):
            assert getattr(env, field).tobytes() == getattr(level.environment, field).tobytes(), field
        assert env.texture_names == level.environment.texture_names
        assert [t and t.rgba8.tobytes() for t in env.textures] == [t and t.rgba8.tobytes()
                                                                   for t in level.environment.textures]
    assert {o.name.replace("_", " "): values(o) for o in loose.object_lists} == \
        {o.name.replace("_", " "): values(o) for o in level.object_lists}
    assert [door_values(d) for d in loose.doors] == [door_values(d) for d in level.doors]
    assert sorted(loose.door_classes) == sorted(level.door_classes)
    assert {k: v.tolist() for k, v in loose.object_quads.items()} == {k: v.tolist()
                                                                     for k, v in level.object_quads.items()}
    assert (loose.name, loose.sky) == (level.name, level.sky) == ("level5", "night")


# --- the object lists ------------------------------------------------------------------------------

def values(objects):
    return (objects.types.tolist(), objects.ids.tolist(), objects.flags.tolist(), objects.positions.tobytes(),
            objects.rotations.tobytes())


def door_values(door):
    return (door.id, door.flags, door.position.tobytes(), door.rotation.tobytes(), door.class_name, door.door_id,
            door.key_id, door.door_flags, door.frame_position.tobytes(), door.activation_radius_squared,
            door.texture_names, [(e.type, e.script, e.target) for e in door.events], door.setups,
            door.door_class and door.door_class.name, [t and t.name for t in door.textures])


def test_lists_are_onisplits_xml(level):
    lists = {o.name: o for o in level.object_lists}
    assert len(lists) == 14 and all(len(o.ids) == 0 for name, o in lists.items() if name not in ("Door", "Furniture"))
    for name, kind in (("Door", "DOOR"), ("Furniture", "FURN")):
        xml = xml_objects(os.path.join(DATA, "xml", f"BINACJBO{name}.xml"))
        ours = lists[name]
        assert ours.types.tolist() == [o["type"] for o in xml] == [kind] * len(xml)
        assert ours.ids.tolist() == [o["id"] for o in xml]
        assert ours.flags.tolist() == [flag_bits(o["flags"], {}) for o in xml]
        assert (ours.positions == np.array([o["position"] for o in xml], np.float32)).all()
        assert (ours.rotations == np.array([o["rotation"] for o in xml], np.float32)).all()
    for door, xml in zip(level.doors, xml_objects(os.path.join(DATA, "xml", "BINACJBODoor.xml")), strict=True):
        osd = xml["osd"]
        assert door.class_name == osd.findtext("Class") and door.door_class.name == door.class_name
        assert (door.door_id, door.key_id) == (int(osd.findtext("DoorId")), int(osd.findtext("KeyId")))
        assert door.door_flags == flag_bits(osd.findtext("Flags"), DOOR_FLAG_BITS)
        assert (door.frame_position == numbers(osd.findtext("Center")).astype(np.float32)).all()
        assert door.activation_radius_squared == float(osd.findtext("SquaredActivationRadius"))
        assert door.texture_names == (osd.findtext("Texture1"), osd.findtext("Texture2"))
        assert [(e.type, e.script, e.target) for e in door.events] == xml_events(osd)
    for piece, xml in zip(level.furniture, xml_objects(os.path.join(DATA, "xml", "BINACJBOFurniture.xml")),
                          strict=True):
        assert (piece.class_name, piece.particle) == (xml["osd"].findtext("Class"), xml["osd"].findtext("Particle"))
        assert piece.geometry.name == piece.class_name


def test_lists_are_the_authored_values(level):
    """expected.json: what OniSplit was given (positions and angles to float32)."""
    events = {"": [], "script": [1], "unlock": [11, 2], "both": [1, 10, 0]}
    assert len(level.doors) == len(EXPECTED["doors"]) == 12
    for door, authored in zip(level.doors, EXPECTED["doors"]):
        assert door.class_name == authored["class"]
        assert door.door_flags == flag_bits(authored["flags"], DOOR_FLAG_BITS)
        assert (door.door_id, door.key_id) == (authored["door_id"], authored["key_id"])
        for ours, theirs in ((door.position, "position"), (door.rotation, "rotation"),
                             (door.frame_position, "center")):
            assert (ours == np.array(authored[theirs], np.float32)).all(), theirs
        assert door.activation_radius_squared == authored["radius"] ** 2
        assert door.texture_names == (authored["texture1"], authored["texture2"])
        assert [t and t.name for t in door.textures] == [n or None for n in door.texture_names]
        assert [e.type for e in door.events] == events[authored["events"]]
    assert len(level.furniture) == len(EXPECTED["furniture"]) == 4
    for piece, authored in zip(level.furniture, EXPECTED["furniture"]):
        assert (piece.class_name, piece.particle) == (authored["class"], authored["particle"])
        assert (piece.position == np.array(authored["position"], np.float32)).all()
        assert (piece.rotation == np.array(authored["rotation"], np.float32)).all()
    assert [d.id for d in level.doors] + [f.id for f in level.furniture] == list(range(1, 17))   # doors first


def test_plain_create_gives_the_same_objects_ids_aside(level):
    """objc/: OniSplit's plain -create of the object XML (the two writers agree, ids aside)."""
    for name in ("Door", "Furniture"):
        alone = read_level(os.path.join(DATA, "objc", f"BINACJBO{name}.oni"))
        ours = next(o for o in level.object_lists if o.name == name)
        (theirs,) = alone.object_lists
        assert theirs.types.tolist() == ours.types.tolist() and theirs.ids.tolist() == list(range(1, len(ours.ids) + 1))
        assert values(theirs)[2:] == values(ours)[2:]
        assert [door_values(d)[4:12] for d in theirs.doors] == [door_values(d)[4:12] for d in ours.doors]
        assert [(f.class_name, f.particle) for f in theirs.furniture] == [(f.class_name, f.particle)
                                                                         for f in ours.furniture]
        assert all(d.door_class is None for d in theirs.doors) and all(f.geometry is None for f in theirs.furniture)
        classes = {d.class_name for d in ours.doors} | {f.class_name for f in ours.furniture}
        assert len([w for w in alone.warnings if w.endswith(("its doors are not drawn", "that furniture is not drawn"))
                    ]) == len(classes)


# --- the classes -----------------------------------------------------------------------------------

def test_door_classes_are_onisplits_xml(level):
    assert sorted(level.door_classes) == sorted(c["name"] for c in EXPECTED["door_classes"])
    for authored in EXPECTED["door_classes"]:
        door_class = level.door_classes[authored["name"]]
        (element,) = xml_instances(os.path.join(DATA, "xml", f"DOOR{authored['name']}.xml")).values()
        links = [link.text or "" for link in element.find("Geometries")]
        assert ["OFGA" + n if n else "" for n in door_class.geometry_names] == links
        assert "OBAN" + door_class.animation_name == element.findtext("Animation")
        assert door_class.sound_attenuation == float(element.findtext("AISoundAttenuation"))
        assert door_class.sounds_allowed == SOUND_ALLOW.index(element.findtext("AISoundAllow"))
        assert door_class.sound_type == SOUND_TYPE[element.findtext("AISoundType")]
        assert door_class.sound_radius == float(element.findtext("AISoundDistance"))
        assert (door_class.open_sound, door_class.close_sound) == (element.findtext("OpenSound"),
                                                                  element.findtext("CloseSound"))
        assert door_class.animation.frames == authored["frames"]
        meshes = door_class.geometries[0].elements
        assert [(e.mesh_name, e.mesh.texture_name) for e in meshes] == [(m["name"], m["texture"])
                                                                       for m in authored["meshes"]]
        for element_, mesh in zip(meshes, authored["meshes"]):
            assert element_.flags == flag_bits(mesh["flags"], {"NoOcclusion": 0x10000, "Transparent": 0x80})
            assert np.allclose(element_.mesh.points.min(axis=0), mesh["lo"], atol=1e-4)   # 3ds Max axes
            assert np.allclose(element_.mesh.points.max(axis=0), mesh["hi"], atol=1e-4)
        second = door_class.geometries[1]
        assert (second and [e.mesh_name for e in second.elements]) == (authored["second"] and [
            m["name"] for m in authored["second"]])


def test_furniture_geometry_is_onisplits_xml(level):
    assert sorted(level.furniture_classes) == sorted(c["name"] for c in EXPECTED["furniture_classes"])
    names = {"NoOcclusion": 0x10000, "Invisible": 0x2000, "NoObjectCollision": 0x4000}
    for authored in EXPECTED["furniture_classes"]:
        geometry = level.furniture_classes[authored["name"]]
        (element,) = xml_instances(os.path.join(DATA, "xml", f"OFGA{authored['name']}.xml")).values()
        xml = [(flag_bits(e.findtext("GunkFlags"), names), e.findtext("Geometry")) for e in element.find("Elements")]
        assert [(e.flags, "M3GM" + e.mesh_name) for e in geometry.elements] == xml
        assert [(e.flags, e.mesh.texture_name) for e in geometry.elements] == [
            (flag_bits(m["flags"], names), m["texture"]) for m in authored["meshes"]]
        for element_, mesh in zip(geometry.elements, authored["meshes"]):   # Oni axes
            assert np.allclose(element_.mesh.points.min(axis=0), mesh["lo"], atol=1e-4)
            assert np.allclose(element_.mesh.points.max(axis=0), mesh["hi"], atol=1e-4)


def test_object_quads_and_leaves_are_onisplits_xml(level):
    xml = xml_onlv(os.path.join(DATA, "xml", "ONLVlevel5.xml"))
    assert (level.name, level.sky) == (xml["name"], xml["sky"][4:])
    assert {k: v.tolist() for k, v in level.object_quads.items()} == {k: v.tolist()
                                                                     for k, v in xml["object_quads"].items()}
    setups = xml["setups"]
    assert len(setups) == 16 + 32 and all(not flags for _, flags in setups[16:])   # 32 empty ones (7.7)
    for door in level.doors:
        wanted = [door.door_id, door.door_id | 0x1000][:door.leaf_count]
        assert door.setups == tuple(next(i for i, (d, flags) in enumerate(setups) if d == w and flags)
                                    for w in wanted) + (None,) * (2 - door.leaf_count)
    assert sum(d.leaf_count for d in level.doors) == 16


def test_a_loose_list_or_class_alone(level, tmp_path):
    """A BINACJBO file alone: its list, its classes from the folder, no OBOA (said once); a DOOR
    or OFGA file alone: its class; the sample folder without the ONLV's lists still reads."""
    doors = read_level(os.path.join(DATA, "oni", "BINACJBODoor.oni"))
    assert doors.name == "Door" and [door_values(d)[:12] for d in doors.doors] == [door_values(d)[:12]
                                                                                   for d in level.doors]
    assert sorted(doors.door_classes) == sorted(level.door_classes) and doors.environment is None
    assert doors.warnings == ["no object setup array (OBOA) holds the doors' leaves: each is placed by Bungie's rule"]
    assert all(d.setups == (None, None) for d in doors.doors)
    door_class = read_level(os.path.join(DATA, "oni", "DOORdr_double.oni"))
    assert list(door_class.door_classes) == ["dr_double"] and door_class.object_lists == []
    assert [[e.mesh_name for e in g.elements] for g in door_class.door_classes["dr_double"].geometries] == [
        ["dr_double_panel", "dr_double_trim"], ["dr_double_panel2"]]
    shelf = read_level(os.path.join(DATA, "oni", "OFGAfu_shelf.oni"))
    assert list(shelf.furniture_classes) == ["fu_shelf"] and shelf.name == "fu_shelf"
    folder = tmp_path / "oni"
    shutil.copytree(os.path.join(DATA, "oni"), folder)
    for name in os.listdir(folder):
        if name.startswith("BINACJBO"):
            os.remove(folder / name)
    bare = read_level(folder / "ONLVlevel5.oni")
    assert bare.object_lists == [] and len(bare.environment.flags) == 266
