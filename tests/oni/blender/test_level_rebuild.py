"""A level written back as the files OniSplit's -create:level rebuilds it from (docs/level.md 11),
through the operator and the command line: an unedited import of OniSplit's own level writes
exactly the files OniSplit rebuilt that level from byte for byte (tests/data/environment/
rebuild), whether imported from the .dat or the loose .oni files; edits arrive as made (checked
in what is written, and in tests/data/environment/edited: OniSplit's rebuild of these same
edits, read back); what OniSplit cannot build is refused, naming it, nothing written."""

import os
import re
import shutil
import xml.etree.ElementTree as ET

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from level_reference import DOOR_FLAG_BITS, GUNK_FLAG_BITS, collada_polygons, flag_bits, numbers
from mathutils import Matrix
from paths import DATA
from placed_edits import raise_keys

from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.level_rebuild.collada import DERIVED

pytestmark = pytest.mark.usefixtures("addon")

ENV = os.path.join(DATA, "environment")
REBUILD = os.path.join(ENV, "rebuild")
MADE = os.path.join(ENV, "made")
CLASS_TAGS = ("DOOR", "OFGA", "M3GM", "OBAN", "TXMP")


@pytest.fixture
def level(sample_level):
    return sample_level


def export(tmp_path):
    out = tmp_path / "out"
    return out, bpy.ops.export_anim.oni_level(directory=str(out), use_selection=False)


def environment():
    return bpy.data.objects["level5 environment"]


def assert_the_files_onisplit_rebuilt_the_level_from(folder, rebuild=REBUILD):
    for name in os.listdir(rebuild):
        assert (folder / name).read_bytes() == open(os.path.join(rebuild, name), "rb").read(), name
    classes = sorted(n for n in os.listdir(os.path.join(ENV, "oni")) if n.startswith(CLASS_TAGS))
    assert sorted(os.listdir(folder / "classes")) == classes
    for name in classes:
        assert (folder / "classes" / name).read_bytes() == open(os.path.join(ENV, "oni", name), "rb").read(), name


def assert_wrote(folder, source):
    """Every file of `source` and of its classes/ written in `folder` byte for byte."""
    for sub in ("", "classes"):
        for name in os.listdir(os.path.join(source, sub)):
            if not os.path.isdir(os.path.join(source, sub, name)):
                assert (folder / sub / name).read_bytes() == open(os.path.join(source, sub, name), "rb").read(), name


def test_an_unedited_level_writes_what_onisplit_rebuilt_it_from(tmp_path, level):
    rooms = bpy.data.objects["level5 rooms"]
    assert not rooms.visible_get() and len(rooms.data.polygons) == 3
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    assert sorted(os.listdir(out)) == ["level5"]
    assert_the_files_onisplit_rebuilt_the_level_from(out / "level5")


def test_the_loose_files_write_the_same(tmp_path):
    folder = tmp_path / "oni"
    shutil.copytree(os.path.join(ENV, "oni"), folder)
    assert bpy.ops.import_anim.oban(filepath=str(folder / "ONLVlevel5.oni")) == {"FINISHED"}
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    assert_the_files_onisplit_rebuilt_the_level_from(out / "level5")


def test_a_generated_level_of_every_flag_writes_what_onisplit_rebuilt_it_from(tmp_path):
    """generated/: OniSplit's level of tools/generate/rebuild_generate.py (every flag the master
    XML carries, triangles, random shades), with the sample's rooms, doors and furniture."""
    folder = tmp_path / "in"
    shutil.copytree(os.path.join(ENV, "generated", "level"), folder)
    assert bpy.ops.import_anim.oban(filepath=str(folder / "level7_Final.dat")) == {"FINISHED"}
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    assert_the_files_onisplit_rebuilt_the_level_from(out / "level7", os.path.join(ENV, "generated", "rebuild"))


