"""The placed-object readers (docs/objects.md): OBOA, M3GA/M3GM and their arrays, TXMP.

Against OniSplit's own output (tests/data/objects: a level, the same instances as loose
.oni files, and OniSplit's OBJ, PNG and a JSON of what was generated), and against
generated files of every case (tools/generate/objects_generate.py) with slow reference decoders.
"""

import json
import os
import shutil
import struct

import numpy as np
import objects_generate as gen
import pytest
from onisplit_readings import ONISPLIT_BITS, assert_same_faces, mesh_corners, onisplit_bytes, read_obj
from paths import DATA as TEST_DATA
from pngs import read_png

from oban_import.core.errors import ObanError
from oban_import.oni.io.oban.record import matrix_from_columns
from oban_import.oni.io.objects import textures
from oban_import.oni.io.objects.read import read_mesh_file, read_objects, read_texture_file

DATA = os.path.join(TEST_DATA, "objects")
LEVEL = os.path.join(DATA, "level", "level9_Final.dat")
OBOA = os.path.join(DATA, "oni", "OBOAlevel9_objects.oni")
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))


# --- helpers ---------------------------------------------------------------------------------

def result_of(level):
    """Everything a Level holds, as plain values, for comparing two reads (texture flag
    0x1000 aside: OniSplit's loose TXMPtex03_rgba.oni lacks it where its level has it)."""
    out = []
    for o in level.objects:
        out.append((o.name, o.flags, o.physics, o.script_id, o.door_gunk_id, o.door_id, o.position.tolist(),
                    o.rotation.tolist(), o.scale, o.origin.tolist(), o.animation and o.animation.name,
                    o.animation and o.animation.keys.tobytes(),
                    [(m.name, m.points.tobytes(), m.normals.tobytes(), m.uvs.tobytes(), m.triangles.tobytes(),
                      m.texture_name, m.texture and (m.texture.name, m.texture.width, m.texture.height,
                                                     m.texture.format, m.texture.flags & ~0x1000,
                                                     m.texture.pixels.tobytes(), m.texture.has_alpha))
                     for m in o.meshes]))
    return out, sorted(a.name for a in level.animations)


def expect_error(path, *parts, reader=read_objects):
    with pytest.raises(ObanError) as info:
        reader(path)
    message = str(info.value)
    assert info.value.path == str(path) or parts and parts[0] == "ANY"
    for part in parts:
        if part != "ANY":
            assert part in message, message
    return message


# --- OniSplit's samples ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def level():
    return read_objects(LEVEL)


def test_objects_equal_expected_json(level):
    assert len(EXPECTED["objects"]) == 9
    assert [o.name for o in level.objects] == [e["name"] for e in EXPECTED["objects"]]
    for o, e in zip(level.objects, EXPECTED["objects"]):
        assert [m.name for m in o.meshes] == [g["name"] for g in e["geometries"]]
        assert [m.texture_name for m in o.meshes] == [g["texture"] for g in e["geometries"]]
        assert [textures.FORMAT_NAMES[m.texture.format].lower() for m in o.meshes] == [g["format"] for g in e["geometries"]]
        assert np.allclose(o.position, e["position"], atol=1e-4)
        assert np.allclose(o.rotation, e["rotation"], atol=1e-6)
        assert o.scale == pytest.approx(e["scale"])
        assert np.array_equal(o.origin, np.float32(e["origin"]))
        assert (o.animation.name if o.animation else "") == e["animation"]
        if e["role"] != "static":
            assert o.animation.has(0x10) == (e["role"] == "localized")
        assert not o.warnings
    assert not level.warnings


