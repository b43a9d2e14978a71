"""Outpost 2 sprites in Blender (docs/outpost2.md 4) through import_sprites: at every frame of
every animation the visible planes, in their layer order, at their positions and sizes, with
their images' pixels, give exactly what the plain loops of tests/fixtures/op2_reference.py
decode and draw from the files' bytes; bad input adds nothing."""

import os
from pathlib import Path

import bpy
import numpy as np
import pytest
from blender_materials import is_alpha_blended
from op2_generate import write_pair
from op2_reference import loop_composite, loop_draw, loop_rgba
from paths import EXAMPLES

from oban_import.blender import compat
from oban_import.outpost2.blender import sprites
from oban_import.outpost2.blender.sprites import import_sprites
from oban_import.outpost2.engine.planes import plane_layers
from oban_import.outpost2.io.prt import read_prt
from oban_import.ui.options import SpriteImportSettings


def counts():
    return tuple(len(c) for c in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.images,
                                  bpy.data.actions))


def image_rgba(image):
    width, height = image.size
    pixels = np.empty(width * height * 4, np.float32)
    image.pixels.foreach_get(pixels)
    return np.floor(pixels.reshape(height, width, 4)[::-1] * 255 + 0.5).astype(np.uint8)


def plane_image(plane):
    nodes = plane.active_material.node_tree.nodes
    return next(n for n in nodes if n.bl_idname == "ShaderNodeTexImage").image


def hidden_by_fcurves(plane, frame):
    fcurves = {fc.data_path: fc for fc in compat.action_fcurves(plane.animation_data.action, plane)}
    return bool(fcurves["hide_viewport"].evaluate(frame)), bool(fcurves["hide_render"].evaluate(frame))


def reference_images(prt_path, bmp_path):
    prt_data, bmp_data = Path(prt_path).read_bytes(), Path(bmp_path).read_bytes()
    return [loop_rgba(prt_data, bmp_data, i) for i in range(len(read_prt(prt_path).bitmaps))]


def assert_frames_drawn(result, prt_path, bmp_path, frame_start, scale):
    """Every frame of every imported animation: the scene's planes give the loop's drawing."""
    prt = read_prt(prt_path)
    images = reference_images(prt_path, bmp_path)
    frames = 0
    for index, empty in ((m.item, m.block) for m in result.made):
        for f in range(len(prt.animations[index].frames)):
            expected, left, top = loop_draw(prt, images, index, f)
            got = scene_frame(empty, frame_start + f, scale, left, top, expected.shape[1], expected.shape[0])
            assert np.array_equal(got, expected), (index, f)
            frames += 1
    assert frames == sum(len(prt.animations[m.item].frames) for m in result.made) > 0


def scene_frame(empty, frame, scale, left, top, width, height):
    """The planes visible at scene frame `frame`, their images composited by the plain loop
    onto the canvas of the frame's `width` x `height` pixels from (left, top)."""
    bpy.context.scene.frame_set(frame)
    planes = []
    for plane in empty.children:
        viewport, render = hidden_by_fcurves(plane, frame)
        assert (plane.hide_viewport, plane.hide_render) == (viewport, render)
        assert viewport == render
        if not viewport:
            planes.append(plane)
    planes.sort(key=lambda p: -p.location.y)
    assert len({round(p.location.y / scale * 10) for p in planes}) == len(planes)    # distinct layers
    canvas = np.zeros((height, width, 4), np.uint8)
    for plane in planes:
        rgba = image_rgba(plane_image(plane))
        xs = [v.co.x for v in plane.data.vertices]
        zs = [v.co.z for v in plane.data.vertices]
        assert round((max(xs) - min(xs)) / scale) == rgba.shape[1]
        assert round((max(zs) - min(zs)) / scale) == rgba.shape[0]
        assert (min(xs), max(zs)) == (0, 0)             # the mesh's top-left is the plane's origin
        x, y = round(plane.location.x / scale) - left, round(-plane.location.z / scale) - top
        assert 0 <= x and x + rgba.shape[1] <= width and 0 <= y and y + rgba.shape[0] <= height, plane.name
        loop_composite(canvas, rgba, x, y)
    return canvas