def edit(rng):
    """The edits of tests/data/environment/edited: new shades on every corner of the drawn
    environment's own faces (furniture's gunk keeps its own: OniSplit makes it again, and the
    rebuild refuses it re-shaded), flags changed on two of its faces, one deleted, its first
    face copied 5 units up (it follows the quad it was copied from), door 5 moved 5 units along
    x and turned, a crate added (a copy of crate 13, 2 units higher). Returns {quad: (flags,
    (4,) shades)} as the edited faces now hold them, the deleted quad and the copied one."""
    mesh = environment().data
    shades = mesh.color_attributes["oni_shade"].data
    colours, read = rng.integers(0, 256, (len(mesh.loops), 4)).astype(np.float32) / 255, np.empty(4 * len(shades))
    shades.foreach_get("color_srgb", read)
    tags, sizes = np.empty(len(mesh.polygons), np.int32), np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_object_tag"].data.foreach_get("value", tags)
    mesh.polygons.foreach_get("loop_total", sizes)
    gunk = np.flatnonzero(np.repeat(tags != -1, sizes))   # an import's corners are face after face
    colours[gunk] = read.reshape(-1, 4)[gunk]
    shades.foreach_set("color_srgb", colours.ravel())
    flags = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_flags"].data.foreach_get("value", flags)
    flags[0] |= 0x8000 | 0x800000          # NoCharacterCollision, NoDecals
    flags[5] |= 0x20                       # Jello: a bit OniSplit's XML has no name for
    mesh.attributes["oni_flags"].data.foreach_set("value", flags)
    quads, starts, sizes = (np.empty(len(mesh.polygons), np.int32) for _ in range(3))
    mesh.attributes["oni_quad"].data.foreach_get("value", quads)
    mesh.polygons.foreach_get("loop_start", starts)
    mesh.polygons.foreach_get("loop_total", sizes)
    packed = np.rint(colours * 255).astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1, 1 << 24], np.uint32)
    corners = starts[:, None] + np.minimum(np.arange(4), sizes[:, None] - 1)
    edited = {int(q): (int(f) & 0xFFFFFFFF, packed[c]) for q, f, c in zip(quads, flags, corners)}
    deleted, copied = int(quads[7]), int(quads[0])
    del edited[deleted]
    import bmesh  # once bpy is
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.faces.ensure_lookup_table()
    first, doomed = bm.faces[0], bm.faces[7]
    copy = bmesh.ops.duplicate(bm, geom=[first])["geom"]          # a quad added: face 0, 5 units up
    bmesh.ops.translate(bm, vec=(0, 0, 0.5), verts=[v for v in copy if isinstance(v, bmesh.types.BMVert)])
    bmesh.ops.delete(bm, geom=[doomed], context="FACES_ONLY")
    bm.to_mesh(mesh)
    bm.free()
    door = next(o for o in bpy.data.objects if o.get("oni_type") == "DOOR" and o["oni_object_id"] == 5)
    door.location.x += 0.5
    door.rotation_euler.z += np.pi / 2
    crate = next(o for o in bpy.data.objects if o.get("oni_type") == "FURN" and o["oni_object_id"] == 13)
    added = crate.copy()
    added["oni_object_id"] = 17
    added.location.z += 0.2
    crate.users_collection[0].objects.link(added)
    bpy.context.view_layer.update()
    return edited, deleted, copied


def expected_quads(before, edited, deleted, copied):
    """[(quad, flags, (4,) shades, raised)] of the environment's own quads (no object, no ghost)
    as edited, in the file's order; the copy (raised) after its quad."""
    env = before.environment
    own = [q for q in np.flatnonzero((env.object_tags == -1) & ((env.flags & 0xE) == 0)).tolist() if q != deleted]
    own = [(q, raised) for q in own for raised in ((False, True) if q == copied else (False,))]
    return [(q, *edited.get(q, (int(env.flags[q]), env.shades[q])), raised) for q, raised in own]


def test_edits_arrive_as_made(tmp_path, level):
    before = read_level(level)
    edited, deleted, copied = edit(np.random.default_rng(11))
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    folder = out / "level5"
    for name in ("level5_env.dae", "level5_rooms.dae", "level5.xml"):   # what OniSplit rebuilt edited/ from
        assert (folder / name).read_bytes() == open(os.path.join(ENV, "edited", "source", name), "rb").read(), name
    polygons = collada_polygons(str(folder / "level5_env.dae"))
    expected = expected_quads(before, edited, deleted, copied)
    assert len(polygons) == len(expected) == 35
    master = ET.parse(folder / "level5.xml").getroot()
    told = {n.get("Id"): int(n.findtext("GunkFlags")) for n in master.iterfind(".//Model/Import/Node")}
    env = before.environment
    for polygon, (quad, flags, shades, raised) in zip(polygons, expected):
        k = len(polygon.points)
        stored = env.points[env.quad_points[quad, :k]]
        if raised:
            assert np.abs(polygon.points - (stored + [0, 5, 0])).max() < 1e-4
        else:
            assert (polygon.points.astype(np.float32) == stored).all()
        assert told.get(polygon.node, 0) | (int(env.flags[quad]) & DERIVED) == flags
        rgba = (np.asarray(shades[:k], np.uint32)[:, None] >> np.array([16, 8, 0, 24], np.uint32)) & 0xFF
        assert (np.floor(polygon.colors.astype(np.float32) * np.float32(255)) == rgba).all()
    doors = [o for o in ET.parse(folder / "level5_objects.xml").getroot().find("Objects") if o.tag == "DOOR"]
    door = doors[4]
    assert int(door.findtext("OSD/DoorId")) == 5
    moved = before.doors[4]
    assert np.abs(numbers(door.findtext("Header/Position")) - (moved.position + [5.0, 0, 0])).max() < 1e-4
    assert np.abs(numbers(door.findtext("OSD/Center")) - (moved.frame_position + [5.0, 0, 0])).max() < 1e-4
    turned = (numbers(door.findtext("Header/Rotation")) - moved.rotation + 180) % 360 - 180
    assert np.abs(np.abs(turned[1]) - 90).max() < 1e-3 and np.abs(turned[[0, 2]]).max() < 1e-3
    for unmoved, theirs in zip([d for k, d in enumerate(doors) if k != 4],
                               [d for k, d in enumerate(before.doors) if k != 4]):
        assert (numbers(unmoved.findtext("Header/Position")).astype(np.float32) == theirs.position).all()
    furniture = [o for o in ET.parse(folder / "level5_objects.xml").getroot().find("Objects") if o.tag == "FURN"]
    assert [f.findtext("OSD/Class") for f in furniture] == ["fu_crate", "fu_shelf", "fu_blocker", "fu_crate",
                                                            "fu_crate"]
    for name in os.listdir(folder / "classes"):   # door 5 moved and turned: its leaves' motion is its class's
        assert (folder / "classes" / name).read_bytes() == open(os.path.join(ENV, "oni", name), "rb").read(), name
    assert np.abs(numbers(furniture[-1].findtext("Header/Position"))
                  - (before.furniture[0].position + [0, 2.0, 0])).max() < 1e-4