def test_static_origin_is_t_r_s(level):
    """docs/objects.md 6: the stored origin is T(position) R(rotation) S(scale), engine quaternion."""
    for o in level.objects:
        x, y, z, w = o.rotation.astype(np.float64)
        s = 2 / (x * x + y * y + z * z + w * w)
        r = np.array([[1 - s * (y * y + z * z), s * (x * y + w * z), s * (x * z - w * y)],
                      [s * (x * y - w * z), 1 - s * (x * x + z * z), s * (y * z + w * x)],
                      [s * (x * z + w * y), s * (y * z - w * x), 1 - s * (x * x + y * y)]])
        m = matrix_from_columns(o.origin)
        assert np.allclose(m[:3, :3], r * o.scale, atol=1e-5)
        assert np.allclose(m[:3, 3], o.position, atol=1e-3)


def test_textures_equal_expected_json(level):
    seen = {m.texture.name: m.texture for o in level.objects for m in o.meshes}
    assert len(EXPECTED["textures"]) == len(seen) == 6
    for e in EXPECTED["textures"]:
        t = seen[e["name"]]
        assert (textures.FORMAT_NAMES[t.format].lower(), t.width, t.height) == (e["format"], e["width"], e["height"])
        assert bool(t.flags & textures.HAS_MIPMAPS) == e["mipmaps"]
        assert t.pixels.shape == (t.height, t.width, 4) and t.pixels.dtype == np.float32


@pytest.mark.parametrize("source", ["level", "oni"])
def test_meshes_equal_onisplit_obj(level, source):
    meshes = {m.name: m for o in level.objects for m in o.meshes}
    assert len(meshes) == 12
    for name, mesh in meshes.items():
        if source == "oni":
            mesh = read_mesh_file(os.path.join(DATA, "oni", f"M3GM{name}.oni"))
        assert mesh.triangles.dtype == np.int32 and mesh.points.dtype == np.float32
        assert_same_faces(mesh_corners(mesh), read_obj(os.path.join(DATA, "reference", "obj", f"{name}.obj")))


@pytest.mark.parametrize("source", ["level", "oni"])
def test_textures_equal_onisplit_png(level, source):
    """Exactly OniSplit's PNG bytes once its widening (ONISPLIT_BITS) is applied to the decoded values
    (and to the bytes, round(255 x), the packed images get). OniSplit's DXT1 colours 2 and 3 are lerps
    of its shifted endpoints, truncated, not a widening of one value: the sample's blocks use colours 0
    and 1 only (OniSplit's compressor writes a block's min and max in three-colour order), asserted."""
    seen = {m.texture.name: m.texture for o in level.objects for m in o.meshes}
    assert len(seen) == 6 and sorted(t.format for t in seen.values()) == sorted(ONISPLIT_BITS)
    for name, t in seen.items():
        if source == "oni":
            t = read_texture_file(os.path.join(DATA, "oni", f"TXMP{name}.oni"))
        png = read_png(os.path.join(DATA, "reference", "png", f"TXMP{name}.png")).astype(np.int64)
        assert png.shape == t.pixels.shape
        if t.format == textures.DXT1:
            codes = np.frombuffer(t.raw, "<u4")[1::2, None] >> np.arange(0, 32, 2, dtype=np.uint32) & 3
            assert codes.max() == 1, name
        assert np.array_equal(onisplit_bytes(t.pixels, t.format), png), name
        assert np.array_equal(onisplit_bytes(t.rgba8 / 255, t.format), png), name
        assert t.has_alpha == (t.format in (0, 2, 7, 9))


def test_level_and_loose_oni_give_the_same(level):
    assert result_of(read_objects(OBOA)) == result_of(level)


def test_level_reads_every_oban(level):
    assert len(level.animations) == 6
    assert sorted(a.name for a in level.animations) == sorted(
        e["animation"] for e in EXPECTED["objects"] if e["animation"])


# --- generated files -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def scene():
    return gen.standard_scene(np.random.default_rng(9))


