"""A cutscene in Blender (docs/cutscenes.md): OniSplit's level12 (tests/data/cutscene) with this
project's own scripts, imported through the dialog's operator and the command line; the
camera, each character's base and each placed object compared on every frame with matrices
worked out here by a plain loop over ticks from the engine's rules (not the scheduler's
code), in Blender's terms by the conversion written out here; the TRAM strips, what is shown
and hidden, the markers and the report."""

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from cutscene_scene import LEVEL, SCRIPTS, at, blender_camera, blender_object, rotation_y

from oban_import.oni.engine.frames import frame_matrices, sample_keys
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import matrix_from_columns
from oban_import.oni.io.objects.read import read_objects

pytestmark = pytest.mark.usefixtures("addon")
TURN_X = np.array([[1.0, 0, 0, 0], [0, 0, -1.0, 0], [0, 1.0, 0, 0], [0, 0, 0, 1.0]])   # y -> z
OBANS = {a.name: a for a in read_file(LEVEL)}


def imported(function, frame_start=1, **options):
    result = bpy.ops.import_anim.oban(filepath=LEVEL, cutscene=function, scripts=SCRIPTS, frame_start=frame_start,
                                      **options)
    assert result == {"FINISHED"}
    return bpy.context.scene


def matrices_on_frames(obj, scene, ticks):
    """obj's world matrix on the frame of each tick, as Blender evaluates it."""
    out = []
    for tick in range(ticks):
        scene.frame_set(scene.frame_start + tick)
        out.append(np.array(obj.matrix_world))
    return np.array(out)


def frame(name, f):
    return frame_matrices(OBANS[name], [f])[0]


def view(m):
    return m[:3, 3], -m[:3, 2] / np.linalg.norm(m[:3, 2])


def eased_view(start, target, k, n):
    """cm_interpolate's view on its k-th tick of n (CUTSCENES.md 2): position and direction
    lerped by a = (sin(k/n.pi - pi/2) + 1)/2, the direction normalised, the up level."""
    a = (np.sin(min(k, n) / n * np.pi - np.pi / 2) + 1) / 2
    (p0, v0), (p1, v1) = start, view(target)
    p, v = p0 + (p1 - p0) * a, v0 + (v1 - v0) * a
    v = v / np.linalg.norm(v)
    up = np.cross(v, [v[2], 0.0, -v[0]])
    up /= np.linalg.norm(up)
    z = -v
    x = np.cross(up, z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, p
    return m


def expected_shots():
    """`shots`, tick by tick: cut_cam_a from frame 1 (40 frames: cm_wait passes on tick 39), a
    30-tick interpolation to cut_cam_b, cut_cam_b from tick 79 (cm_anim_block: the camera was
    free), cm_wait on tick 103, cm_reset: held."""
    out = []
    for tick in range(104):
        if tick < 39:
            out.append(frame("cut_cam_a", min(tick + 1, 39)))
        elif tick < 79:
            out.append(eased_view(view(frame("cut_cam_a", 39)), frame("cut_cam_b", 0), tick - 38, 30))
        elif tick < 103:
            out.append(frame("cut_cam_b", min(tick - 78, 24)))
        else:
            out.append(out[-1])
    return np.array(out)


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "ZXY"])
def test_the_camera_is_where_the_engine_puts_it_on_every_frame(rotation_mode):
    scene = imported("shots", rotation_mode=rotation_mode)
    assert scene.camera.rotation_mode == rotation_mode
    expected = np.array([blender_camera(m) for m in expected_shots()])
    assert (scene.frame_start, scene.frame_end) == (1, 104)
    got = matrices_on_frames(scene.camera, scene, len(expected))
    np.testing.assert_allclose(got, expected, atol=2e-5)
    assert scene.render.fps == 60


def test_a_later_start_frame_moves_the_whole_cutscene():
    scene = imported("shots", frame_start=101)
    assert (scene.frame_start, scene.frame_end) == (101, 204)
    scene.frame_set(101 + 50)
    np.testing.assert_allclose(np.array(scene.camera.matrix_world), blender_camera(expected_shots()[50]), atol=2e-5)


def expected_player():
    """`actors`' player (hero at (40, 0, 40) facing 90°): teleported to flag 7002 keeping its
    facing; cut_box from tick 5 (30 frames: frames 1..28, ended on tick 33: the last position,
    the facing before); cut_box again without its rotation from tick 45 (chr_envanim_block: the
    first had ended), ended on tick 73; the cutscene lasts while char0_punch02 loops (60 ticks
    from tick 45)."""
    facing = rotation_y(90)
    out = []
    for tick in range(105):
        if tick < 5:
            out.append(at((150.0, 0.0, 50.0), facing))
        elif tick < 33:
            out.append(frame("cut_box", tick - 4) @ TURN_X)
        elif tick < 45:
            out.append(at(frame("cut_box", 28)[:3, 3], facing))
        elif tick < 73:
            position, _ = sample_keys(OBANS["cut_box"], [tick - 44])
            plain = matrix_from_columns(OBANS["cut_box"].base_matrix)
            plain[:3, 3] += position[0]
            out.append(plain)
        else:
            out.append(at(out[-1][:3, 3], facing))
    return np.array(out)