def raise_leaf(door_id, height):
    """Door `door_id`'s first leaf raised `height` (Blender units) at every key; the leaf."""
    leaf = next(o for o in bpy.data.objects if o.get("oni_door_leaf") == 0 and o.parent is not None
                and o.parent.get("oni_door_id") == door_id)
    raise_keys(leaf, height)
    return leaf


def test_an_edited_door_motion_is_written_as_its_class_animation(tmp_path, level):
    """Door 8's leaf (the only door of class dr_offc) raised 1 unit at every key: its class's
    OBAN is written from the leaf's motion as the door stood, every frame M'(f) = O^-1 . T(0, 1,
    0) . O . M(f) (O the leaf's origin) within the export's tolerance; the other classes as read."""
    from oban_import.oni.engine.frames import frame_matrices
    from oban_import.oni.io.oban.read import read_file
    from oban_import.oni.io.oban.record import matrix_from_columns
    leaf = raise_leaf(8, 0.1)
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    classes = out / "level5" / "classes"
    original = read_file(os.path.join(ENV, "oni", "OBANdr_offc_anim.oni"))[0]
    edited = read_file(str(classes / "OBANdr_offc_anim.oni"))[0]
    assert edited.name == original.name and edited.frames == original.frames
    origin = matrix_from_columns(np.array(leaf["oni_origin"], np.float64))
    raise_ = np.eye(4)
    raise_[1, 3] = 1.0
    expected = np.linalg.inv(origin) @ raise_ @ origin @ frame_matrices(original)
    assert np.abs(frame_matrices(edited) - expected).max() < 1e-4 * max(1.0, np.abs(expected).max())
    for name in os.listdir(classes):
        if name != "OBANdr_offc_anim.oni":
            assert (classes / name).read_bytes() == open(os.path.join(ENV, "oni", name), "rb").read(), name


def listed_objects(path) -> list:
    """The object elements of a rebuild's object list XML, in order."""
    return list(ET.parse(path).getroot().find("Objects"))


def test_the_door_flag_booleans_arrive_in_the_rebuild(tmp_path, level):
    """Each door's boolean of one flag (oni_door_<flag>, every flag on some door) toggled, its
    oni_door_flags left as imported: each written door has that flag toggled."""
    names = list(DOOR_FLAG_BITS)
    doors = sorted((o for o in bpy.data.objects if o.get("oni_type") == "DOOR"), key=lambda o: o["oni_object_id"])
    assert len(doors) >= len(names)
    for k, door in enumerate(doors):
        key = "oni_door_" + names[k % len(names)].lower()
        door[key] = not door[key]
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    imported, written = ([o for o in listed_objects(path) if o.tag == "DOOR"] for path in (
        os.path.join(REBUILD, "level5_objects.xml"), out / "level5" / "level5_objects.xml"))
    assert len(written) == len(imported) == len(doors)
    for k, (theirs, ours) in enumerate(zip(imported, written)):
        toggled = flag_bits(theirs.findtext("OSD/Flags"), DOOR_FLAG_BITS) ^ DOOR_FLAG_BITS[names[k % len(names)]]
        assert flag_bits(ours.findtext("OSD/Flags"), DOOR_FLAG_BITS) == toggled, k


def oni_rotation(degrees):
    """Rz(z) . Ry(y) . Rx(x) of degrees x y z (LEVEL.md 1), written out."""
    (cx, cy, cz), (sx, sy, sz) = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return (np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]]) @ np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
            @ np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]]))


# Blender's axes of Oni's at the import's default scale (Oni x, y, z = 10 x, 10 z, -10 y)
BLENDER_OF_ONI = np.array([[0.1, 0, 0, 0], [0, 0, -0.1, 0], [0, 0.1, 0, 0], [0, 0, 0, 1]])


@pytest.mark.parametrize("turn", ["any", "quarter turns back"])
def test_rotations_are_written_in_0_to_360_degrees_as_the_empties_stand(tmp_path, level, turn):
    """Every door and furniture Empty turned (any: to random angles, below 0 among them; quarter
    turns back: -90 degrees about the vertical, once to four times): each written rotation is in
    [0, 360) and turns as the Empty does."""
    empties = sorted((o for o in bpy.data.objects if o.get("oni_type") in ("DOOR", "FURN")),
                     key=lambda o: o["oni_object_id"])
    rng = np.random.default_rng(3)
    for k, obj in enumerate(empties):
        if turn == "any":
            placement = np.eye(4)
            placement[:3, :3] = oni_rotation(rng.uniform(-179, 179, 3))
            placement[:3, 3] = obj["oni_position"]
            obj.matrix_world = Matrix((BLENDER_OF_ONI @ placement @ np.linalg.inv(BLENDER_OF_ONI)).tolist())
        else:
            obj.rotation_euler.z -= np.pi / 2 * (k % 4 + 1)
    bpy.context.view_layer.update()
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    written = [numbers(o.findtext("Header/Rotation")) for o in listed_objects(out / "level5" / "level5_objects.xml")]
    assert len(written) == len(empties)
    for obj, rotation in zip(empties, written):
        assert ((rotation >= 0) & (rotation < 360)).all(), (obj.name, rotation)
        stands = np.linalg.inv(BLENDER_OF_ONI) @ np.array(obj.matrix_world) @ BLENDER_OF_ONI
        assert np.abs(oni_rotation(rotation) - stands[:3, :3]).max() < 1e-5, obj.name


