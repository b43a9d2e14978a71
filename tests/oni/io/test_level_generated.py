"""The level readers (docs/level.md) on generated files of every case (tools/generate/level_generate.py,
written from the spec's byte layouts): what the generator wrote is what is read, from a level
.dat + .raw and from loose .oni files: triangles, every quad flag bit, object tags of every
type, shades, textures found, missing and absent; single, double and mirrored doors with and
without events (every event type), every door flag, door textures named in another case;
furniture of one and two elements; every known object type, empty lists, unknown types;
a furniture list without an environment; an environment without a level instance; an object
tag listed twice in the object quad map (ONOA).
"""

import os

import level_generate as gen
import numpy as np
import pytest

from oban_import.oni.io.level.read import read_level


@pytest.fixture(scope="module")
def standard():
    return gen.standard_level(np.random.default_rng(7))


@pytest.fixture(scope="module", params=["level", "loose"])
def read(request, standard, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    path = gen.write_level(standard, folder) if request.param == "level" else gen.write_loose(standard, folder)
    return read_level(path)


def expected_objects(entries):
    """The entries of known types, as the reader lists them."""
    return [e for e in entries if e.type in gen.TYPES.values()]


def test_the_environment_is_what_was_written(standard, read):
    env, written = read.environment, standard.environment
    assert env.name == "gen" and read.name == "gen" and read.sky == "night"
    for ours, theirs in ((env.points, written.points), (env.texture_coordinates, written.uvs),
                         (env.quad_points, written.quad_points), (env.quad_uvs, written.quad_uvs),
                         (env.shades, written.shades), (env.flags, written.flags), (env.object_tags, written.tags),
                         (env.quad_textures, written.quad_textures), (env.planes, written.planes),
                         (env.collision_planes, written.collision_planes),
                         (env.collision_boxes, written.collision_boxes)):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype and (ours == theirs).all()
    assert (env.bounding_box == np.array(written.bounding_box, np.float32)).all()
    assert np.bitwise_or.reduce(env.flags) == 0xFFFFFFFF            # every bit on some quad
    triangles = (env.flags & 0x40) != 0
    assert triangles.any() and (env.corner_counts() == np.where(triangles, 3, 4)).all()
    assert set(env.object_types.tolist()) == {-1, 3, 5, 7, 13, 14, 15}
    tagged = env.object_tags != -1
    assert (env.object_ids[tagged] == written.tags[tagged] & 0xFFFFFF).all() and (env.object_ids[~tagged] == -1).all()
    rgba = np.stack([written.shades >> 16 & 255, written.shades >> 8 & 255, written.shades & 255,
                     written.shades >> 24], axis=-1)
    assert (env.shade_bytes() == rgba).all()
    for field, k in (("box", 0), ("flags", 1), ("floor", 2), ("height", 3)):
        assert (env.rooms[field] == np.array([room[k] for room in written.rooms]).astype(env.rooms[field].dtype)).all()
    assert env.door_frames["quad"].tolist() == [f[0] for f in written.door_frames]
    assert (env.door_frames["box"] == np.array([f[1] for f in written.door_frames], np.float32)).all()
    assert (env.door_frames["position"] == np.array([f[2] for f in written.door_frames], np.float32)).all()
    for field, k in (("facing", 3), ("width", 4), ("height", 5)):
        assert (env.door_frames[field] == np.array([f[k] for f in written.door_frames], np.float32)).all()
    assert not env.zero_area.any() and read.warnings == []


def test_textures_are_found_and_named(standard, read):
    env = read.environment
    assert env.texture_names == [n or "" for n in standard.environment.textures]
    for name, texture in zip(env.texture_names, env.textures):
        if not name:
            assert texture is None
            continue
        written = standard.textures[name]
        assert (texture.name, texture.width, texture.height, texture.format) == (name, written.width, written.height,
                                                                                 written.format)
        assert texture.raw == written.raw


def test_a_missing_texture_is_named_and_warned(tmp_path):
    level = gen.standard_level(np.random.default_rng(3), missing_texture=True)
    for path in (gen.write_level(level, tmp_path / "dat"), gen.write_loose(level, tmp_path / "loose")):
        read = read_level(path)
        k = read.environment.texture_names.index("nowhere")
        assert read.environment.textures[k] is None
        (warning,) = read.warnings
        assert warning.startswith("TXMPnowhere not found (TXMPnowhere.oni beside ") and \
            warning.endswith("does not hold it): imported without it")


def test_the_lists_are_what_was_written(standard, read):
    lists = {o.name: o for o in read.object_lists}
    assert sorted(lists) == sorted(standard.lists)
    for name, entries in standard.lists.items():
        objects, kept = lists[name], expected_objects(entries)
        assert objects.types.tolist() == [e.type for e in kept]
        assert objects.ids.tolist() == [e.id for e in kept] and objects.flags.tolist() == [e.flags for e in kept]
        assert (objects.positions == np.array([e.position for e in kept], np.float32).reshape(-1, 3)).all()
        assert (objects.rotations == np.array([e.rotation for e in kept], np.float32).reshape(-1, 3)).all()
        assert [d.id for d in objects.doors] == [e.id for e in kept if e.type == "DOOR"]
        assert [f.id for f in objects.furniture] == [e.id for e in kept if e.type == "FURN"]
    assert any(len(o.ids) == 0 for o in read.object_lists)


def test_doors_are_what_was_written(standard, read):
    events = [(k, "script_%d" % k if k == 1 else None if k == 0 else 100 + k) for k in range(12)]
    assert len(read.doors) == 4
    written = [(1, "dr_single", 1, 0, 0, (1, 2, 3), 900.0, "", "", []),
               (2, "dr_double", 2, 5, 0x180, (4, 5, 6), 400.0, "DOORTEX", "wall", events),
               (3, "dr_single", 3, 1, 0x1E15, (7, 8, 9), 100.0, "doortex", "", events[1:3]),
               (4, "dr_double", 4, 2, 0x80, (0, 0, 0), 900.0, "", "DOORTEX", [(0, None)])]
    entries = standard.lists["Door"]
    for door, entry, (object_id, class_name, door_id, key_id, flags, center, radius, t1, t2, door_events) in zip(
            read.doors, entries, written, strict=True):
        assert (door.id, door.flags) == (object_id, entry.flags) == (entry.id, entry.flags)
        assert (door.position == np.array(entry.position, np.float32)).all()
        assert (door.rotation == np.array(entry.rotation, np.float32)).all()
        assert (door.class_name, door.door_id, door.key_id, door.door_flags) == (class_name, door_id, key_id, flags)
        assert (door.frame_position == np.array(center, np.float32)).all() and door.activation_radius_squared == radius
        assert door.texture_names == (t1, t2)
        assert [t and t.name for t in door.textures] == ["DOORTEX" if n.upper() == "DOORTEX" else
                                                          n or None for n in (t1, t2)]   # found upper-cased
        assert [(e.type, e.script if e.type == 1 else e.target if e.type else None) for e in door.events] == \
            door_events
        assert [e.name for e in door.events][:12] == [["None", "Script", "ActivateTurret", "DeactivateTurret",
                                                       "ActivateConsole", "DeactivateConsole", "ActivateAlarm",
                                                       "DeactivateAlarm", "ActivateTrigger", "DeactivateTrigger",
                                                       "LockDoor", "UnlockDoor"][t] for t, _ in door_events]
        assert door.leaf_count == (2 if flags & 0x80 else 1)


def test_leaves_are_the_first_setups_of_their_door_ids(standard, read):
    setups = standard.setups
    for door in read.doors:
        wanted = [door.door_id, door.door_id | 0x1000][:door.leaf_count]
        found = [next(k for k, o in enumerate(setups) if o.door_id == d and o.flags) for d in wanted]
        assert door.setups == tuple(found) + (None,) * (2 - len(found))


def test_classes_are_what_was_written(standard, read):
    assert sorted(read.door_classes) == sorted(standard.door_classes)
    for name, written in standard.door_classes.items():
        door_class = read.door_classes[name]
        assert door_class.geometry_names == [g or "" for g in written.geometries]
        assert [g and g.name for g in door_class.geometries] == list(written.geometries)
        assert door_class.animation_name == written.animation
        assert door_class.animation.keys.tobytes() == standard.animations[written.animation].keys.tobytes()
        assert (door_class.sound_attenuation, door_class.sounds_allowed, door_class.sound_type,
                door_class.sound_radius, door_class.open_sound, door_class.close_sound) == \
            (written.sound_attenuation, written.sounds_allowed, written.sound_type, written.sound_radius,
             written.open_sound, written.close_sound)
    geometries = dict(read.furniture_classes)
    for door_class in read.door_classes.values():
        geometries.update({g.name: g for g in door_class.geometries if g})
    assert sorted(geometries) == sorted(standard.geometries)
    for name, elements in standard.geometries.items():
        assert [(e.flags, e.mesh_name) for e in geometries[name].elements] == elements
        for element in geometries[name].elements:
            mesh = standard.meshes[element.mesh_name]
            assert (element.mesh.points == mesh.points).all() and element.mesh.texture_name == mesh.texture
    assert [(f.class_name, f.particle, f.geometry.name) for f in read.furniture] == [
        ("fu_box", "", "fu_box"), ("fu_shelf", "fx_smoke", "fu_shelf")]


def test_object_quads_are_what_was_written(standard, read):
    assert {k: v.tolist() for k, v in read.object_quads.items()} == {t: list(q) for t, q in standard.object_quads}


def test_a_furniture_list_without_an_environment(tmp_path):
    level = gen.standard_level(np.random.default_rng(5), environment=False)
    level.lists = {"Furniture": level.lists["Furniture"]}
    level.setups = None
    for path in (gen.write_level(level, tmp_path / "dat"), gen.write_loose(level, tmp_path / "loose"),
                 tmp_path / "loose" / "BINACJBOFurniture.oni"):
        read = read_level(path)
        assert read.environment is None and read.object_quads == {} and read.warnings == []
        assert [(f.id, f.class_name, f.geometry.name) for f in read.furniture] == [(5, "fu_box", "fu_box"),
                                                                                   (6, "fu_shelf", "fu_shelf")]
        assert [e.mesh.name for e in read.furniture[1].geometry.elements] == ["box", "pane"]


def test_an_environment_without_a_level_instance(tmp_path, standard):
    """A .dat of an AKEV and lists but no ONLV: the first AKEV, the lists, no OBOA (said)."""
    level = gen.standard_level(np.random.default_rng(7))
    level.with_onlv = False
    read = read_level(gen.write_level(level, tmp_path))
    assert read.name == "gen" and (read.environment.flags == standard.environment.flags).all()
    assert len(read.doors) == 4 and read.object_quads == {} and read.sky == ""
    assert read.warnings == ["no object setup array (OBOA) holds the doors' leaves: each is placed by Bungie's rule"]


def test_unknown_object_types_are_skipped_with_a_warning(tmp_path):
    level = gen.standard_level(np.random.default_rng(2))
    level.lists["Door"].insert(1, gen.GenObjectEntry("ABCD", 90, 0, (1, 2, 3), (0, 0, 0), bytes(12)))
    level.lists["Door"].append(gen.GenObjectEntry("ABCD", 91, 0, (1, 2, 3), (0, 0, 0), b""))
    level.lists["Flag"].append(gen.GenObjectEntry("\x01xyz", 92, 0, (1, 2, 3), (0, 0, 0), bytes(8)))
    for path in (gen.write_level(level, tmp_path / "dat"), gen.write_loose(level, tmp_path / "loose")):
        read = read_level(path)
        doors = next(o for o in read.object_lists if o.name == "Door")
        assert doors.ids.tolist() == [1, 2, 3, 4] and [d.id for d in doors.doors] == [1, 2, 3, 4]
        assert "BINACJBODoor: 2 object(s) of unknown type 'ABCD' skipped (the first, id 90)" in read.warnings
        assert "BINACJBOFlag: 1 object(s) of unknown type '\\x01xyz' skipped (the first, id 92)" in read.warnings
        assert len(read.warnings) == 2


def test_each_loose_file_gives_what_it_holds(standard, tmp_path):
    gen.write_loose(standard, tmp_path)
    env = read_level(tmp_path / "AKEVgen.oni")
    assert env.object_lists == [] and (env.environment.flags == standard.environment.flags).all()
    doors = read_level(tmp_path / "BINACJBODoor.oni")
    assert [o.name for o in doors.object_lists] == ["Door"] and sorted(doors.door_classes) == ["dr_double",
                                                                                             "dr_single"]
    patrol = read_level(tmp_path / "BINACJBOPatrol_Path.oni")
    assert [o.name for o in patrol.object_lists] == ["Patrol Path"] and patrol.warnings == []
    door_class = read_level(tmp_path / "DOORdr_double.oni")
    assert list(door_class.door_classes) == ["dr_double"] and door_class.name == "dr_double"
    geometry = read_level(tmp_path / "OFGAfu_shelf.oni")
    assert list(geometry.furniture_classes) == ["fu_shelf"]


def test_the_onlv_finds_its_lists_beside_it_and_no_others(standard, tmp_path):
    """A loose ONLV reads every BINACJBO*.oni of its folder; a loose AKEV or class reads none."""
    gen.write_loose(standard, tmp_path)
    read = read_level(tmp_path / "ONLVgen.oni")
    assert len(read.object_lists) == len(standard.lists)
    assert [o.name for o in read.object_lists] == sorted(standard.lists, key=lambda n: n.replace(" ", "_"))
    assert os.path.exists(tmp_path / "BINACJBOTrigger_Volume.oni")   # a space in a list's name: '_' in its file's


@pytest.fixture(scope="module", params=["level", "loose"])
def rare(request, tmp_path_factory):
    """(level_generate.rare_cases of the standard level, what is read of it as a level or loose files)."""
    level = gen.rare_cases(gen.standard_level(np.random.default_rng(7)))
    folder = tmp_path_factory.mktemp("rare_" + request.param)
    return level, read_level(gen.write_level(level, folder) if request.param == "level" else
                             gen.write_loose(level, folder))


def test_a_tag_listed_twice_in_the_object_quad_map_keeps_its_first_list(rare):
    level, read = rare
    first = {}
    for tag, quads in level.object_quads:
        first.setdefault(tag, list(quads))
    assert len(first) < len(level.object_quads)
    assert {tag: quads.tolist() for tag, quads in read.object_quads.items()} == first

