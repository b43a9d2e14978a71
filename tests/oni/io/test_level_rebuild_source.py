"""The files OniSplit rebuilds a level from (docs/level.md 11), written from OniSplit's own level
(tests/data/environment): the environment Collada against the level's quads read back with
xml.etree alone, the rooms against the Collada the level was authored from (src/), the object
lists against the authored XML, and the whole against the files OniSplit v0.9.99.2 turned,
with `-create:level` and `-import:nosep`, into a level5_Final.dat and .raw byte-identical to
the original (rebuild/; tests/data/environment/README.md has the commands)."""

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from level_reference import DOOR_FLAG_BITS, EVENT_NAMES, collada_polygons, flag_bits, numbers, xml_events
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.level.model import DoorEvent, Quads
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.level_rebuild.collada import DERIVED, collada_t, environment_collada, rooms_collada, runs
from oban_import.oni.io.level_rebuild.master_xml import master_xml, objects_xml

DATA = os.path.join(TEST_DATA, "environment")
LEVEL = os.path.join(DATA, "level", "level5_Final.dat")
REBUILD = os.path.join(DATA, "rebuild")
EDITED = os.path.join(DATA, "edited")
GHOSTS = 0x2 | 0x4 | 0x8


@pytest.fixture(scope="module")
def level():
    return read_level(LEVEL)


def own_quads(env):
    """(the quads of the environment's own Collada, the ghosts): object tag -1, ghosts apart."""
    own = env.object_tags == -1
    ghost = own & ((env.flags & GHOSTS) != 0)
    return np.flatnonzero(own & ~ghost), np.flatnonzero(ghost)