def test_stairs_up_and_down_quads_are_ghosts_written_with_the_rooms(tmp_path, level):
    """A face made StairsUp and another StairsDown (room separators, as Ghost): they leave the
    environment's Collada for the rooms', after the floors."""
    obj = environment()
    mesh = obj.data
    flags, tags, sizes = (np.empty(len(mesh.polygons), np.int32) for _ in range(3))
    mesh.attributes["oni_flags"].data.foreach_get("value", flags)
    mesh.attributes["oni_object_tag"].data.foreach_get("value", tags)
    mesh.polygons.foreach_get("loop_total", sizes)
    faces = np.flatnonzero((tags == -1) & (sizes == 4))[:2]
    flags[faces] |= [GUNK_FLAG_BITS["StairsUp"], GUNK_FLAG_BITS["StairsDown"]]
    mesh.attributes["oni_flags"].data.foreach_set("value", flags)
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    stairs = [oni_points([mesh.vertices[v].co for v in mesh.polygons[face].vertices]) for face in faces.tolist()]
    environment_polygons, room_polygons = (collada_polygons(str(out / "level5" / f"level5_{part}.dae"))
                                           for part in ("env", "rooms"))
    imported_environment, imported_rooms = (collada_polygons(os.path.join(REBUILD, f"level5_{part}.dae"))
                                            for part in ("env", "rooms"))
    assert len(environment_polygons) == len(imported_environment) - 2
    assert len(room_polygons) == len(imported_rooms) + 2
    floors = len(bpy.data.objects["level5 rooms"].data.polygons)
    for points in stairs:
        assert not [p for p in environment_polygons if len(p.points) == 4 and np.abs(p.points - points).max() < 1e-3]
        assert len([p for p in room_polygons[floors:] if np.abs(p.points - points).max() < 1e-3]) == 1


@pytest.mark.parametrize("kind, name, fault", [
    ("CHAR", "Character", None), ("WEAP", "Weapon", None), ("PWRU", "PowerUp", None), ("TRGV", "Trigger_Volume", None),
    ("NEUT", "Neutral", "unsigned"), ("PATR", "Patrol_Path", "unsigned"),
    ("CONS", "Console", "class"), ("TURR", "Turret", "class"), ("TRIG", "Trigger", "class"),
])
def test_objects_of_every_other_type_are_written_from_their_data(tmp_path, level, kind, name, fault):
    """A list of OniSplit's (tests/data/objects_xml/oni) imported beside the level and counted as
    its: each object written after the level's, in id order, as the golden list OniSplit turns
    back into that list byte for byte; what -create:level does not keep said in a warning."""
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    folder = tmp_path / "lists"
    folder.mkdir()
    shutil.copy(os.path.join(DATA, "objects_xml", "oni", f"BINACJBO{name}.oni"), folder)
    assert bpy.ops.import_anim.oban(filepath=str(folder / f"BINACJBO{name}.oni")) == {"FINISHED"}
    added = sorted((o for o in bpy.data.objects if o.get("oni_type") == kind), key=lambda o: o["oni_object_id"])
    assert added and all("oni_osd" in o for o in added)
    for obj in added:
        obj["oni_level_file"], obj["oni_object_id"] = level, obj["oni_object_id"] + 100
    report = export_level_rebuilds(bpy.context, [environment()], str(tmp_path / "out"))
    if fault == "class":   # the sample holds none of the classes these lists name
        assert f"{kind} class '" in report.errors[0] and "is not one of the level's" in report.errors[0]
        assert not (tmp_path / "out").exists()
        return
    golden = open(os.path.join(DATA, "objects_xml", "golden", f"BINACJBO{name}.xml"), encoding="utf-8").read()
    elements = golden[golden.index("<Objects>") + 9:golden.index("</Objects>")]
    if fault == "unsigned":   # what -create:level reads unsigned: -1 written as 65535 (checked: the next test)
        elements = re.sub("<(NeutralId|Anim|OtherAnim|PatrolId|ReturnToNearest)>-([0-9]+)<",
                          lambda m: f"<{m[1]}>{65536 - int(m[2])}<", elements)
        fault = None
    assert not report.errors
    written = (tmp_path / "out" / "level5" / "level5_objects.xml").read_text()
    assert written.index("<FURN>") < written.index(elements) and written.endswith(elements + "</Objects></Oni>\n")
    renumbered = f"{level}: OniSplit numbers the objects -create:level builds 1 to {16 + len(added)} in id order: " \
                 f"id {added[0]['oni_object_id']} becomes 17 and {len(added) - 1} more"
    assert renumbered in report.warnings
    assert [fault in w for w in report.warnings if w != renumbered] == ([True] if fault else [])


