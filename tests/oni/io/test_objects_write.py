"""The mesh and texture writers (oni/io/objects/mesh_write.py, texture_write.py; docs/objects.md
9): OniSplit's own files read and written back byte for byte; triangles made into strips the
reader turns back into them; the encoders, the mipmap filter and PNTA's bounds against slow
transliterations of OniSplit's code; what cannot be written refused with an ObanError."""

import glob
import io
import os

import numpy as np
import pytest
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import M3GM_TAG, Container
from oban_import.oni.io.objects import meshes, textures
from oban_import.oni.io.objects.mesh_write import bounds, mesh_file_bytes, triangle_strips
from oban_import.oni.io.objects.read import read_mesh_file, read_texture_file
from oban_import.oni.io.objects.texture_write import (encode, level_sizes, lossless, mip_levels, onisplit_flags,
                                                      texture_file_bytes)

MESHES = sorted(glob.glob(os.path.join(DATA, "objects", "oni", "M3GM*.oni")))
TEXTURES = sorted(glob.glob(os.path.join(DATA, "objects", "oni", "TXMP*.oni"))
                  + glob.glob(os.path.join(DATA, "characters", "oni", "TXMP*.oni")))
# OniSplit made these mipmaps from its 8-bit source image; the reader gives the first level's
# 4 or 5 bits a channel, whose mipmaps are not the same: only their header and first level are.
MIPMAPS_NOT_FROM_THE_FIRST_LEVEL = {"TXMPtex00_bgra4444.oni", "TXMPtex02_bgra5551.oni"}
F32 = np.float32


def stored_arrays(c, index):
    """{field: (instance data, items)} of the six arrays of the M3GM at `index` of `c`."""
    links = meshes.parse_links(c.instance(index, M3GM_TAG)[0], meshes.M3GM_LINKS_OFFSET, 6, c.path, "")
    arrays = {}
    for (field, tag), value in zip(meshes.M3GM_LINKS, links):
        data = c.instance(c.link(value, tag, index, field), tag)[0]
        arrays[field] = data, meshes.parse_array(data, tag, c.path, "")
    return arrays


def stored_strips(path):
    """The strips, face normals and face normal indices of a loose M3GM as stored."""
    with open(path, "rb") as f:
        arrays = stored_arrays(Container(f, path, os.path.getsize(path)), 0)
    return [arrays[field][1] for field in ("triangle strips", "face normals", "face normal indices")]


# --- OniSplit's files back -----------------------------------------------------------------------

def test_the_samples_are_all_there():
    assert (len(MESHES), len(TEXTURES)) == (12, 9)


@pytest.mark.parametrize("path", MESHES, ids=os.path.basename)
def test_sample_mesh_written_back_is_onisplit_bytes(path):
    mesh = read_mesh_file(path)
    data = mesh_file_bytes(mesh.name, mesh.points, mesh.normals, mesh.uvs, *stored_strips(path), mesh.texture_name)
    assert data == open(path, "rb").read()


def test_character_body_meshes_arrays_are_onisplit_bytes():
    """The 19 unnamed M3GMs of OniSplit's -create:trbs (inside TRBSchar0.oni): written from their
    arrays, each array instance is the same bytes (the M3GM's own links differ with the file)."""
    path = os.path.join(DATA, "characters", "oni", "TRBSchar0.oni")
    with open(path, "rb") as f:
        c = Container(f, path, os.path.getsize(path))
        parts = [stored_arrays(c, int(index)) for index in c.indices(M3GM_TAG)]
    assert len(parts) == 19
    for arrays in parts:
        items = {field: values for field, (_, values) in arrays.items()}
        data = mesh_file_bytes("part", items["points"], items["vertex normals"], items["texture coordinates"],
                               items["triangle strips"], items["face normals"], items["face normal indices"], None)
        ours = Container(io.BytesIO(data), "ours", len(data))
        assert [ours.instance(k, ours.tag_of(k))[0] for k in range(1, 7)] == [d for d, _ in arrays.values()]