def test_each_character_stands_where_the_engine_puts_it_and_plays_its_trams_at_their_ticks():
    scene = imported("actors")
    rigs = {obj.get("oni_cutscene_character"): obj for obj in bpy.data.objects if "oni_cutscene_character" in obj}
    assert scene.frame_end - scene.frame_start + 1 == 105
    assert set(rigs) == {"0", "griffin"}
    hero = rigs["0"]
    expected = np.array([blender_object(m) for m in expected_player()])
    np.testing.assert_allclose(matrices_on_frames(hero, scene, 105), expected, atol=2e-5)
    strips = [(s.frame_start, s.action.name) for t in hero.animation_data.nla_tracks for s in t.strips]
    assert [(start, name.split(".")[0]) for start, name in strips] == [(6.0, "char0_walk00"), (46.0, "char0_punch02"),
                                                                       (81.0, "char0_punch02")]   # a round a strip
    griffin = rigs["griffin"]
    shown = []
    for tick in (0, 44, 45, 74, 75):
        scene.frame_set(scene.frame_start + tick)
        shown.append(not griffin.hide_viewport)
        if tick == 45:
            np.testing.assert_allclose(np.array(griffin.matrix_world), blender_object(at((50.0, 0, 150.0),
                                                                                        rotation_y(-135))), atol=2e-5)
    assert shown == [False, False, True, True, False]


def test_placed_objects_and_script_quads_are_shown_moved_and_hidden_in_step():
    scene = imported("props")
    objects = read_objects(LEVEL).objects
    lift = next(o for o in objects if o.script_id == 22)
    door = next(o for o in objects if o.script_id == 23)
    built = {obj.get("oni_script_id"): obj for obj in bpy.data.objects if obj.get("oni_cutscene")}
    door_frames = [0 if t < 0 else min(t + 1, 19) for t in range(19)] + [min(t - 18, 19) for t in range(19, 65)]
    expected = np.array([blender_object(frame_matrices(door.animation, [f])[0]) for f in door_frames])
    np.testing.assert_allclose(matrices_on_frames(built[23], scene, 65), expected, atol=2e-5)
    lift_frames = [(t + 1) % lift.animation.frames for t in range(65)]
    expected = np.array([blender_object(frame_matrices(lift.animation, [f])[0]) for f in lift_frames])
    np.testing.assert_allclose(matrices_on_frames(built[22], scene, 65), expected, atol=2e-5)
    shown = []
    for tick in (0, 33, 34, 64):
        scene.frame_set(scene.frame_start + tick)
        shown.append(not built[21].hide_viewport)
    assert shown == [True, True, False, False]
    environment = next(obj for obj in bpy.data.objects if "oni_environment" in obj and obj.type == "MESH")
    switches = []
    for tick in (9, 10, 33, 34):
        scene.frame_set(scene.frame_start + tick)
        switches.append(tuple(environment.modifiers[f"hide script id {i}"].show_viewport for i in (11, 12)))
    assert switches == [(False, False), (True, False), (True, False), (False, True)]
    scene.frame_set(scene.frame_start + 20)
    faces = len(environment.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.polygons)
    assert faces == len(environment.data.polygons) - 2
    assert not [action.name for action in bpy.data.actions if action.users == 0]   # the objects' own, taken away