def test_flags_particles_and_sounds_replace_onisplits_lists(tmp_path, level):
    """-create:level does not keep a flag's prefix, a particle's flags or a sphere sound whole:
    their lists are written whole too, with the ids it gives (17... here), to replace its own
    after it ran; whole/level, OniSplit's rebuild of whole/source so replaced, holds each
    object's data as read."""
    added = []
    for kind, name in (("FLAG", "Flag"), ("PART", "Particle"), ("SNDG", "Sound")):
        (tmp_path / kind).mkdir()
        shutil.copy(os.path.join(DATA, "objects_xml", "oni", f"BINACJBO{name}.oni"), tmp_path / kind)
        assert bpy.ops.import_anim.oban(filepath=str(tmp_path / kind / f"BINACJBO{name}.oni")) == {"FINISHED"}
    added = sorted((o for o in bpy.data.objects if o.get("oni_type") in ("FLAG", "PART", "SNDG")),
                   key=lambda o: (o["oni_type"], o["oni_object_id"]))
    expected = {}
    for k, obj in enumerate(added):
        obj["oni_level_file"], obj["oni_object_id"] = level, 1017 + k
        expected[17 + k] = (obj["oni_type"], bytes.fromhex(obj["oni_osd"]))
    from oban_import.oni.export.level.rebuild import export_level_rebuilds, level_objects
    report = export_level_rebuilds(bpy.context, level_objects(bpy.context.scene.objects), str(tmp_path / "out"))
    assert not report.errors and report.warnings == [
        f"{level}: OniSplit numbers the objects -create:level builds 1 to 31 in id order: id 1017 becomes 17 and 14 "
        "more"]
    assert_wrote(tmp_path / "out" / "level5", os.path.join(ENV, "whole", "source"))
    rebuilt = read_level(os.path.join(ENV, "whole", "level", "level5_Final.dat"))
    found = {int(i): (str(t), bytes(p)) for objects in rebuilt.object_lists
             for t, i, p in zip(objects.types, objects.ids, objects.payloads) if int(i) >= 17}
    assert found == expected


def test_negative_values_are_written_as_create_level_reads_them(tmp_path):
    """tests/data/classes_more/unsigned: -create:level reads 16-bit ids, counts and times as
    ints and writes them unsigned: written so (-1 as 65535) they come back as the same bytes;
    it reads event targets signed and writes them unsigned: given as 0, and the console and
    trigger lists written whole to replace its own. Every object's data comes back as read."""
    folder = tmp_path / "in"
    shutil.copytree(os.path.join(DATA, "classes_more", "level"), folder)
    path = str(folder / "level5_Final.dat")
    assert bpy.ops.import_anim.oban(filepath=path) == {"FINISHED"}
    lists = {"NEUT": "Neutral", "PATR": "Patrol_Path", "CONS": "Console", "TURR": "Turret", "TRIG": "Trigger"}
    for kind, name in lists.items():
        (tmp_path / kind).mkdir()
        shutil.copy(os.path.join(DATA, "objects_xml", "oni", f"BINACJBO{name}.oni"), tmp_path / kind)
        assert bpy.ops.import_anim.oban(filepath=str(tmp_path / kind / f"BINACJBO{name}.oni")) == {"FINISHED"}
    renamed = {"CONS": b"cn_plain", "TURR": b"tu_gun", "TRIG": b"tr_laser"}
    added = sorted((o for o in bpy.data.objects if o.get("oni_type") in lists and o.get("oni_level_file") != path),
                   key=lambda o: (o["oni_type"], o["oni_object_id"]))
    expected = []
    for obj in added:
        payload = bytearray(bytes.fromhex(obj["oni_osd"]))
        payload[:63] = renamed[obj["oni_type"]].ljust(63, b"\0") if obj["oni_type"] in renamed else payload[:63]
        obj["oni_osd"], obj["oni_level_file"] = payload.hex(), path
        obj["oni_object_id"] = 1017 + len(expected)
        expected.append((obj["oni_type"], bytes(payload)))
    from oban_import.oni.export.level.rebuild import export_level_rebuilds, level_objects
    report = export_level_rebuilds(bpy.context, level_objects(bpy.context.scene.objects), str(tmp_path / "out"))
    assert not report.errors
    written = (tmp_path / "out" / "level5" / "level5_objects.xml").read_text()
    assert "<PatrolId>65535</PatrolId>" in written and 'TargetId="-' not in written
    assert_wrote(tmp_path / "out" / "level5", os.path.join(DATA, "classes_more", "unsigned", "source"))
    rebuilt = read_level(os.path.join(DATA, "classes_more", "unsigned", "level", "level5_Final.dat"))
    found = {int(i): (str(t), bytes(p)) for objects in rebuilt.object_lists
             for t, i, p in zip(objects.types, objects.ids, objects.payloads)}
    assert [found[17 + k] for k in range(len(expected))] == expected   # OniSplit's ids: 17 on, in id order


def test_consoles_turrets_and_triggers_come_with_their_classes(tmp_path):
    """tests/data/classes_more: the sample level with console, turret and trigger classes. The
    objects of OniSplit's lists, named after those classes, are written and their classes (and
    a trigger's emitter) carried as OniSplit wrote them."""
    folder = tmp_path / "in"
    shutil.copytree(os.path.join(DATA, "classes_more", "level"), folder)
    path = str(folder / "level5_Final.dat")
    assert bpy.ops.import_anim.oban(filepath=path) == {"FINISHED"}
    renamed = {"CONS": b"cn_plain", "TURR": b"tu_gun", "TRIG": b"tr_laser"}
    for kind, name in (("CONS", "Console"), ("TURR", "Turret"), ("TRIG", "Trigger")):
        lists = tmp_path / kind
        lists.mkdir()
        shutil.copy(os.path.join(DATA, "objects_xml", "oni", f"BINACJBO{name}.oni"), lists)
        assert bpy.ops.import_anim.oban(filepath=str(lists / f"BINACJBO{name}.oni")) == {"FINISHED"}
    for obj in [o for o in bpy.data.objects if o.get("oni_type") in renamed]:
        payload = bytearray(bytes.fromhex(obj["oni_osd"]))
        payload[:63] = renamed[obj["oni_type"]].ljust(63, b"\0")
        obj["oni_osd"], obj["oni_level_file"] = payload.hex(), path
        obj["oni_object_id"] += 100 * (1 + list(renamed).index(obj["oni_type"]))
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    report = export_level_rebuilds(bpy.context, [bpy.data.objects["level5 environment"]], str(tmp_path / "out"))
    assert not report.errors
    written = ET.parse(tmp_path / "out" / "level5" / "level5_objects.xml").getroot()
    classes = {o.tag: o.findtext("OSD/Class") for o in written.find("Objects") if o.tag in renamed}
    assert classes == {kind: name.decode() for kind, name in renamed.items()}
    for name in os.listdir(os.path.join(DATA, "classes_more", "oni")):
        assert (tmp_path / "out" / "level5" / "classes" / name).read_bytes() == \
            open(os.path.join(DATA, "classes_more", "oni", name), "rb").read(), name


