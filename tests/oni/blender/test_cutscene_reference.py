"""Each cutscene of this project's scripts and the level's own, imported into Blender from
OniSplit's level12 (tests/data/cutscene), against the independent tick-by-tick reference
(tests/fixtures/cutscene_reference.py) fed from the level's authored values (its manifest: the
characters' and flags' places, the sounds' lengths) and the files as read: the camera, every
character's base and every scripted object on every frame, through Blender's own evaluation."""

import json
import os

import bpy
import numpy as np
import pytest
from cutscene_reference import Level, play
from cutscene_scene import FOLDER, GAME_SCRIPTS, LEVEL, SCRIPTS, blender_camera, blender_object, rotation_y

from oban_import.oni.io.bsl.read import read_scripts
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.objects.read import read_objects
from oban_import.oni.io.trams.files import read_trams

pytestmark = pytest.mark.usefixtures("addon")
AUTHORED = json.load(open(os.path.join(FOLDER, "manifest.json")))["authored"]


def standing(position, degrees):
    """T(position) . RotY(degrees): where the manifest puts a character or a flag."""
    m = rotation_y(degrees)
    m[:3, 3] = [float(v) for v in position.split()]
    return m


def reference_level(scripts):
    read = read_scripts(scripts)
    placed = {}
    for obj in read_objects(LEVEL).objects:
        placed.setdefault(obj.script_id, []).append(obj)
    characters = {("0" if c["flags"] == "IsPlayer" else c["name"]): standing(c["position"],
                                                                           float(c["rotation"].split()[1]))
                  for c in AUTHORED["characters"]}
    return Level(functions=read.functions, variables=read.variables, obans={a.name: a for a in read_file(LEVEL)},
                 trams={t.name: t.frames for t in read_trams(LEVEL)},
                 dialogue={name: s["duration_ticks"] for name, s in AUTHORED["sounds"].items() if "note" not in s},
                 characters=characters,
                 flags={str(f["flag_id"]): standing(f["position"], float(f["rotation"].split()[1]))
                        for f in AUTHORED["flags"]},
                 placed=placed)


@pytest.mark.parametrize("scripts, function", [(SCRIPTS, "shots"), (SCRIPTS, "actors"), (SCRIPTS, "props"),
                                               (SCRIPTS, "picture"), (GAME_SCRIPTS, "cut_intro")])
def test_blender_shows_what_the_reference_plays_on_every_frame(scripts, function):
    want = play(reference_level(scripts), function)
    assert bpy.ops.import_anim.oban(filepath=LEVEL, cutscene=function, scripts=scripts) == {"FINISHED"}
    scene = bpy.context.scene
    assert scene.frame_end - scene.frame_start + 1 == want.length
    rigs = {obj["oni_cutscene_character"]: obj for obj in bpy.data.objects if "oni_cutscene_character" in obj}
    props = {(obj["oni_script_id"], obj["oni_setup"]): obj for obj in bpy.data.objects if "oni_cutscene" in obj
             and "oni_script_id" in obj}
    films = {e for e in ("griffin",) if function == "cut_intro"}   # playback: the reference stops at the film
    for tick in range(want.length):
        scene.frame_set(scene.frame_start + tick)
        if not want.camera_held[tick]:
            np.testing.assert_allclose(np.array(scene.camera.matrix_world), blender_camera(want.camera[tick]),
                                       atol=2e-5, err_msg=f"camera, tick {tick}")
        for key, bases in want.bases.items():
            if key not in films:
                np.testing.assert_allclose(np.array(rigs[key].matrix_world), blender_object(bases[tick]),
                                           atol=2e-5, err_msg=f"character {key}, tick {tick}")
        for key, shown in want.objects_shown.items():
            assert props[key].hide_viewport == (not shown[tick]), (key, tick)
            if shown[tick]:
                np.testing.assert_allclose(np.array(props[key].matrix_world), blender_object(want.objects[key][tick]),
                                           atol=2e-5, err_msg=f"object {key}, tick {tick}")