@pytest.mark.parametrize("path", TEXTURES, ids=os.path.basename)
def test_sample_texture_written_back_is_onisplit_bytes(path):
    """Every format; with mipmaps the BGR ones too (their w x 1 levels hold OniSplit's doubled,
    wrapped means); the 16-bit ones with mipmaps up to the end of their first level."""
    t = read_texture_file(path)
    assert lossless(t.rgba8, t.format)
    data, original = texture_file_bytes(t.name, t.rgba8, t.format, t.flags), open(path, "rb").read()
    if os.path.basename(path) not in MIPMAPS_NOT_FROM_THE_FIRST_LEVEL:
        assert data == original
        return
    first_level_end = len(original) - sum(textures.pixel_bytes(w, h, t.format)
                                          for w, h in level_sizes(t.width, t.height)[1:])
    assert len(data) == len(original) and data[:first_level_end] == original[:first_level_end]
    assert data[first_level_end:] != original[first_level_end:]


# --- triangles to strips -------------------------------------------------------------------------

def random_triangles(rng, count=300, points=80):
    """Quads (two consecutive triangles), quads wound against each other, lone and degenerate
    triangles, in random order."""
    p = rng.normal(0, 10, (points, 3)).astype(F32)
    out = []
    for kind in rng.integers(0, 4, count):
        a, b, c, d = (int(v) for v in rng.choice(points, 4, replace=False))
        out += {0: [(a, b, c), (a, c, d)], 1: [(a, b, c), (a, d, c)], 2: [(a, b, c)], 3: [(a, a, b)]}[int(kind)]
    return p, np.array(out, np.int32)


@pytest.mark.parametrize("seed", range(5))
def test_triangle_strips_give_the_triangles_back(tmp_path, seed):
    rng = np.random.default_rng(seed)
    points, triangles = random_triangles(rng)
    n = len(points)                                              # a sliver: float32 alone would misjudge it
    points = np.concatenate([points, np.array([[0, 0, 0], [1e-6, 0, 0], [0, 1e-30, 0]], F32)])
    triangles = np.concatenate([triangles, [[n, n + 1, n + 2], [n + 2, n + 1, n]]]).astype(np.int32)
    strips, face_normals, face_indices = triangle_strips("strips", points, triangles)
    path = tmp_path / "M3GMstrips.oni"
    path.write_bytes(mesh_file_bytes("strips", points, np.zeros_like(points), points[:, :2], strips, face_normals,
                                     face_indices, None))
    back = read_mesh_file(str(path)).triangles
    assert (np.stack([np.roll(triangles, -r, axis=1) for r in range(3)]) == back).all(axis=2).any(axis=0).all()
    length = np.linalg.norm(face_normals, axis=1)
    degenerate = (triangles[:, 0] == triangles[:, 1]) | (triangles[:, 1] == triangles[:, 2])
    assert np.allclose(length[~degenerate], 1) and (length[degenerate] == 0).all()
    sizes = np.diff(np.append(np.flatnonzero(strips < 0), len(strips)))
    assert set(sizes.tolist()) == {3, 4} and sizes.sum() == 3 * len(triangles) - 2 * np.count_nonzero(sizes == 4)


def test_quads_make_strips_of_four():
    quad = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], F32)
    strips, _, _ = triangle_strips("quad", quad, [[0, 1, 2], [0, 2, 3], [0, 1, 2]])
    assert strips.tolist() == [1 - 2 ** 31, 2, 0, 3, -2 ** 31, 1, 2]
    assert triangle_strips("quad", quad, np.zeros((0, 3), np.int32))[0].shape == (0,)


# --- PNTA's bounds -------------------------------------------------------------------------------