def five_corners():
    import bmesh  # once bpy is
    bm = bmesh.new()
    mesh = environment().data
    bm.from_mesh(mesh)
    bm.faces.ensure_lookup_table()
    face = bm.faces[3]
    bmesh.ops.subdivide_edges(bm, edges=[face.edges[0]], cuts=1)
    bm.to_mesh(mesh)
    bm.free()


def untextured():
    material = environment().data.materials[0]
    material["oni_texture_name"] = ""
    material.node_tree.nodes["texture"].image = None


def no_rooms():
    bpy.data.objects.remove(bpy.data.objects["level5 rooms"])


def huge_id():
    next(o for o in bpy.data.objects if o.get("oni_type") == "FURN")["oni_object_id"] = 0x1000000


def unknown_class():
    next(o for o in bpy.data.objects if o.get("oni_type") == "DOOR")["oni_door_class"] = "dr_nowhere"


def two_swings():
    raise_leaf(1, 0.1)
    raise_leaf(2, 0.2)


@pytest.mark.parametrize("change, message", [
    (five_corners, "object 'level5 environment' face 3: 5 corners (a quad has at most 4: triangulate or split it)"),
    (untextured, "its material names no texture and shows no image (OniSplit could not find it)"),
    (no_rooms, "it has no rooms"),
    (huge_id, "property 'oni_object_id' is 16777216, not 0 to 16777215"),
    (unknown_class, "door class 'dr_nowhere' is not one of the level's"),
    (two_swings, "moves otherwise than 'door_1', another leaf of door class animation 'dr_swing_anim'"),
])
def test_what_onisplit_cannot_build_is_refused_and_nothing_is_written(tmp_path, level, change, message):
    change()
    with pytest.raises(RuntimeError) as raised:
        export(tmp_path)
    assert message in str(raised.value) and "cannot be rebuilt" in str(raised.value)
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