@pytest.mark.parametrize("seed, scale", [(0, 1 / 32), (1, 0.01), (2, 1 / 32), (3, 0.05)])
def test_every_frame_matches_the_drawing(tmp_path, seed, scale):
    prt_path, bmp_path, _, _ = write_pair(tmp_path, np.random.default_rng(seed), animations=5, max_frames=7)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings(global_scale=scale, frame_start=3))
    assert result.errors == []
    prt = read_prt(prt_path)
    assert [m.item for m in result.made] == list(range(len(prt.animations)))
    empties = [m.block for m in result.made]
    assert [e.name for e in empties] == [f"anim_{i}" for i in range(len(empties))]
    assert tuple(empties[0].location) == (0, 0, 0) and all(e.location.y == e.location.z == 0 for e in empties)
    spans = [x_span(empty) for empty in empties]   # side by side, apart, in order
    assert all(left[1] < right[0] for left, right in zip(spans, spans[1:])), spans
    assert_frames_drawn(result, prt_path, bmp_path, 3, scale)


def x_span(empty):
    """The x extent, in the world, of every plane under an animation's Empty (shown or not)."""
    xs = [empty.location.x + plane.location.x + vertex.co.x
          for plane in empty.children for vertex in plane.data.vertices]
    return min(xs), max(xs)


def test_stacked_the_animations_stand_at_the_origin(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(6), animations=3, max_frames=2)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings(side_by_side=False))
    assert [tuple(m.block.location) for m in result.made] == [(0, 0, 0)] * 3


def test_images_are_shared_packed_and_sampled_closest(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(4), animations=6)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings())
    assert result.errors == [] and result.made
    prt = read_prt(prt_path)
    used = {int(b) for a in prt.animations for f in a.frames for b in f.subframes["bitmap"]}
    assert sorted(image.name for image in bpy.data.images) == sorted(f"op2_bitmap_{b}" for b in used)
    for image in bpy.data.images:
        assert image.packed_file is not None
        assert image.colorspace_settings.name == "sRGB"
    for plane in (o for o in bpy.data.objects if o.type == "MESH"):
        material = plane.active_material
        texture = next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage")
        assert texture.interpolation == "Closest"
        assert is_alpha_blended(material)
        assert plane.parent.name.startswith("anim_")
        keys = [k for fc in compat.action_fcurves(plane.animation_data.action, plane) for k in fc.keyframe_points]
        assert keys and {k.interpolation for k in keys} == {"CONSTANT"}
    scene = bpy.context.scene
    assert scene.render.fps == 100 and scene.view_settings.view_transform == "Standard"
    assert scene.frame_end >= max(len(a.frames) for a in prt.animations)


def test_every_stored_field_is_a_custom_property(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(5), animations=4)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings(animations="3,1"))
    prt = read_prt(prt_path)
    assert [m.item for m in result.made] == [3, 1]

    def u32(values):
        return [v - (1 << 32) if v >= 1 << 31 else v for v in values]

    for index, empty in ((m.item, m.block) for m in result.made):
        a = prt.animations[index]
        assert empty["op2_index"] == index
        assert [empty["op2_unknown"], empty["op2_unknown2"]] == u32([a.unknown, a.unknown2])
        assert list(empty["op2_selection_rect"]) == list(a.rect)
        assert list(empty["op2_displacement"]) == list(a.displacement)
        assert list(empty["op2_windows"]) == u32(a.windows.ravel().tolist())
        assert list(empty["op2_frame_unknown"]) == [f.unknown for f in a.frames]
        assert list(empty["op2_frame_subframes"]) == [len(f.subframes) for f in a.frames]
        assert list(empty["op2_subframes"]) == [v for f in a.frames for s in f.subframes.tolist() for v in s]
        optional = [v for f in a.frames for v in (list(f.optional1 or [-1, -1]) + list(f.optional2 or [-1, -1]))]
        assert list(empty["op2_frame_optional"]) == optional


def test_progress_goes_up_to_one(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(6), animations=40, max_frames=2)
    seen = []
    import_sprites(bpy.context, str(prt_path), SpriteImportSettings(), seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 2


def _bad_cases(tmp_path):
    prt_path, bmp_path, prt, _ = write_pair(tmp_path, np.random.default_rng(7))
    data, pixels = prt_path.read_bytes(), bmp_path.read_bytes()
    cut = tmp_path / "cut.prt"
    cut.write_bytes(data[:-3])
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "op2_art.prt").write_bytes(data)
    short = tmp_path / "short.bmp"
    short.write_bytes(pixels[:1079])         # the header and one pixel byte
    return [(str(cut), SpriteImportSettings(bmp_path=str(bmp_path)), "cut.prt: animation"),
            (str(lone / "op2_art.prt"), SpriteImportSettings(), "no op2_art.bmp beside it"),
            (str(prt_path), SpriteImportSettings(bmp_path=str(short)), "reach past the end of the file"),
            (str(prt_path), SpriteImportSettings(animations="0,99"), "animation index 99 is out of range")]