def check_against_scene(level, scene, missing=(), loose=False):
    scene, raws = scene
    assert [o.name for o in level.objects] == [o.name for o in scene.objects]
    for o, g in zip(level.objects, scene.objects):
        present = [n for n in g.meshes if n not in missing]
        assert [m.name for m in o.meshes] == present
        assert (o.flags, o.physics, o.script_id, o.door_gunk_id, o.door_id) == (
            g.flags, g.physics, g.script_id, g.door_gunk_id, g.door_id)
        assert np.array_equal(o.position, np.float32(g.position)) and np.array_equal(o.origin, np.float32(g.origin))
        assert np.array_equal(o.rotation, np.float32(g.rotation)) and o.scale == np.float32(g.scale)
        assert (o.animation.name if o.animation else None) == g.animation
        for m in o.meshes:
            gm = scene.meshes[m.name]
            assert np.array_equal(m.points, gm.points) and np.array_equal(m.uvs, gm.uvs)
            assert np.array_equal(m.normals, gm.normals)
            assert np.array_equal(m.triangles, gen.reference_triangles(gm))
            assert m.texture_name == (gm.texture or "")
            if gm.texture in scene.textures:
                gt = scene.textures[gm.texture]
                t = m.texture
                assert (t.width, t.height, t.format, t.flags) == (gt.width, gt.height, gt.format, gt.flags)
                assert np.allclose(t.pixels, gen.reference_pixels(gt), atol=1e-6)
            else:
                assert m.texture is None
    used = {g.animation for g in scene.objects if g.animation}
    # a level has every OBAN; a loose OBOA only those its objects link
    assert sorted(a.name for a in level.animations) == sorted(used if loose else scene.animations)


@pytest.mark.parametrize("layout", ["level", "loose"])
def test_generated_every_case(tmp_path, scene, layout):
    write = gen.write_level if layout == "level" else gen.write_loose
    level = read_objects(write(*scene, str(tmp_path)))
    check_against_scene(level, scene, loose=layout == "loose")
    assert not level.warnings
    shared = [m.texture for o in level.objects for m in o.meshes if m.texture_name == "tex_bgra4444_0"]
    assert len(shared) >= 2 and all(t is shared[0] for t in shared)  # decoded once


@pytest.mark.parametrize("layout", ["level", "loose"])
def test_generated_missing_placeholders_warn(tmp_path, layout):
    scene = gen.standard_scene(np.random.default_rng(3), missing_texture=True, missing_mesh=True)
    write = gen.write_level if layout == "level" else gen.write_loose
    level = read_objects(write(*scene, str(tmp_path)))
    check_against_scene(level, scene, missing={"notthere"}, loose=layout == "loose")
    assert any("TXMPnowhere not found" in w for w in level.warnings), level.warnings
    assert any("M3GMnotthere not found" in w for w in level.warnings), level.warnings
    lost_users = [o for o in level.objects if "lost" in [m.name for m in o.meshes]]
    assert lost_users and all(any("TXMPnowhere" in w for w in o.warnings) for o in lost_users)
    ghost = level.objects[-1]
    assert ghost.meshes == [] and any("M3GMnotthere" in w for w in ghost.warnings)
    ghost2 = level.objects[-2]
    assert [m.name for m in ghost2.meshes] == ["plain"] and any("M3GMnotthere" in w for w in ghost2.warnings)
    assert sum("M3GMnotthere" in w for w in level.warnings) == 1  # the level's list names it once
    lost = [m for o in level.objects for m in o.meshes if m.name == "lost"][0]
    assert lost.texture is None and lost.texture_name == "nowhere"


def test_generated_loose_files_one_by_one(tmp_path, scene):
    gen.write_loose(*scene, str(tmp_path))
    for name, gm in scene[0].meshes.items():
        m = read_mesh_file(str(tmp_path / f"M3GM{name}.oni"))
        assert np.array_equal(m.triangles, gen.reference_triangles(gm))
    for name, gt in scene[0].textures.items():
        t = read_texture_file(str(tmp_path / f"TXMP{name}.oni"))
        assert np.allclose(t.pixels, gen.reference_pixels(gt), atol=1e-6)


@pytest.mark.parametrize("fmt", list(gen.FORMATS.values()))
@pytest.mark.parametrize("size", [(1, 1), (3, 5), (4, 4), (17, 9), (64, 32)])
def test_decode_matches_reference(fmt, size):
    t, _ = gen.random_texture(np.random.default_rng(fmt * 100 + size[0]), "t", fmt, *size)
    assert np.allclose(textures.decode(t.raw, t.width, t.height, fmt), gen.reference_pixels(t), atol=1e-6)