def reference_bounds(points):
    """OniSplit's BoundingBox/BoundingSphere.CreateFromPoints, one point at a time in float32."""
    low, high, total = [F32(3.4028235e38)] * 3, [F32(-3.4028235e38)] * 3, [F32(0)] * 3
    for p in points:
        low = [v if v < q else q for v, q in zip(low, p)]
        high = [v if v > q else q for v, q in zip(high, p)]
        total = [t + q for t, q in zip(total, p)]
    centre = [t * (F32(1) / F32(len(points))) for t in total]
    radius = F32(0)
    for p in points:
        d = [q - c for q, c in zip(p, centre)]
        radius = max(radius, d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    return np.array(low + high + centre + [F32(np.sqrt(np.float64(radius)))], F32)


@pytest.mark.parametrize("seed", range(4))
def test_bounds_are_onisplit_float32_ones(seed):
    rng = np.random.default_rng(seed)
    points = rng.normal(0, 100, (int(rng.integers(1, 60)), 3)).astype(F32)
    points[rng.random(points.shape) < 0.2] = 0
    points[rng.random(points.shape) < 0.2] = -0.0                  # which zero: the last point's
    assert bounds(points).tobytes() == reference_bounds(points).tobytes()


# --- the encoders and the filter -----------------------------------------------------------------

def reference_texel(rgba, fmt):
    """OniSplit's Color.Write* of one pixel, as the little-endian value stored."""
    r, g, b, a = (int(v) for v in rgba)
    if fmt == 0:
        return ((b >> 4) | (g & 0xF0)) | ((r >> 4) | (a & 0xF0)) << 8
    alpha = (a & 0x80) if fmt == 2 else 0x80
    return ((b >> 3) | ((g & 0x38) << 2)) | ((g >> 6) | ((r & 0xF8) >> 1) | alpha) << 8


@pytest.mark.parametrize("fmt", [0, 1, 2])
def test_16_bit_encoders_are_onisplit_ones(fmt):
    rgba = np.random.default_rng(fmt).integers(0, 256, (9, 7, 4), dtype=np.uint8)
    words = np.frombuffer(encode(rgba, fmt), "<u2").reshape(9, 7)
    assert words.tolist() == [[reference_texel(p, fmt) for p in row] for row in rgba]


def test_lossless_formats():
    grid4 = np.arange(16, dtype=np.uint8) * 17
    rgba = np.stack(np.meshgrid(grid4, grid4), -1).reshape(16, 16, 2)[..., [0, 1, 0, 1]]
    assert lossless(rgba, 0) and not lossless(rgba + np.uint8(1), 0)
    grid5 = textures.decode(np.arange(32 * 32, dtype="<u2").tobytes(), 32, 32, 1, as_bytes=True)
    assert lossless(grid5, 1) and not lossless(grid5[::-1] - np.uint8(1), 1)
    opaque = grid5.copy()
    opaque[0, 0, 3] = 254
    assert not lossless(opaque, 1) and not lossless(opaque, 8) and lossless(opaque, 7)
    assert lossless(grid5, 2) and lossless(grid5, 8)
    opaque[0, 0, 3] = 0
    assert lossless(opaque, 2) and not lossless(opaque, 1)


@pytest.mark.parametrize("seed", range(3))
def test_decoded_dxt1_is_encoded_back_to_itself(seed):
    """Any DXT1 blocks (four-colour, three-colour with transparent texels), decoded by the
    reader: the writer holds them exactly, and re-encoding them gives the same pixels."""
    words = np.random.default_rng(seed).integers(0, 2 ** 32, (32 * 16, 2), dtype=np.uint64).astype("<u4")
    if seed == 1:                                                  # endpoints one step apart
        words[:, 0] = (words[:, 0] & 0xFFFF) * 0x10001 ^ (words[:, 1] & 3) << 16
    pixels = textures.decode(words.tobytes(), 128, 64, 9, as_bytes=True)
    assert lossless(pixels, 9)


def test_dxt1_transparent_texels_and_a_gradient():
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[..., 0] = np.arange(8) * 36
    rgba[..., 3] = 255
    rgba[2, 3, 3] = 127
    back = textures.decode(encode(rgba, 9), 8, 8, 9, as_bytes=True).astype(int)
    assert back[2, 3].tolist() == [0, 0, 0, 0] and (back[..., 3].sum() == 255 * 63)
    error = np.where(back[..., 3] > 0, np.abs(back[..., 0] - rgba[..., 0]), 0)
    assert error[:4, :4].max() <= 19 and error[4:].max() <= 4 and error[:, 4:].max() <= 4   # 3 colours, 4


def reference_resize(image, width, height):
    """OniSplit's Surface.Resize, one pixel at a time in float32 (Halfsize where both sides halve)."""
    def v(x, y):
        return image[y, x].astype(F32) * (F32(1) / F32(255))

    def byte(value):
        return np.array([int(c * F32(255)) & 0xFF for c in value], np.uint8)

    out = np.zeros((height, width, 4), np.uint8)
    h, w = image.shape[:2]
    if 2 * width == w and 2 * height == h:
        for i in range(height):
            for j in range(width):
                out[i, j] = byte((((v(2 * j, 2 * i) + v(2 * j + 1, 2 * i)) + v(2 * j, 2 * i + 1))
                                  + v(2 * j + 1, 2 * i + 1)) * F32(0.25))
        return out
    sx, sy = F32(w) / F32(width), F32(h) / F32(height)
    for i in range(height):
        y0 = F32(i) * sy
        y1 = y0 + sy
        top, bottom = int(y0), int(y1 - F32(0.001))
        wt, wb = F32(1) - (y0 - F32(top)), y1 - F32(bottom)
        for j in range(width):
            x0 = F32(j) * sx
            x1 = x0 + sx
            left, right = int(x0), int(x1 - F32(0.001))
            wl, wr = F32(1) - (x0 - F32(left)), x1 - F32(right)
            total = v(left, top) * (wl * wt)
            total = total + v(right, top) * (wr * wt)
            total = total + v(left, bottom) * (wl * wb)
            total = total + v(right, bottom) * (wr * wb)
            for k in range(top + 1, bottom):
                total = total + v(left, k) * wl
                total = total + v(right, k) * wr
            for m in range(left + 1, right):
                total = total + v(m, top) * wt
                total = total + v(m, bottom) * wb
            for k in range(top + 1, bottom):
                for m in range(left + 1, right):
                    total = total + v(m, k)
            out[i, j] = byte(total * (F32(1) / ((x1 - x0) * (y1 - y0))))
    return out


@pytest.mark.parametrize("size", [(8, 8), (16, 2), (1, 8), (12, 5), (7, 3), (3, 1), (37, 23)])
def test_mipmaps_are_onisplit_filter(size):
    w, h = size
    rgba = np.random.default_rng(w * h).integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgba[0, 0, 3] = 0
    levels, expected = mip_levels(rgba), [rgba]
    for lw, lh in level_sizes(w, h)[1:]:
        expected.append(reference_resize(expected[-1], lw, lh))
    assert [lv.shape[:2] for lv in levels] == [(lh, lw) for lw, lh in level_sizes(w, h)]
    for ours, theirs in zip(levels, expected):
        assert np.array_equal(ours, theirs)


def test_opaque_pixels_keep_opaque_mipmaps():
    """OniSplit drops the alpha of an image without transparent pixels: a w x 1 level keeps 255
    (its filter would wrap 255 + 255 to 254)."""
    rgba = np.full((1, 8, 4), 255, np.uint8)
    assert all((level[..., 3] == 255).all() for level in mip_levels(rgba))
    rgba[0, 0, 3] = 254
    assert mip_levels(rgba)[1][0, 1, 3] == 254


def test_onisplit_flags():
    assert onisplit_flags(0x04, 7, True) == 0x05
    assert onisplit_flags(0x1000 | 0x200 | 0x01, 0, False) == 0x1000
    assert onisplit_flags(0, 9, True, env_map=True) == 0x1201


# --- refused -------------------------------------------------------------------------------------

def mesh_error(*arrays, name="m", texture=None):
    with pytest.raises(ObanError) as info:
        mesh_file_bytes(name, *arrays, texture)
    return str(info.value)


def test_meshes_that_cannot_be_written():
    p, n, uv = np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 2))
    strips, fn, fi = triangle_strips("m", p, [[0, 1, 2]])
    assert "2 texture coordinates for 3 points" in mesh_error(p, n, uv[:2], strips, fn, fi)
    assert "have shape (3, 2), not (n, 3)" in mesh_error(p[:, :2], n, uv, strips, fn, fi)
    assert "non-finite value in its vertex normals" in mesh_error(p, n + np.inf, uv, strips, fn, fi)
    assert "at least one point" in mesh_error(p[:0], n[:0], uv[:0], strips[:0], fn[:0], fi[:0])
    assert "beyond the 3 points" in mesh_error(p, n, uv, np.array([-2 ** 31, 1, 5]), fn, fi)
    assert "do not begin with a strip start" in mesh_error(p, n, uv, np.array([0, 1, 2]), fn, fi)
    assert "outside Latin-1" in mesh_error(p, n, uv, strips, fn, fi, name="\u0101")
    assert "65 characters with its tag" in mesh_error(p, n, uv, strips, fn, fi, texture="x" * 61)
    with pytest.raises(ObanError, match="M3GMm: a triangle's vertex index outside the 3 points"):
        triangle_strips("m", p, [[0, 1, 3]])
    with pytest.raises(ObanError, match="and type float64, not \\(k, 3\\) integers"):
        triangle_strips("m", p, [[0.0, 1.0, 2.0]])