def written(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_environment_collada_holds_every_own_quad_in_order(level, tmp_path):
    env = level.environment
    quads, ghosts = own_quads(env)
    assert (len(quads), len(ghosts)) == (35, 1)   # the authored 35 polygons; gunk comes from the objects
    text, node_flags = environment_collada(env.quads(quads))
    polygons = collada_polygons(written(tmp_path, "env.dae", text))
    ns = {"c": "http://www.collada.org/2005/11/COLLADASchema"}
    root = ET.fromstring(text)
    images = {i.get("id"): i.findtext("c:init_from", namespaces=ns) for i in root.iterfind(".//c:image", ns)}
    image_of = {m.get("id"): images[m.get("id") + "-img"] for m in root.iterfind(".//c:material", ns)}
    assert len(polygons) == len(quads)
    for polygon, quad in zip(polygons, quads.tolist()):
        k = 3 if env.flags[quad] & 0x40 else 4
        assert len(polygon.points) == k
        assert (polygon.points.astype(np.float32) == env.points[env.quad_points[quad, :k]]).all()
        stored_v = env.texture_coordinates[env.quad_uvs[quad, :k]]
        t = polygon.texcoords.astype(np.float32)
        assert (t[:, 0] == stored_v[:, 0]).all()
        assert (np.float32(1) - t[:, 1] == stored_v[:, 1]).all()   # OniSplit's float32 1 - t
        rgba = env.shade_bytes([quad])[0, :k]
        assert (np.floor(polygon.colors.astype(np.float32) * np.float32(255)) == rgba).all()   # it truncates
        assert image_of[polygon.material] == env.texture_names[env.quad_textures[quad]] + ".tga"
    # a node per run of equal flags; its GunkFlags and what OniSplit derives give the stored flags
    nodes = [p.node for p in polygons]
    assert [n for n, _ in node_flags] == list(dict.fromkeys(nodes))
    told = dict(node_flags)
    for polygon, quad in zip(polygons, quads.tolist()):
        assert told[polygon.node] | (env.flags[quad] & DERIVED) == env.flags[quad]
    assert len(node_flags) == len(runs(env.flags[quads])) - 1


def test_t_gives_v_back_through_onisplits_float32():
    rng = np.random.default_rng(5)
    onisplits = np.float32(1) - rng.random(100_000, np.float32)     # every v OniSplit can have written
    onisplits = np.concatenate([onisplits, np.float32([0, 1, 0.5, 0.25, 2 ** -24])])
    assert (np.float32(1) - collada_t(onisplits) == onisplits).all()
    other = rng.random(100_000, np.float32) * np.float32(0.01)      # finer than 1 - t can give: the nearest
    t = collada_t(other)
    error = np.abs((np.float32(1) - t).astype(np.float64) - other)
    for neighbour in (np.nextafter(t, np.float32(2)), np.nextafter(t, np.float32(-1))):
        assert (error <= np.abs((np.float32(1) - neighbour).astype(np.float64) - other)).all()


def test_the_rooms_are_the_authored_floors_then_the_ghosts(level, tmp_path):
    env = level.environment
    authored = collada_polygons(os.path.join(DATA, "src", "level5_rooms.dae"))
    floors = [p for p in authored if p.node.startswith("bnv")]
    assert env.room_floor_counts.tolist() == [len(p.points) for p in floors]
    assert (env.room_floors == np.concatenate([p.points for p in floors]).astype(np.float32)).all()
    _, ghosts = own_quads(env)
    text = rooms_collada(env.room_floors, env.room_floor_counts, env.points[env.quad_points[ghosts]])
    root = ET.fromstring(text)
    ns = {"c": "http://www.collada.org/2005/11/COLLADASchema"}
    assert root.find("c:asset/c:unit", ns).get("meter") == "0.1"
    points = numbers(root.find(".//c:float_array", ns).text).reshape(-1, 3)
    assert numbers(root.find(".//c:vcount", ns).text).tolist() == [4, 4, 4, 4]
    assert (points.astype(np.float32) == np.concatenate([p.points for p in authored]).astype(np.float32)).all()


def test_a_corner_beyond_the_world_is_refused(level):
    """A corner 4096 units out on an axis (float32) is written, the next float32 refused, naming
    the quad, ghost or floor corner: the game's octree ends there, and OniSplit's room grids of a
    floor reaching 1e30 exhausted its memory (docs/level.md 11)."""
    env = level.environment
    own, ghost_quads = own_quads(env)
    edge = np.float32(4096)
    beyond = np.nextafter(edge, np.float32(np.inf))
    quads = env.quads(own)
    quads.points[7, 2] = [edge, -edge, edge]
    environment_collada(quads)
    quads.points[7, 2, 1] = -beyond
    with pytest.raises(ObanError, match=r"^the environment: a corner of quad 7 lies at \(4096, -4096\.00049, 4096\), "
                                        "beyond 4096 units from the origin on an axis, where the game's world ends "
                                        r"\(1 such\)$"):
        environment_collada(quads)
    floors, ghosts = env.room_floors.copy(), env.points[env.quad_points[ghost_quads]]
    floors[5, 2] = edge
    rooms_collada(floors, env.room_floor_counts, ghosts)
    floors[5, 2] = beyond
    with pytest.raises(ObanError, match=r"^the rooms: floor corner 5 lies at .*, 4096\.00049\), beyond 4096 units"):
        rooms_collada(floors, env.room_floor_counts, ghosts)
    ghosts[0, 3, 0] = -beyond
    with pytest.raises(ObanError, match=r"^the rooms: a corner of ghost 0 lies at \(-4096\.00049, "):
        rooms_collada(env.room_floors, env.room_floor_counts, ghosts)
    rooms_collada(env.room_floors, env.room_floor_counts, ghosts[:0])                  # no ghost


def test_the_object_lists_are_the_authored_objects(level, tmp_path):
    for objects, name in ((level.doors, "BINACJBODoor.xml"), (level.furniture, "BINACJBOFurniture.xml")):
        authored = ET.parse(os.path.join(DATA, "src", name)).getroot().find("Objects")
        ours = ET.fromstring(objects_xml(objects)).find("Objects")
        assert len(ours) == len(authored) == len(objects)
        for mine, theirs in zip(ours, authored):
            assert mine.tag == theirs.tag
            for field in ("Position", "Rotation"):
                assert (numbers(mine.findtext(f"Header/{field}")).astype(np.float32)
                        == numbers(theirs.findtext(f"Header/{field}")).astype(np.float32)).all()
            for field in ("Class", "DoorId", "KeyId", "Texture1", "Texture2", "Particle"):
                assert (mine.findtext(f"OSD/{field}") or "") == (theirs.findtext(f"OSD/{field}") or "")
            if mine.tag == "DOOR":
                assert flag_bits(mine.findtext("OSD/Flags"), DOOR_FLAG_BITS) == \
                    flag_bits(theirs.findtext("OSD/Flags"), DOOR_FLAG_BITS)
                for field in ("Center", "SquaredActivationRadius"):
                    assert (numbers(mine.findtext(f"OSD/{field}")).astype(np.float32)
                            == numbers(theirs.findtext(f"OSD/{field}")).astype(np.float32)).all()
                assert xml_events(mine.find("OSD")) == xml_events(theirs.find("OSD"))


def test_every_event_is_spelled_as_onisplit_reads_it(level):
    door = level.doors[0]
    events = [DoorEvent(type=k, script="fn" if k == 1 else "", target=7) for k in range(len(EVENT_NAMES))]
    element = ET.fromstring(objects_xml([type(door)(**{**door.__dict__, "events": events})]))
    assert [e.tag for e in element.find("Objects/DOOR/OSD/Events")] == list(EVENT_NAMES)


def test_the_master_names_its_parts(level):
    text = master_xml("level5", [("n0", 0), ("n1", 0x20 | 0x8000)], "night", ["BINACJBODoor.xml"])
    root = ET.fromstring(text).find("Level")
    assert (root.get("Name"), root.get("SharedPath")) == ("level5", "classes")
    model = root.find("Environment/Model/Import")
    assert model.get("Path") == "level5_env.dae"
    assert [(n.get("Id"), int(n.findtext("GunkFlags"))) for n in model] == [("n1", 0x8020)]
    assert root.find("Environment/Rooms/Import").get("Path") == "level5_rooms.dae"
    assert root.findtext("Sky") == "ONSKnight"
    assert [e.text for e in root.find("Objects")] == ["BINACJBODoor.xml"]
    assert ET.fromstring(master_xml("x", [], "", [])).find("Level/Sky") is not None   # present, empty


def test_the_files_onisplit_rebuilt_the_level_from(level):
    """rebuild/ holds what these writers gave for the sample, from which OniSplit rebuilt the
    original level5_Final.dat and .raw byte for byte: they still write exactly that."""
    env = level.environment
    quads, ghosts = own_quads(env)
    text, node_flags = environment_collada(env.quads(quads))
    files = {"level5_env.dae": text,
             "level5_rooms.dae": rooms_collada(env.room_floors, env.room_floor_counts,
                                               env.points[env.quad_points[ghosts]]),
             "level5_objects.xml": objects_xml(level.doors + level.furniture),
             "level5.xml": master_xml(level.name, node_flags, level.sky, ["level5_objects.xml"])}
    for name, text in files.items():
        assert text == open(os.path.join(REBUILD, name), encoding="utf-8").read(), name


def test_quads_keep_their_own_corners(level):
    env = level.environment
    quads = env.quads([0, 28])
    assert isinstance(quads, Quads)
    assert quads.corner_counts.tolist() == [4, 3]
    assert (quads.points[1, 3] == quads.points[1, 2]).all()   # a Triangle's fourth repeats its third


def test_onisplits_rebuild_of_edits_holds_exactly_them(level):
    """edited/level: OniSplit's rebuild of edited/source, what the add-on wrote for the sample
    with new shades on the drawn environment, two faces' flags changed, quad 7 deleted, quad 0
    copied 5 units up, door 5 moved 5 units along x and turned a quarter, a crate added 2 units
    above crate 13 (tests/oni/blender/test_level_rebuild.py::edit)."""
    before, after = level.environment, read_level(os.path.join(EDITED, "level", "level5_Final.dat"))
    env = after.environment
    polygons = collada_polygons(os.path.join(EDITED, "source", "level5_env.dae"))
    master = ET.parse(os.path.join(EDITED, "source", "level5.xml")).getroot()
    told = {n.get("Id"): int(n.findtext("GunkFlags")) for n in master.iterfind(".//Model/Import/Node")}
    own = np.flatnonzero((env.object_tags == -1) & ((env.flags & GHOSTS) == 0))
    kept = np.insert(np.delete(own_quads(before)[0], 7), 1, 0)       # the copy follows quad 0
    raised = np.arange(len(kept)) == 1
    assert len(own) == len(polygons) == len(kept) == 35
    for polygon, quad, was, up in zip(polygons, own.tolist(), kept.tolist(), raised):
        k = len(polygon.points)
        stored = before.points[before.quad_points[was, :k]] + np.float32([0, 5 * up, 0])
        assert np.abs(env.points[env.quad_points[quad, :k]] - stored).max() < 1e-4
        assert (env.shade_bytes([quad])[0, :k] == np.floor(polygon.colors.astype(np.float32) * np.float32(255))).all()
        assert int(env.flags[quad]) & ~DERIVED == told.get(polygon.node, 0)
        assert int(env.flags[quad]) & DERIVED == int(before.flags[was]) & DERIVED
    changed = [q for q, w in zip(own.tolist(), kept.tolist()) if env.flags[q] != before.flags[w]]
    assert [int(env.flags[q] ^ before.flags[w]) for q, w in zip(own.tolist(), kept.tolist())
            if q in changed] == [0x8000 | 0x800000, 0x8000 | 0x800000, 0x20]   # quad 0 and its copy
    assert (env.room_floors == before.room_floors).all()
    doors, furniture = after.doors, after.furniture
    assert [d.door_id for d in doors] == [d.door_id for d in level.doors]
    for door, was in zip(doors, level.doors):
        moved = np.float32([5, 0, 0]) if door.door_id == 5 else np.float32(0)
        assert np.abs(door.position - (was.position + moved)).max() < 1e-4
        assert (door.class_name, door.door_flags, door.key_id) == (was.class_name, was.door_flags, was.key_id)
    assert abs((doors[4].rotation[1] - level.doors[4].rotation[1]) % 360 - 90) < 1e-3
    assert [f.class_name for f in furniture] == [f.class_name for f in level.furniture] + ["fu_crate"]
    assert np.abs(furniture[-1].position - (level.furniture[0].position + np.float32([0, 2, 0]))).max() < 1e-4
    gunk = env.object_tags >> 24
    assert ((gunk == 5).sum(), (gunk == 3).sum()) == (((before.object_tags >> 24) == 5).sum() + 9,
                                                      ((before.object_tags >> 24) == 3).sum())


def test_the_generated_level_holds_every_flag_the_master_carries():
    """generated/level (tests/data/environment/README.md): what its round trip covers."""
    generated = read_level(os.path.join(DATA, "generated", "level", "level7_Final.dat"))
    env = generated.environment
    own = env.flags[env.object_tags == -1]
    assert np.bitwise_or.reduce(own) | 0x1 | 0x4 | 0x8 == 0xFFFFFFFF   # all but DoorFrame, StairsUp, StairsDown
    assert ((own & 0x40) != 0).sum() == 23 and len(generated.doors) == 12 and len(generated.furniture) == 4
    assert len(np.unique(env.shades)) > 400


def test_the_generator_writes_the_source_onisplit_built_the_generated_level_from(tmp_path):
    from rebuild_generate import write_source
    write_source(str(tmp_path), 7)
    for name in os.listdir(os.path.join(DATA, "generated", "source")):
        assert (tmp_path / name).read_bytes() == open(os.path.join(DATA, "generated", "source", name), "rb").read()