@pytest.mark.parametrize("fmt", list(gen.FORMATS.values()))
@pytest.mark.parametrize("size", [(1, 1), (3, 5), (4, 4), (17, 9), (256, 64)])
def test_bytes_decode_is_the_rounded_float_decode(fmt, size):
    """decode(as_bytes=True), what the packed PNGs get, is round(255 x) of the spec's
    x / (2^n - 1) values for every texel of every format (and Texture.rgba8 with it)."""
    t, _ = gen.random_texture(np.random.default_rng(fmt * 7 + size[1]), "t", fmt, *size)
    floats = textures.decode(t.raw, t.width, t.height, fmt)
    rgba8 = textures.decode(t.raw, t.width, t.height, fmt, as_bytes=True)
    assert rgba8.dtype == np.uint8 and rgba8.shape == floats.shape
    assert np.array_equal(rgba8, np.rint(floats * 255.0)), fmt


def test_dxt1_three_colour_blocks_and_transparent_black():
    # c0 <= c1: colour 2 the mean, colour 3 transparent black; c0 > c1: two thirds
    red, blue = 0xF800, 0x001F
    blocks = struct.pack("<HHI", red, blue, 0b11100100) + struct.pack("<HHI", blue, red, 0b11100100)
    pixels = textures.decode(blocks, 8, 4, textures.DXT1)
    assert np.allclose(pixels[0, 0], [1, 0, 0, 1]) and np.allclose(pixels[0, 1], [0, 0, 1, 1])
    assert np.allclose(pixels[0, 2], [2 / 3, 0, 1 / 3, 1]) and np.allclose(pixels[0, 3], [1 / 3, 0, 2 / 3, 1])
    assert np.allclose(pixels[0, 4], [0, 0, 1, 1]) and np.allclose(pixels[0, 5], [1, 0, 0, 1])
    assert np.allclose(pixels[0, 6], [0.5, 0, 0.5, 1]) and np.allclose(pixels[0, 7], [0, 0, 0, 0])
    assert (pixels[1:, :4] == [1, 0, 0, 1]).all() and (pixels[1:, 4:] == [0, 0, 1, 1]).all()  # code 0 below


def test_dxt1_equal_endpoints_are_a_three_colour_block():
    # c0 == c1 is not c0 > c1: colour 2 is the endpoints' colour, colour 3 transparent black
    green = 0x07E0
    pixels = textures.decode(struct.pack("<HHI", green, green, 0b11100100), 4, 4, textures.DXT1)
    assert np.array_equal(pixels[0], [[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0]])
    rgba8 = textures.decode(struct.pack("<HHI", green, green, 0b11100100), 4, 4, textures.DXT1, as_bytes=True)
    assert rgba8[0].tolist() == [[0, 255, 0, 255]] * 3 + [[0, 0, 0, 0]]