def test_bad_input_adds_nothing(tmp_path):
    for path, settings, message in _bad_cases(tmp_path):
        before = counts()
        result = import_sprites(bpy.context, path, settings)
        assert len(result.errors) == 1 and message in result.errors[0], result.errors
        assert result.made == [] and counts() == before


def test_a_failure_while_building_removes_everything(tmp_path, monkeypatch):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(8), animations=5)
    calls = []
    real = sprites._key_visibility

    def failing(*args):
        calls.append(1)
        if len(calls) == 7:
            raise RuntimeError("boom")
        return real(*args)

    monkeypatch.setattr(sprites, "_key_visibility", failing)
    before = counts()
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings())
    assert result.errors and "boom" in result.errors[0]
    assert result.made == [] and counts() == before


def test_layers_hold_every_frames_order():
    """A cycle between frames (A over B, then B over A) splits planes by position."""
    from oban_import.outpost2.io.prt import SUBFRAME_DTYPE, Frame

    def frame(*keys):
        subs = np.zeros(len(keys), SUBFRAME_DTYPE)
        for i, (b, x, y) in enumerate(keys):
            subs[i]["bitmap"], subs[i]["x"], subs[i]["y"] = b, x, y
        return Frame(subs)

    planes, visible = plane_layers([frame((0, 0, 0), (1, 0, 0)), frame((1, 0, 0), (2, 5, 5))])
    assert planes == [(0, 0, 0), (1, 0, 0), (2, 5, 5)]
    assert visible.tolist() == [[True, False], [True, True], [False, True]]
    planes, visible = plane_layers([frame((0, 0, 0), (1, 0, 0)), frame((1, 0, 0), (0, 0, 0))])
    assert planes == [(0, 0, 0), (1, 0, 0), (1, 0, 0), (0, 0, 0)]
    assert visible.tolist() == [[True, False], [False, True], [True, False], [False, True]]


def test_the_bundled_example(tmp_path):
    """examples/op2_art.prt + .bmp (tools/make_op2_example.py): a building and a turning unit."""
    prt_path = os.path.join(EXAMPLES, "op2_art.prt")
    result = import_sprites(bpy.context, prt_path, SpriteImportSettings())
    assert result.errors == [] and [m.block.name for m in result.made] == ["anim_0", "anim_1"]
    assert_frames_drawn(result, prt_path, os.path.join(EXAMPLES, "op2_art.bmp"), 1, 1 / 32)


def test_planes_with_the_same_visibility_share_an_action(tmp_path):
    prt_path, _, _, _ = write_pair(tmp_path, np.random.default_rng(9), animations=8, max_frames=3)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings())
    assert result.errors == [] and result.made
    planes = [o for o in bpy.data.objects if o.type == "MESH"]
    patterns = {}
    for plane in planes:
        hidden = tuple(hidden_by_fcurves(plane, frame)[0] for frame in range(1, 5))
        patterns.setdefault(hidden, set()).add(plane.animation_data.action.name)
    assert all(len(names) == 1 for names in patterns.values())
    assert len(bpy.data.actions) == len(patterns) < len(planes)


def test_packed_images_keep_their_pixels_through_save_and_reload(tmp_path):
    prt_path, bmp_path, _, _ = write_pair(tmp_path, np.random.default_rng(10), animations=3)
    result = import_sprites(bpy.context, str(prt_path), SpriteImportSettings())
    assert result.errors == [] and result.made
    names = [image.name for image in bpy.data.images]
    blend = str(tmp_path / "sprites.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    bpy.ops.wm.open_mainfile(filepath=blend)
    images = reference_images(prt_path, bmp_path)
    assert names
    for name in names:
        image = bpy.data.images[name]
        assert image.packed_file is not None
        assert np.array_equal(image_rgba(image), images[int(name.rsplit("_", 1)[1])]), name