def test_dialogue_markers_and_what_the_game_alone_knows_are_marked_and_reported():
    result = bpy.ops.import_anim.oban(filepath=LEVEL, cutscene="talk", scripts=SCRIPTS)
    assert result == {"FINISHED"}
    markers = {m.name: m.frame for m in bpy.context.scene.timeline_markers}
    assert markers["dialogue cut_line1 (90 ticks)"] == 1
    assert markers["dialogue cut_line2 (30 ticks)"] == 91        # dropped at 0, started when line 1 ended
    assert markers["fade_out 0 0 0 30"] == 91
    assert markers["letterbox 1"] == 111
    assert markers["ai2_dopath griffin patrol_1"] == 111


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_imports_a_cutscene_and_lists_the_functions(command, tmp_path):
    out = tmp_path / "cut.blend"
    done = run(command, LEVEL, "--cutscene", "shots", "--scripts", SCRIPTS, "-o", out)
    assert done.returncode == 0, done.stderr
    assert out.is_file() and "shots: 104 ticks" in done.stderr
    listed = run(command, LEVEL, "--scripts", SCRIPTS, "--list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines()[1:]}
    assert rows["shots"] == "104" and rows["actors"] == "105"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_function_or_script_that_is_not_there_imports_nothing(command, tmp_path):
    out = tmp_path / "cut.blend"
    done = run(command, LEVEL, "--cutscene", "nowhere", "--scripts", SCRIPTS, "-o", out)
    assert done.returncode == 1 and "no function 'nowhere'" in done.stderr and not out.exists()
    done = run(command, LEVEL, "--cutscene", "shots", "--scripts", str(tmp_path), "-o", out)
    assert done.returncode == 1 and "holds no script" in done.stderr and not out.exists()


def test_a_missing_function_leaves_the_scene_as_it_was():
    before = len(bpy.data.objects)
    with pytest.raises(RuntimeError):
        bpy.ops.import_anim.oban(filepath=LEVEL, cutscene="nowhere", scripts=SCRIPTS)
    assert len(bpy.data.objects) == before


def test_the_trams_play_from_frame_1_on_their_tick_loop_for_the_ticks_asked_and_hold():
    """char0_walk00 (50 frames) from tick 5, cut by char0_punch02 at 45, asked for 60 ticks: its
    frames 1 .. 35 round and round, the frame shown on tick 104 held after."""
    from oban_import.blender.compat import action_fcurves
    scene = imported("actors")
    hero = next(obj for obj in bpy.data.objects if obj.get("oni_cutscene_character") == "0")
    actions = {s.action.name.split(".")[0]: s.action for t in hero.animation_data.nla_tracks for s in t.strips}
    checks = [(tick, "char0_walk00", 1 + tick - 5) for tick in (5, 6, 30, 44)]
    checks += [(tick, "char0_punch02", 1 + (tick - 45) % 35) for tick in (45, 46, 79, 80, 81, 104)]
    checks += [(130, "char0_punch02", 1 + (104 - 45) % 35)]
    for tick, name, tram_frame in checks:
        scene.frame_set(scene.frame_start + tick)
        for fcurve in action_fcurves(actions[name])[:40]:
            if ".rotation_quaternion" not in fcurve.data_path:
                continue
            bone = fcurve.data_path.split('"')[1]
            got = hero.pose.bones[bone].rotation_quaternion[fcurve.array_index]
            assert got == pytest.approx(fcurve.evaluate(scene.frame_start + tram_frame), abs=1e-5), (tick, bone)


def test_a_character_the_level_gives_no_class_is_an_empty_said_or_the_class_the_user_names():
    result = bpy.ops.import_anim.oban(filepath=LEVEL, cutscene="stranger", scripts=SCRIPTS)
    assert result == {"FINISHED"}
    visitor = next(obj for obj in bpy.data.objects if obj.get("oni_cutscene_character") == "visitor")
    assert visitor.type == "EMPTY"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_anim.oban(filepath=LEVEL, cutscene="stranger", scripts=SCRIPTS, character_class="char0")
    assert result == {"FINISHED"}
    visitor = next(obj for obj in bpy.data.objects if obj.get("oni_cutscene_character") == "visitor")
    assert visitor.type == "ARMATURE" and visitor.get("oni_character") == "char0"
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start + 3)
    np.testing.assert_allclose(np.array(visitor.matrix_world), blender_object(frame("cut_box", 4) @ TURN_X), atol=2e-5)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_says_which_character_has_no_class(command, tmp_path):
    done = run(command, LEVEL, "--cutscene", "stranger", "--scripts", SCRIPTS, "-o", tmp_path / "c.blend")
    assert done.returncode == 0 and "character visitor: its class is not found" in done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_shot_is_held_and_named_a_missing_film_named_a_film_waited_for(command, tmp_path):
    out = tmp_path / "m.blend"
    done = run(command, LEVEL, "--cutscene", "missing", "--scripts", SCRIPTS, "-o", out)
    assert done.returncode == 0, done.stderr
    assert "tick 10: OBAN no_such_shot is not in the level" in done.stderr
    assert "tick 20: FILM no_such_film is not in the level" in done.stderr
    assert "missing: 116 ticks" in done.stderr     # playback_block sleeps cut_walk's 90 ticks


def test_a_missing_shot_holds_the_view_before():
    scene = imported("missing")
    views = []
    for tick in (9, 10, 19):
        scene.frame_set(scene.frame_start + tick)
        views.append(np.array(scene.camera.matrix_world))
    np.testing.assert_allclose(views[1], views[0], atol=1e-7)
    np.testing.assert_allclose(views[2], views[0], atol=1e-7)
    np.testing.assert_allclose(views[0], blender_camera(frame("cut_cam_a", 10)), atol=2e-5)


def test_the_function_fields_choices_are_read_again_only_when_a_script_changes(tmp_path):
    from oban_import.ui import operators
    script = tmp_path / "a.bsl"
    script.write_text("func void one(void)\n{\n\tsleep 1\n}\n")
    assert operators._function_names(str(tmp_path)) == ("one",)
    reads = operators._names_read.cache_info().misses
    assert operators._function_names(str(tmp_path)) == ("one",)
    assert operators._names_read.cache_info().misses == reads        # not read again
    script.write_text("func void one(void)\n{\n\tsleep 1\n}\nfunc void two(void)\n{\n\tsleep 2\n}\n")
    assert operators._function_names(str(tmp_path)) == ("one", "two")