@pytest.mark.parametrize("size", [(4, 4), (17, 9), (64, 32)])
def test_dxt1_blocks_with_equal_endpoints_match_the_reference(size):
    """Every third block's endpoints equal (random bytes almost never give that), the rest
    random: the decode against the per-texel reference decoder, its bytes round(255 x) of it."""
    width, height = size
    rng = np.random.default_rng(width)
    blocks = rng.integers(0, 1 << 16, (((width + 3) // 4) * ((height + 3) // 4), 4)).astype("<u2")  # c0 c1 codes
    blocks[::3, 1] = blocks[::3, 0]
    raw = blocks.tobytes()
    expected = gen.reference_pixels(gen.GenTexture("t", textures.DXT1, width, height, raw))
    equal_transparent = [(y, x) for y in range(height) for x in range(width)
                         if (y // 4 * ((width + 3) // 4) + x // 4) % 3 == 0 and expected[y, x, 3] == 0]
    assert len(equal_transparent) > 2   # code-3 texels of equal-endpoint blocks
    floats = textures.decode(raw, width, height, textures.DXT1)
    assert np.allclose(floats, expected, atol=1e-6)
    assert np.array_equal(textures.decode(raw, width, height, textures.DXT1, as_bytes=True), np.rint(floats * 255.0))


# --- bad input --------------------------------------------------------------------------------

def _level_with(tmp_path, edit, scene=None, raw=True):
    """The standard scene as a level, with `edit(instances)` applied before writing."""
    scene = scene or gen.standard_scene(np.random.default_rng(1))
    inst = gen.scene_instances(*scene)
    edit(inst)
    dat, raw_bytes = gen.container_bytes(inst, "VR31")
    path = tmp_path / "level9_Final.dat"
    path.write_bytes(dat)
    if raw:
        (tmp_path / "level9_Final.raw").write_bytes(raw_bytes)
    return str(path)


def _replace(inst, tag, edit, which=0):
    hits = [i for i, item in enumerate(inst.items) if item[0] == tag and not item[3]]
    i = hits[which]
    tag_, name, data, placeholder = inst.items[i]
    inst.items[i] = (tag_, name, edit(bytearray(data)), placeholder)
    return i


def _put(offset, fmt, value):
    def edit(data):
        struct.pack_into(fmt, data, offset, value)
        return bytes(data)
    return edit


def test_missing_raw(tmp_path):
    expect_error(_level_with(tmp_path, lambda inst: None, raw=False), "raw data file level9_Final.raw is missing",
                 "TXMPtex_")


def test_link_out_of_range(tmp_path):
    path = _level_with(tmp_path, lambda inst: _replace(inst, "M3GM", _put(0x04, "<I", (99999 << 8) | 1)))
    expect_error(path, "M3GMmesh00", "points link 0x0", "points outside the")


def test_link_to_the_wrong_tag(tmp_path):
    def edit(inst):
        oboa = [i for i, it in enumerate(inst.items) if it[0] == "OBOA"][0]
        _replace(inst, "M3GM", _put(0x1c, "<I", (oboa << 8) | 1))
    expect_error(_level_with(tmp_path, edit), "M3GMmesh00", "texture link points to", "OBOAgen", "not a TXMP")


def test_link_without_its_flag(tmp_path):
    expect_error(_level_with(tmp_path, lambda inst: _replace(inst, "M3GM", _put(0x04, "<I", 1 << 8))),
                 "points link 0x00000100")


@pytest.mark.parametrize("tag, offset, fmt", [("PNTA", 0x34, "<I"), ("VCRA", 0x14, "<I"), ("TXCA", 0x14, "<I"),
                                              ("IDXA", 0x14, "<I"), ("M3GA", 0x14, "<I"), ("OBOA", 0x16, "<H")])
def test_count_beyond_its_instance(tmp_path, tag, offset, fmt):
    big = 0xFFFF if fmt == "<H" else 0xFFFFFFFF
    message = expect_error(_level_with(tmp_path, lambda inst: _replace(inst, tag, _put(offset, fmt, big))),
                           f"count says {big} but only")
    assert "fit in the instance" in message


def test_strip_index_beyond_the_points(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    scene[0].meshes["mesh00"].strips[1] = 500
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "M3GMmesh00", "strip index 1 is vertex 500",
                 "beyond the 12 points")


def test_face_normal_index_beyond_its_array(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    scene[0].meshes["mesh00"].face_indices[2] = 77
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "M3GMmesh00", "face normal index 2 is 77")


def test_too_few_face_normal_indices(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    m = scene[0].meshes["mesh00"]
    m.face_indices = m.face_indices[:2]
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "M3GMmesh00", "2 face normal indices for")


def test_short_strip_and_missing_start(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    m = scene[0].meshes["mesh00"]
    m.strips = np.array([-0x80000000, 1, -0x7FFFFFFE, 3, 4], np.int32)
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "the strip at index 0 has 2 indices")
    m.strips = np.array([0, 1, 2], np.int32)
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "do not begin with a strip start")


def test_vertex_arrays_of_different_lengths(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    m = scene[0].meshes["mesh00"]
    m.uvs = m.uvs[:-1]
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "11 texture coordinates for 12 points")


def test_pixels_beyond_the_raw_data(tmp_path):
    path = _level_with(tmp_path, lambda inst: _replace(inst, "TXMP", _put(0x94, "<I", 0x7FFFFFF0)))
    expect_error(path, "TXMPtex_bgra4444_0", "pixels", "raw data at 2147483632", "outside level9_Final.raw")


def test_pixels_beyond_the_oni_raw_table(tmp_path, scene):
    gen.write_loose(*scene, str(tmp_path))
    path = tmp_path / "TXMPtex_rgba_0.oni"
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 0x34, 16)  # raw-table size
    path.write_bytes(bytes(data))
    expect_error(str(path), "TXMPtex_rgba_0", "outside the raw table (16 bytes)", reader=read_texture_file)


@pytest.mark.parametrize("fmt", [3, 10, 0xFFFFFFFF])
def test_unknown_texture_format(tmp_path, fmt):
    expect_error(_level_with(tmp_path, lambda inst: _replace(inst, "TXMP", _put(0x88, "<I", fmt))),
                 f"unknown texture format {fmt}")


@pytest.mark.parametrize("offset", [0x84, 0x86])
def test_zero_size_texture(tmp_path, offset):
    expect_error(_level_with(tmp_path, lambda inst: _replace(inst, "TXMP", _put(offset, "<H", 0))),
                 "zero-size texture")


def test_short_instances(tmp_path):
    for tag in ("TXMP", "M3GM", "OBOA", "M3GA", "PNTA"):
        expect_error(_level_with(tmp_path, lambda inst: _replace(inst, tag, lambda d: bytes(d[:0x10]))),
                     "too short")


def test_no_oboa_and_wrong_kinds(tmp_path):
    expect_error(os.path.join(DATA, "oni", "M3GMobj00_part0.oni"), "holds no object setup array (OBOA)")
    expect_error(os.path.join(DATA, "oni", "TXMPtex00_bgra4444.oni"), "holds no mesh (M3GM)", reader=read_mesh_file)
    expect_error(os.path.join(DATA, "oni", "M3GMobj00_part0.oni"), "holds no texture (TXMP)",
                 reader=read_texture_file)


def test_not_a_file(tmp_path):
    expect_error(str(tmp_path), "is a directory")
    expect_error(str(tmp_path / "nothing.dat"), "cannot be read")


def test_loose_mesh_without_its_texture_file(tmp_path):
    shutil.copy(os.path.join(DATA, "oni", "M3GMobj00_part0.oni"), tmp_path)
    mesh = read_mesh_file(str(tmp_path / "M3GMobj00_part0.oni"))
    assert mesh.texture is None and mesh.texture_name == "tex00_bgra4444"


def test_non_finite_placement(tmp_path):
    path = _level_with(tmp_path, lambda inst: _replace(inst, "OBOA", _put(0x18 + 0x24, "<f", float("nan"))))
    expect_error(path, "(OBOAgen) object 0: non-finite value in its position")


def test_non_finite_points(tmp_path):
    scene = gen.standard_scene(np.random.default_rng(1))
    scene[0].meshes["mesh00"].points[3, 1] = np.inf
    expect_error(_level_with(tmp_path, lambda inst: None, scene), "M3GMmesh00", "non-finite value in its points")


def test_wrong_tag_says_an_oban(tmp_path):
    def edit(inst):
        texture = [i for i, it in enumerate(inst.items) if it[0] == "TXMP"][0]
        oboa = [i for i, it in enumerate(inst.items) if it[0] == "OBOA"][0]
        data = bytearray(inst.items[oboa][2])
        struct.pack_into("<I", data, 0x18 + 0xF0 * 1 + 4, (texture << 8) | 1)  # object 1's animation
        inst.items[oboa] = inst.items[oboa][:2] + (bytes(data), False)
    expect_error(_level_with(tmp_path, edit), "object 1 animation link points to", "not an OBAN")


def test_reading_seeks_instead_of_copying(tmp_path, monkeypatch):
    """A level (beyond library.IN_MEMORY, as every game level is) is read piecewise: no single
    read is larger than its largest instance (here an OBAN of many keys) or a texture's first
    level."""
    scene = gen.standard_scene(np.random.default_rng(2))
    path = gen.write_level(*scene, str(tmp_path))
    sizes = []
    real = open

    class Spy:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            data = self.f.read(n)
            sizes.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    import oban_import.core.files as files
    import oban_import.oni.io.container.library as library
    monkeypatch.setattr(files, "open", lambda *a, **k: Spy(real(*a, **k)), raising=False)
    monkeypatch.setattr(library, "IN_MEMORY", os.path.getsize(path) - 1)
    level = read_objects(path)
    assert len(level.objects) == len(scene[0].objects) and sizes
    largest = max(max(len(it[2]) + 8 for it in gen.scene_instances(*scene).items),
                  max(len(t.raw) for t in scene[0].textures.values()))
    assert max(sizes) <= largest < os.path.getsize(path) / 2
    assert sum(sizes) < 2 * (os.path.getsize(path) + os.path.getsize(path[:-4] + ".raw"))


def test_placeholder_names_cannot_leave_the_folder(tmp_path):
    """A placeholder named 'TXMP/../../outside/TXMPt' is not looked for outside the folder."""
    rng = np.random.default_rng(4)
    scene = gen.Scene()
    t, raw = gen.random_texture(rng, "/../../outside/TXMPt", 7, 4, 4)
    scene.textures[t.name] = t
    scene.meshes["m"] = gen.random_mesh(rng, "m", t.name)
    scene.objects.append(gen.GenObject("o", ["m"]))
    folder = tmp_path / "a" / "b"
    (folder / "TXMP").mkdir(parents=True)
    (tmp_path / "a" / "outside").mkdir()
    gen.write_loose(scene, {t.name: raw}, str(folder))
    assert (tmp_path / "a" / "outside" / "TXMPt.oni").exists()  # where the name leads
    level = read_objects(str(folder / "OBOAgen.oni"))
    mesh = level.objects[0].meshes[0]
    assert mesh.texture is None and mesh.texture_name == t.name
    assert any("not found" in w for w in level.warnings)


def test_data_table_padding_onisplit_leaves_unwritten(tmp_path):
    """OniSplit rounds a .oni's data-table size up to 32 without writing the padding (the
    M3GM samples end 16 bytes early): tolerated below 32 bytes, an error from 32 on."""
    data = bytearray(open(os.path.join(DATA, "oni", "M3GMobj02_part1.oni"), "rb").read())
    start, size = struct.unpack_from("<II", data, 0x20)
    assert start + size - len(data) == 16
    assert read_mesh_file(str(_write_bytes(tmp_path / "M3GMa.oni", data))).name == "obj02_part1"
    struct.pack_into("<I", data, 0x24, len(data) - start + 32)
    expect_error(str(_write_bytes(tmp_path / "M3GMb.oni", data)), "data table at byte 256", "lies outside the file",
                 reader=read_mesh_file)


def _write_bytes(path, data):
    path.write_bytes(bytes(data))
    return path


def test_the_oban_reader_reads_the_objects_level():
    from oban_import.oni.io.oban.read import read_file
    names = sorted(a.name for a in read_file(LEVEL))
    assert names == sorted(e["animation"] for e in EXPECTED["objects"] if e["animation"])
    assert names == sorted(a.name for a in read_objects(LEVEL).animations)


def test_a_required_array_link_0(tmp_path):
    """A mesh whose points link is 0 (no link at all): the whole message of docs/bad_input.md."""
    path = _level_with(tmp_path, lambda inst: _replace(inst, "M3GM", _put(0x04, "<I", 0)))
    assert expect_error(path) == f"{path}: instance 7 (M3GMmesh00): no points (link 0)"