def test_points_beyond_the_world_are_refused(tmp_path):
    """A coordinate of at most 4096 (float32) in size is written, the next float32 past it on any
    axis refused, naming the mesh, the point and where it lies."""
    edge = np.float32(4096)
    points = np.array([[edge, 0, -edge], [0, edge, 0], [-edge, -edge, edge]], np.float32)
    n, uv = np.zeros((3, 3)), np.zeros((3, 2))
    strips, fn, fi = triangle_strips("m", points, [[0, 1, 2]])
    (tmp_path / "M3GMm.oni").write_bytes(mesh_file_bytes("m", points, n, uv, strips, fn, fi, None))
    assert read_mesh_file(str(tmp_path / "M3GMm.oni")).points.tobytes() == points.tobytes()
    for axis, side in ((0, 1), (1, -1), (2, 1)):
        far = points.copy()
        far[2, axis] = side * np.nextafter(edge, np.float32(np.inf))
        where = ", ".join(f"{v:.9g}" for v in far[2].tolist())
        assert mesh_error(far, n, uv, strips, fn, fi) == (
            f"M3GMm: point 2 lies at ({where}), beyond 4096 units from the origin on an axis, where the game's world "
            "ends (1 such)")


@pytest.mark.parametrize("shape, fmt, flags, message", [
    ((4, 70000, 4), 7, 0, "a 70000 x 4 texture: width and height must be 1 to 65535"),
    ((0, 4, 4), 7, 0, "a 4 x 0 texture"),
    ((4, 6, 4), 9, 0, "its 6 x 4 level is not whole 4 x 4 blocks"),
    ((12, 12, 4), 9, 1, "with mipmaps: its 6 x 6 level"),
    ((4, 4, 3), 7, 0, "not (height, width, 4) uint8"),
    ((4, 4, 4), 5, 0, "unknown texture format 5"),
])
def test_textures_that_cannot_be_written(shape, fmt, flags, message):
    with pytest.raises(ObanError) as info:
        texture_file_bytes("t", np.zeros(shape, np.uint8), fmt, flags)
    assert message in str(info.value) and info.value.path == "TXMPt"


def test_dxt1_sizes_that_can_be_written():
    for w, h, flags in ((2, 1, 0), (12, 8, 0), (64, 8, 1), (1, 1, 1)):
        assert texture_file_bytes("t", np.zeros((h, w, 4), np.uint8), 9, flags)