def test_a_level_changed_since_or_gone_is_refused(tmp_path, level):
    data = bytearray(open(level, "rb").read())
    at = read_level(level).environment.quads_at[1] + 0x30
    data[at] ^= 0x01                                         # the first quad's flags, changed behind the scene
    open(level, "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="its quads are not the ones imported: the file has changed since"):
        export(tmp_path)
    os.remove(level)
    with pytest.raises(RuntimeError, match="level5_Final.dat: cannot be read: No such file or directory"):
        export(tmp_path)
    assert not (tmp_path / "out").exists()


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_the_rebuild_source(tmp_path, level, command):
    blend = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "cli"
    done = run(command, "export", blend, "-o", out, "--format", "level")
    assert done.returncode == 0, done.stderr
    assert "level5.xml" in done.stdout
    assert_the_files_onisplit_rebuilt_the_level_from(out / "level5")
    wrong = run(command, "export", tmp_path / "nowhere.blend", "-o", out, "--format", "level")
    assert wrong.returncode == 2 and "nowhere.blend" in wrong.stderr
    listed = run(command, level, "--list").stdout.splitlines()
    header = next(line for line in listed if " rooms " in line)
    row = listed[listed.index(header) + 1]
    assert row[header.index(" rooms ") + 1:].split()[0] == "3/3"   # every room's floor found


def profiles():
    """Furniture 13 and 14 made combat profiles (CMBT), 15 a melee profile (MELE), each with
    data of its own: {id: (type, data)}."""
    furniture = sorted((o for o in bpy.data.objects if o.get("oni_type") == "FURN"), key=lambda o: o["oni_object_id"])
    rng, made = np.random.default_rng(4), {}
    for obj, kind, size in ((furniture[0], "CMBT", 144), (furniture[1], "CMBT", 144), (furniture[2], "MELE", 196)):
        data = (b"profile_%d" % obj["oni_object_id"]).ljust(64, b"\0") + \
            rng.integers(0, 256, size - 64, dtype=np.uint8).tobytes()
        obj["oni_type"], obj["oni_osd"] = kind, data.hex()
        made[obj["oni_object_id"]] = (kind, data, tuple(obj["oni_position"]))
    return made


def test_combat_and_melee_profiles_come_as_lists_of_their_own(tmp_path, level):
    """-create:level takes no CMBT or MELE: they are written whole as BINACJBOCombat and
    BINACJBOMelee Profile .oni among the classes, which -import:nosep packs as they are;
    profiles/level (OniSplit's rebuild of profiles/source) holds them, ids and data."""
    from oban_import.oni.export.level.rebuild import export_level_rebuilds, level_objects
    made = profiles()
    report = export_level_rebuilds(bpy.context, level_objects(bpy.context.scene.objects), str(tmp_path / "out"))
    assert not report.errors
    assert report.warnings == [f"{level}: OniSplit numbers the objects -create:level builds 1 to 13 in id order: id "
                               "16 becomes 13"]
    assert_wrote(tmp_path / "out" / "level5", os.path.join(ENV, "profiles", "source"))
    rebuilt = read_level(os.path.join(ENV, "profiles", "level", "level5_Final.dat"))
    found = {int(i): (str(t), bytes(p), tuple(position))
             for objects in rebuilt.object_lists for t, i, p, position in
             zip(objects.types, objects.ids, objects.payloads, objects.positions.astype(np.float64).tolist())
             if t in ("CMBT", "MELE")}
    assert found == made


def test_objects_onisplit_cannot_take_are_left_out_with_a_warning(tmp_path, level):
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    furniture = [o for o in bpy.data.objects if o.get("oni_type") == "FURN"]
    for obj in furniture[:3]:
        obj["oni_type"] = "CMBT"
    furniture[3]["oni_type"] = "CHAR"   # a type it takes, but without the data a character is imported with
    report = export_level_rebuilds(bpy.context, [environment()], str(tmp_path / "out"))
    assert not report.errors
    assert report.warnings == [f"{level}: 3 CMBT objects left out: they hold no oni_osd (the data they were "
                               f"imported with)",
                               f"{level}: 1 CHAR objects left out: they hold no oni_osd (the data they were "
                               f"imported with)"]
    objects = ET.parse(tmp_path / "out" / "level5" / "level5_objects.xml").getroot().find("Objects")
    assert [o.tag for o in objects] == ["DOOR"] * 12


# --- a level made in Blender, and new textures -------------------------------------------------

def oni_points(blender_points):
    """The default export's Oni points of Blender ones: scale 0.1, forward -Z, up Y (Oni x, y, z =
    10 x, 10 z, -10 y), computed apart from the add-on."""
    p = np.asarray(blender_points, np.float64)
    return np.column_stack([p[:, 0], p[:, 2], -p[:, 1]]) * 10


def tga_pixels(data):
    """(h, w, 4) uint8 RGBA, bottom row first, of an uncompressed 32-bit TGA (rows bottom first)."""
    width, height = int.from_bytes(data[12:14], "little"), int.from_bytes(data[14:16], "little")
    assert data[2] == 2 and data[16] == 32 and data[17] & 0x20 == 0
    return np.frombuffer(data, np.uint8, width * height * 4, 18 + data[0]).reshape(height, width, 4)[:, :, [2, 1, 0, 3]]


def test_a_level_made_in_blender_is_written_from_the_scene_alone(tmp_path):
    """made/: the export writes what OniSplit built made/level from, and that level holds the
    scene: every face's points, shades and flags, each image's pixels as a TXMP of its name."""
    import made_level

    from oban_import.oni.export.level.rebuild import export_level_rebuilds, level_objects
    from oban_import.ui.options import LevelRebuildSettings
    made_level.build()
    out = tmp_path / "out"
    assert bpy.ops.export_anim.oni_level(directory=str(out), use_selection=False) == {"FINISHED"}
    source = os.path.join(MADE, "source")
    assert sorted(os.listdir(out / "made9")) == sorted(os.listdir(source) + ["classes"])
    for name in os.listdir(source):
        assert (out / "made9" / name).read_bytes() == open(os.path.join(source, name), "rb").read(), name
    report = export_level_rebuilds(bpy.context, level_objects(bpy.context.scene.objects), str(tmp_path / "again"),
                                   LevelRebuildSettings())
    assert report.warnings == ["new level 'made9': texture 'odd' is 48 x 40: OniSplit scales it to 32 x 32"]

    env = read_level(os.path.join(MADE, "level", "level9_Final.dat")).environment
    floor = made_level.FLOOR + made_level.TRIANGLE
    faces = [[floor[k] for k in f] for f in made_level.FLOOR_FACES + [(6, 7, 8)]] + \
        [[made_level.WALLS[k] for k in f] for f in made_level.WALL_FACES]
    assert len(env.flags) == len(faces)
    for q, corners in enumerate(faces):
        np.testing.assert_allclose(env.points[env.quad_points[q, :len(corners)]], oni_points(corners), atol=1e-5)
    shades = made_level.corner_shades().astype(np.uint32)
    packed = shades[:, 3] << 24 | shades[:, 0] << 16 | shades[:, 1] << 8 | shades[:, 2]
    assert env.shades[0].tolist() == packed[:4].tolist() and env.shades[2, :3].tolist() == packed[8:].tolist()
    assert (env.shades[3:] == 0xFFFFFFFF).all()                     # the walls have no shade attribute: white
    assert ((env.flags & 0x200) != 0).tolist() == [False] * 4 + [True, False, False]
    assert [env.texture_names[t] for t in env.quad_textures] == ["made_floor"] * 3 + ["made_glass"] * 2 + \
        ["odd", "made_glass"]
    textures = dict(zip(env.texture_names, env.textures))
    for name, image in (("made_floor", "made floor.png"), ("made_glass", "made_glass")):
        np.testing.assert_array_equal(textures[name].rgba8, made_level.image_pixels(image)[::-1])
    assert (textures["odd"].width, textures["odd"].height) == (32, 32)


def test_a_level_made_in_blender_takes_the_classes_of_imported_levels(tmp_path, level):
    """made/door: a door and a piece of furniture of the imported sample copied into the made
    level (its name in oni_environment, no level file): the imported level's classes come with
    them, and OniSplit's level9 of what was written holds them with their gunk."""
    import made_level

    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    from oban_import.ui.options import LevelRebuildSettings
    made_level.build()
    for kind, new_id in (("DOOR", 1), ("FURN", 2)):
        copy = next(o for o in bpy.data.objects if o.get("oni_type") == kind).copy()
        bpy.context.scene.collection.objects.link(copy)
        del copy["oni_level_file"]
        copy["oni_environment"], copy["oni_object_id"] = "made9", new_id
    made = [o for o in bpy.data.objects if o.get("oni_environment") == "made9" and o.type == "MESH"]
    report = export_level_rebuilds(bpy.context, made, str(tmp_path / "out"), LevelRebuildSettings())
    assert not report.errors
    source = os.path.join(MADE, "door", "source")
    for name in os.listdir(source):
        assert (tmp_path / "out" / "made9" / name).read_bytes() == open(os.path.join(source, name), "rb").read(), name
    classes = sorted(n for n in os.listdir(os.path.join(ENV, "oni")) if n.startswith(CLASS_TAGS))
    assert sorted(os.listdir(tmp_path / "out" / "made9" / "classes")) == classes
    rebuilt = read_level(os.path.join(MADE, "door", "level", "level9_Final.dat"))
    assert [(d.id, d.class_name) for o in rebuilt.object_lists for d in o.doors] == [(1, "dr_swing")]
    assert [(f.id, f.class_name) for o in rebuilt.object_lists for f in o.furniture] == [(2, "fu_crate")]
    tags = rebuilt.environment.object_tags
    assert ((tags >> 24) == -1).sum() == 7 and ((tags >> 24) == 3).any() and ((tags >> 24) == 5).any()


def test_a_new_texture_comes_as_a_tga_beside_the_colladas(tmp_path, level):
    """A face given a material of an image the level does not have: its pixels as
    <name>.tga, which the environment Collada's image names (OniSplit makes the TXMP of it)."""
    pixels = np.random.default_rng(5).integers(0, 256, (8, 16, 4)).astype(np.uint8)
    image = bpy.data.images.new("new paint.png", 16, 8, alpha=True)
    image.pixels.foreach_set((pixels.astype(np.float32) / 255).ravel())
    material = bpy.data.materials.new("paint")
    if material.node_tree is None:
        material.use_nodes = True
    material.node_tree.nodes.new("ShaderNodeTexImage").image = image
    mesh = environment().data
    mesh.materials.append(material)
    mesh.polygons[4].material_index = len(mesh.materials) - 1
    out, result = export(tmp_path)
    assert result == {"FINISHED"}
    np.testing.assert_array_equal(tga_pixels((out / "level5" / "new_paint.tga").read_bytes()), pixels)
    text = (out / "level5" / "level5_env.dae").read_text()
    assert "<init_from>new_paint.tga</init_from>" in text and 'name="new_paint"' in text
    assert sorted(os.listdir(out / "level5" / "classes")) == \
        sorted(n for n in os.listdir(os.path.join(ENV, "oni")) if n.startswith(CLASS_TAGS))


def same_name_twice():
    for image in ("wall.png", "wall.tga"):
        material = bpy.data.materials.new(image)
        if material.node_tree is None:
            material.use_nodes = True
        material.node_tree.nodes.new("ShaderNodeTexImage").image = bpy.data.images.new(image, 4, 4)
        bpy.data.objects["walls"].data.materials.append(material)
    bpy.data.objects["walls"].data.polygons[0].material_index = 2
    bpy.data.objects["walls"].data.polygons[1].material_index = 3


def missing_file():
    image = bpy.data.images["odd"]
    image.unpack(method="REMOVE")
    image.filepath = "//nowhere/odd.png"
    image.reload()


def bad_name():
    for obj in bpy.data.objects:
        for key in ("oni_environment", "oni_rooms"):
            if key in obj:
                obj[key] = "made 9/x"


@pytest.mark.parametrize("change, message", [
    (same_name_twice, "texture 'wall': images 'wall.png', 'wall.tga' would all make it: rename all but one"),
    (missing_file, "texture 'odd': image 'odd' has no pixels"),
    (bad_name, "new level 'made 9/x': cannot be written: a level's name (oni_environment) is 1 to 60 letters"),
])
def test_what_a_level_made_in_blender_cannot_be_is_refused(tmp_path, change, message):
    import made_level
    made_level.build()
    change()
    with pytest.raises(RuntimeError) as raised:
        export(tmp_path)
    assert message in str(raised.value)
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_a_level_made_in_blender(tmp_path, command):
    import made_level
    made_level.build()
    blend = tmp_path / "made.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = run(command, "export", blend, "-o", tmp_path / "cli", "--format", "level")
    assert done.returncode == 0, done.stderr
    assert "texture 'odd' is 48 x 40: OniSplit scales it to 32 x 32" in done.stdout + done.stderr
    for name in os.listdir(os.path.join(MADE, "source")):
        assert (tmp_path / "cli" / "made9" / name).read_bytes() == \
            open(os.path.join(MADE, "source", name), "rb").read(), name
    empty = tmp_path / "empty.blend"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(empty))
    nothing = run(command, "export", empty, "-o", tmp_path / "none", "--format", "level")
    assert nothing.returncode == 1 and "has no environment imported by this add-on or made in Blender" in \
        nothing.stderr
