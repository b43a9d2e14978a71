"""read_stage (docs/stage.md) of OniSplit's level12 (tests/data/cutscene): every value against
what was authored for OniSplit (the manifest's `authored`), never against a writer of ours."""

import json
import os

import numpy as np
import pytest
from paths import DATA

from oban_import.oni.io.container.library import Library
from oban_import.oni.io.stage.read import read_stage
from oban_import.oni.io.stage.sounds import sound_data_at

FOLDER = os.path.join(DATA, "cutscene")
LEVEL = os.path.join(FOLDER, "level", "level12_Final.dat")
AUTHORED = json.load(open(os.path.join(FOLDER, "manifest.json")))["authored"]


def floats(text):
    return np.array(text.split(), np.float32)


@pytest.fixture(scope="module")
def stage():
    return read_stage(LEVEL)


def test_the_level_reads_without_warnings(stage):
    assert stage.level == AUTHORED["level"]["onlv_name"] == "level12"
    assert stage.warnings == []


def test_characters_stand_where_they_were_placed(stage):
    authored = AUTHORED["characters"]
    assert [c.name for c in stage.characters] == [a["name"] for a in authored]
    for c, a in zip(stage.characters, authored):
        assert c.class_name == a["class"]
        np.testing.assert_array_equal(c.position, floats(a["position"]))
        np.testing.assert_array_equal(c.rotation, floats(a["rotation"]))
        assert c.facing == pytest.approx(np.radians(floats(a["rotation"])[1]))
        assert c.object_id == AUTHORED["level"]["object_ids"][f"CHAR {a['name']}"]
    hero, griffin = stage.characters
    assert stage.player is hero and hero.is_player and hero.present_at_start and hero.team == 0
    assert not griffin.is_player and not griffin.present_at_start and griffin.team == 1   # TCTF
    assert stage.character("griffin") is griffin and stage.character("nobody") is None


def test_the_script_characters_of_the_aisa(stage):
    (guard,) = stage.script_characters
    (a,) = AUTHORED["aisa"]
    assert (guard.name, guard.script_id, guard.flag_id, guard.class_name, guard.ammo) == \
        (a["name"], a["script_id"], a["flag_id"], a["class"], a["ammo"])
    assert guard.flags == 1 and guard.team == 2   # AI, Syndicate
    assert stage.script_character(1001) is guard and stage.flag(guard.flag_id) is not None


def test_flags_by_id(stage):
    for a in AUTHORED["flags"]:
        flag = stage.flag(a["flag_id"])
        np.testing.assert_array_equal(flag.position, floats(a["position"]))
        np.testing.assert_array_equal(flag.rotation, floats(a["rotation"]))
        assert flag.note == a["note"]
        assert flag.facing == pytest.approx(np.radians(floats(a["rotation"])[1]))
    assert [f.object_id for f in stage.flags] == [3, 4] and stage.flag(1) is None


def test_the_film(stage):
    a = AUTHORED["film"]
    film = stage.films[a["name"]]
    np.testing.assert_array_equal(film.position, np.array(a["position"], np.float32))
    assert (film.facing, film.desired_facing, film.head_facing, film.head_pitch) == pytest.approx(
        (a["facing"], a["desired_facing"], a["head_facing"], a["head_pitch"]))
    assert film.frame_count == a["frame_count"]
    assert film.animations == tuple(a["animations"])
    assert film.frames["frame"].tolist() == [f[0] for f in a["frames"]]
    np.testing.assert_array_equal(film.frames["mouse_delta"], np.array([f[1] for f in a["frames"]], np.float32))


def test_placed_objects_by_script_id(stage):
    assert stage.object_script_ids == {o["script_id"]: n for n, o in enumerate(AUTHORED["placed_objects"])}


def test_env_show_groups(stage):
    stored = AUTHORED["level"]["script_quads_as_stored"]
    expected = {}
    for quad, script_id in zip(stored["QuadGroupList"], stored["QuadGroupId"]):
        expected.setdefault(script_id, []).append(quad)
    assert {k: v.tolist() for k, v in stage.script_quads.items()} == expected
    assert sorted(stage.script_quads) == sorted(int(k) for k in AUTHORED["environment"]["script_ids"])
    invisible = 0x2000
    assert all(not (flags & invisible).any() for flags in stage.quad_flags.values())   # none authored hidden


def test_dialogue_lengths_come_from_the_shared_level(stage):
    for name in ("cut_line1", "cut_line2"):
        a = AUTHORED["sounds"][name]
        sound = stage.dialog(name)
        assert sound.group == name and len(sound.permutations) == 1
        data = sound.permutations[0]
        assert (data.name, data.channels, data.sample_rate, data.data_size) == (
            f"{name}.aif", a["channels"], a["rate"], a["data_bytes"])
        assert sound.ticks == stage.dialog_ticks(name) == a["duration_ticks"]
        assert data.seconds == pytest.approx(a["seconds"], abs=1 / 60)
    assert stage.dialog_ticks("cut_line1") == 90 and stage.dialog_ticks("cut_line2") == 30


def test_only_the_sounds_named_are_read_and_one_not_found_is_none():
    stage = read_stage(LEVEL, sounds=["cut_line2", "no_such_line"])
    assert list(stage.sounds) == ["cut_line2"] and stage.dialog("no_such_line") is None
    assert stage.dialog_ticks("no_such_line") == 0 and stage.warnings == []


def test_a_mac_sound_data_file():
    a = AUTHORED["sounds"]["cut_line2"]
    with Library(os.path.join(FOLDER, "oni", "SNDDcut_line2.aif.oni")) as library:
        data = sound_data_at(library.main, 0)
    assert (data.channels, data.sample_rate, data.data_size, data.duration_ticks) == (
        1, 22050, a["data_bytes"], a["duration_ticks"])
