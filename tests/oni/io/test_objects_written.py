"""The mesh and texture writers against OniSplit itself (tests/data/objects_written, its
README says how each file was made): what OniSplit v0.9.99.2 read back from the files the
writers wrote (its XML, OBJ and PNG exports) equals what the writers were given, and OniSplit's
own -create:txmp of the same pixels gives the writer's bytes. No Mono needed: OniSplit's outputs
are stored; the inputs are made again here (no random generator: integer hashing only)."""

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hashed import hashed
from onisplit_readings import assert_same_faces, mesh_corners, onisplit_bytes, read_obj, xml_numbers
from paths import DATA
from pngs import read_png

from oban_import.core.tga import tga_bytes
from oban_import.oni.io.objects import textures
from oban_import.oni.io.objects.mesh_write import mesh_file_bytes, triangle_strips
from oban_import.oni.io.objects.read import read_mesh_file
from oban_import.oni.io.objects.texture_write import encode, lossless, onisplit_flags, texture_file_bytes

HERE = os.path.join(DATA, "objects_written")
BGRA4444, BGR555, BGRA5551, RGBA, BGR, DXT1 = 0, 1, 2, 7, 8, 9
NO_U_WRAP, NO_V_WRAP, ADDITIVE = 0x04, 0x08, 0x400


# --- the inputs --------------------------------------------------------------------------------

def grid_mesh():
    """A 5 x 4 grid of points (4 x 3 quads, each two consecutive triangles), then a triangle
    wound against its neighbour, a lone triangle and a degenerate one (its corners on a line)."""
    ys, xs = np.mgrid[0:4, 0:5]
    lift = hashed((4, 5), 1).astype(np.float64) / 37
    points = np.stack([xs * 7.25 - 3, ys * 5.5 + 1.125, lift], axis=-1).reshape(-1, 3)
    points = np.concatenate([points, [[40.5, 3.25, -2.0], [44.0, 9.75, 1.5], [47.5, 3.25, 0.25],
                                      [0, 30, 0], [5, 35, 0], [10, 40, 0]]])
    quads = []
    for y in range(3):
        for x in range(4):
            a, b, c, d = 5 * y + x, 5 * y + x + 1, 5 * (y + 1) + x + 1, 5 * (y + 1) + x
            quads += [(a, b, c), (a, c, d)]
    triangles = np.array(quads + [(19, 20, 21), (20, 19, 22), (23, 24, 25)], np.int32)
    n = len(points)
    normals = hashed((n, 3), 2).astype(np.float64) / 255 - 0.5
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    uvs = hashed((n, 2), 3).astype(np.float64) / 64 - 1     # -1 .. 3, beyond the image too
    return points.astype(np.float32), normals.astype(np.float32), uvs.astype(np.float32), triangles


def moved_sample():
    """The sample mesh obj05_part0 with every point moved (its triangles, normals and UVs kept)."""
    mesh = read_mesh_file(os.path.join(DATA, "objects", "oni", "M3GMobj05_part0.oni"))
    shift = hashed(mesh.points.shape, 4).astype(np.float32) / np.float32(100)
    return mesh, (mesh.points + np.float32([1.5, -2.25, 0.75]) + shift).astype(np.float32)


def mesh_cases():
    """name: (points, normals, uvs, triangles, texture name)."""
    points, normals, uvs, triangles = grid_mesh()
    mesh, moved = moved_sample()
    return {"written_grid": (points, normals, uvs, triangles, "ours_rgba"),
            "obj05_moved": (moved, mesh.normals, mesh.uvs, mesh.triangles, mesh.texture_name)}


def mesh_bytes(name, case):
    points, normals, uvs, triangles, texture = case
    return mesh_file_bytes(name, points, normals, uvs, *triangle_strips(name, points, triangles), texture)


def on_grid(width, height, fmt, salt):
    """Pixels `fmt` holds exactly: hashed bytes (alpha too) encoded and decoded."""
    rgba = hashed((height, width, 4), salt)
    return textures.decode(encode(rgba, fmt), width, height, fmt, as_bytes=True)


def gradient(width, height):
    rgba = np.full((height, width, 4), 255, np.uint8)
    rgba[..., 0] = np.arange(width)[None] * 255 // (width - 1)
    rgba[..., 1] = np.arange(height)[:, None] * 255 // (height - 1)
    rgba[..., 2] = (np.arange(width)[None] * 3 + np.arange(height)[:, None] * 5) % 256
    return rgba


def texture_cases():
    """name: (pixels, format, flags, environment map): pixels the format holds, but the last."""
    return {
        "ours_bgra4444": (on_grid(32, 16, BGRA4444, 10), BGRA4444, onisplit_flags(NO_U_WRAP, BGRA4444, True), None),
        "ours_bgr555": (on_grid(16, 16, BGR555, 11), BGR555, onisplit_flags(0, BGR555, False), None),
        "ours_bgra5551": (on_grid(16, 8, BGRA5551, 12), BGRA5551, onisplit_flags(NO_V_WRAP, BGRA5551, True), None),
        "ours_rgba": (on_grid(16, 16, RGBA, 13), RGBA, onisplit_flags(ADDITIVE, RGBA, True), None),
        "ours_bgr": (on_grid(8, 8, BGR, 14), BGR, onisplit_flags(0, BGR, True, env_map=True), "ours_rgba"),
        "ours_dxt1": (on_grid(32, 16, DXT1, 15), DXT1, onisplit_flags(0, DXT1, True), None),
        "ours_dxt1_lossy": (gradient(16, 16), DXT1, onisplit_flags(0, DXT1, False), None),
    }


def texture_bytes(name, case):
    rgba, fmt, flags, env_map = case
    return texture_file_bytes(name, rgba, fmt, flags, env_map)


def same_cases():
    """name: (pixels, format, mipmaps) given to both OniSplit (as in/NAME.tga) and the writer."""
    def alpha(rgba, salt):   # a quarter of the pixels with a hashed alpha, the rest opaque
        rgba = rgba.copy()
        rgba[..., 3] = np.where(hashed(rgba.shape[:2], salt) < 64, hashed(rgba.shape[:2], salt + 1), 255)
        return rgba

    def opaque(rgba):
        rgba = rgba.copy()
        rgba[..., 3] = 255
        return rgba

    return {
        "same_bgra4444": (alpha(hashed((8, 32, 4), 20), 40), BGRA4444, True),
        "same_bgr555": (hashed((16, 16, 4), 21), BGR555, False),
        "same_bgra5551": (alpha(hashed((32, 16, 4), 22), 42), BGRA5551, True),
        "same_rgba": (alpha(hashed((4, 64, 4), 23), 44), RGBA, True),
        "same_bgr": (opaque(hashed((32, 8, 4), 24)), BGR, True),
        "same_odd_rgba": (alpha(hashed((5, 12, 4), 25), 46), RGBA, True),
        "same_dxt1": (opaque(hashed((16, 32, 4), 26)), DXT1, True),
        "same_dxt1_gradient": (gradient(32, 32), DXT1, True),
    }


def same_bytes(name, case):
    rgba, fmt, mipmaps = case
    return texture_file_bytes(name, rgba, fmt, onisplit_flags(0, fmt, mipmaps))


def write_inputs(folder):
    """The files OniSplit was given: ours/*.oni (the writers' output) and in/*.tga."""
    for sub in ("ours", "in"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    for name, case in mesh_cases().items():
        open(os.path.join(folder, "ours", f"M3GM{name}.oni"), "wb").write(mesh_bytes(name, case))
    for name, case in texture_cases().items():
        open(os.path.join(folder, "ours", f"TXMP{name}.oni"), "wb").write(texture_bytes(name, case))
    for name, (rgba, _, _) in same_cases().items():
        open(os.path.join(folder, "in", f"{name}.tga"), "wb").write(tga_bytes(rgba[::-1]))


def stored(*parts):
    return open(os.path.join(HERE, *parts), "rb").read()


# --- the files OniSplit was given are what the writers write -----------------------------------

@pytest.mark.parametrize("name", sorted(mesh_cases()))
def test_our_meshes_are_the_writers_bytes(name):
    assert mesh_bytes(name, mesh_cases()[name]) == stored("ours", f"M3GM{name}.oni")


@pytest.mark.parametrize("name", sorted(texture_cases()))
def test_our_textures_are_the_writers_bytes(name):
    case = texture_cases()[name]
    assert lossless(case[0], case[1]) == (name != "ours_dxt1_lossy")
    assert texture_bytes(name, case) == stored("ours", f"TXMP{name}.oni")


@pytest.mark.parametrize("name", sorted(same_cases()))
def test_the_images_given_to_onisplit(name):
    assert tga_bytes(same_cases()[name][0][::-1]) == stored("in", f"{name}.tga")


# --- OniSplit's -create:txmp of the same pixels ------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n, case in same_cases().items() if case[1] != DXT1))
def test_onisplit_creates_the_writers_bytes(name):
    """Every format but DXT1, mipmaps made by OniSplit's filter (both sides halving, a side of 1,
    odd sides of 12 x 5), n-bit channels truncated: the same file, byte for byte."""
    assert same_bytes(name, same_cases()[name]) == stored("created", f"TXMP{name}.oni")


@pytest.mark.parametrize("name", sorted(n for n, case in same_cases().items() if case[1] == DXT1))
def test_onisplit_dxt1_blocks_are_ours_or_worse(name):
    """The DXT1 writer starts from OniSplit's block, bit for bit (private _onisplit_blocks, checked
    at every level), and writes another only where it decodes strictly closer to the pixels."""
    from oban_import.oni.io.objects.texture_write import _onisplit_blocks, mip_levels

    rgba = same_cases()[name][0]
    ours, theirs = same_bytes(name, same_cases()[name]), stored("created", f"TXMP{name}.oni")
    assert len(ours) == len(theirs)
    at = len(ours) - sum(textures.pixel_bytes(lv.shape[1], lv.shape[0], DXT1) for lv in mip_levels(rgba))
    assert ours[:at] == theirs[:at]
    for level in mip_levels(rgba):
        blocks = padded_blocks(level)
        count = len(blocks)
        our_words = np.frombuffer(ours, "<u4", 2 * count, at).reshape(-1, 2)
        their_words = np.frombuffer(theirs, "<u4", 2 * count, at).reshape(-1, 2)
        emulated, _ = _onisplit_blocks(blocks, blocks[..., :3].astype(np.int32), blocks[..., 3] >= 128)
        assert np.array_equal(emulated, their_words), level.shape
        changed = ~(our_words == their_words).all(axis=1)
        assert (block_error(our_words, blocks) < block_error(their_words, blocks))[changed].all(), level.shape
        at += 8 * count
    assert at == len(ours)


def padded_blocks(level):
    """(n, 16, 4) texels of each 4 x 4 block, row by row, padded with opaque black."""
    h, w = level.shape[:2]
    bh, bw = (h + 3) // 4, (w + 3) // 4
    padded = np.zeros((4 * bh, 4 * bw, 4), np.uint8)
    padded[..., 3] = 255
    padded[:h, :w] = level
    return padded.reshape(bh, 4, bw, 4, 4).transpose(0, 2, 1, 3, 4).reshape(-1, 16, 4)


def block_error(words, blocks):
    """Each block's squared RGB error, decoded by the reader."""
    count = len(words)
    decoded = textures.decode(words.astype("<u4").tobytes(), 4 * count, 4, DXT1, as_bytes=True)
    decoded = decoded.reshape(4, count, 4, 4).transpose(1, 0, 2, 3).reshape(count, 16, 4)
    step = decoded[..., :3].astype(np.int64) - blocks[..., :3]
    return (step * step).sum(axis=(1, 2))


# --- what OniSplit read back ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(mesh_cases()))
def test_onisplit_xml_of_our_meshes(name):
    """OniSplit's -extract:xml: every point, vertex normal and texture coordinate as given
    (float32, bit for bit), the strips, face normals and indices, box and sphere as written."""
    from oban_import.oni.io.objects.mesh_write import bounds

    points, normals, uvs, triangles, texture = mesh_cases()[name]
    strips, face_normals, face_indices = triangle_strips(name, points, triangles)
    root = ET.parse(os.path.join(HERE, "xml", f"M3GM{name}.xml")).getroot()
    m3gm, pnta = root.find("M3GM"), root.find("PNTA")
    vcra, txca, idxa = root.findall("VCRA"), root.find("TXCA"), root.findall("IDXA")
    assert m3gm.find("Texture").text == "TXMP" + texture
    assert np.array_equal(xml_numbers(pnta, "Positions/Vector3", np.float32), points)
    assert np.array_equal(xml_numbers(vcra[0], "Normals/Vector3", np.float32), normals)
    assert np.array_equal(xml_numbers(vcra[1], "Normals/Vector3", np.float32), face_normals)
    assert np.array_equal(xml_numbers(txca, "TexCoords/Vector2", np.float32), uvs)
    assert np.array_equal(xml_numbers(idxa[0], "Indices/Int32", np.int64)[:, 0], strips)
    assert np.array_equal(xml_numbers(idxa[1], "Indices/Int32", np.int64)[:, 0], face_indices)
    box = [pnta.find(f"BoundingBox/{k}").text for k in ("Min", "Max")] + [pnta.find("BoundingSphere/Center").text,
                                                                          pnta.find("BoundingSphere/Radius").text]
    assert np.array_equal(np.float32(" ".join(box).split()), bounds(points))


@pytest.mark.parametrize("name", sorted(mesh_cases()))
def test_onisplit_obj_of_our_meshes(name):
    """OniSplit's -extract:obj (7 significant digits, v flipped): the given triangles, each wound
    as given, and the reader gives them back in order (the first of a pair rotated)."""
    points, _, uvs, triangles, _ = mesh_cases()[name]
    mesh = read_mesh_file(os.path.join(HERE, "ours", f"M3GM{name}.oni"))
    rotation = np.argmax(triangles == mesh.triangles[:, :1], axis=1)
    assert np.array_equal(np.take_along_axis(triangles, (rotation[:, None] + np.arange(3)) % 3, axis=1),
                          mesh.triangles)
    assert np.array_equal(mesh.points, points) and np.array_equal(mesh.uvs, uvs)
    assert_same_faces(mesh_corners(mesh), read_obj(os.path.join(HERE, "obj", f"{name}.obj")), tol=1e-6)


FLAG_NAMES = {0x01: "HasMipMaps", 0x04: "DisableUWrap", 0x08: "DisableVWrap", 0x400: "AdditiveBlend"}


@pytest.mark.parametrize("name", sorted(texture_cases()))
def test_onisplit_xml_of_our_textures(name):
    """Its flags (OniSplit leaves out SwapBytes and HasEnvMap, which it sets itself), format and
    environment map."""
    _, fmt, flags, env_map = texture_cases()[name]
    texture = ET.parse(os.path.join(HERE, "xml", f"TXMP{name}.xml")).getroot().find("Texture")
    assert set(texture.find("Flags").text.split()) == {n for bit, n in FLAG_NAMES.items() if flags & bit} or {"None"}
    assert texture.find("Format").text == textures.FORMAT_NAMES[fmt]
    assert (texture.find("EnvMap").text if env_map else texture.find("EnvMap")) == (env_map and "TXMP" + env_map)


@pytest.mark.parametrize("name", sorted(texture_cases()))
def test_onisplit_png_of_our_textures(name):
    """OniSplit's -extract:png (the first level): every pixel of a lossless format equal once its
    n-bit channels are widened as OniSplit widens them (x << (8 - n)); DXT1 within one step of
    5, 6, 5 bits of the writer's pixels as the reader decodes them, alpha exact."""
    rgba, fmt, _, _ = texture_cases()[name]
    png = read_png(os.path.join(HERE, "png", f"TXMP{name}.png")).astype(np.int64)
    if fmt != DXT1:
        assert np.array_equal(png, onisplit_bytes(rgba / 255, fmt))
        return
    h, w = rgba.shape[:2]
    data = stored("ours", f"TXMP{name}.oni")
    decoded = textures.decode(ours_first_level(data, w, h), w, h, DXT1, as_bytes=True).astype(np.int64)
    assert (np.abs(png - decoded).max(axis=(0, 1)) <= (7, 3, 7, 0)).all()
    assert np.array_equal(decoded, rgba) == lossless(rgba, DXT1)


def ours_first_level(data, width, height):
    """The first level's bytes of one of ours/*.oni: its raw table starts at 0x30, pixels at +32."""
    start = int.from_bytes(data[0x30:0x34], "little") + 32
    return data[start:start + textures.pixel_bytes(width, height, DXT1)]


@pytest.mark.parametrize("name", sorted(texture_cases()))
def test_onisplit_dds_of_our_textures(name):
    """OniSplit's -extract:dds: every level's bytes as written, but the last 1 x 1 one, which
    OniSplit's reader leaves out (it stops when the next level would be 1 x 1)."""
    from oban_import.oni.io.objects.texture_write import level_sizes

    rgba, fmt, flags, _ = texture_cases()[name]
    h, w = rgba.shape[:2]
    sizes = level_sizes(w, h)[:-1] if flags & 1 else [(w, h)]
    data, dds = stored("ours", f"TXMP{name}.oni"), stored("dds", f"TXMP{name}.dds")
    start = int.from_bytes(data[0x30:0x34], "little") + 32
    read = sum(textures.pixel_bytes(lw, lh, fmt) for lw, lh in sizes)
    assert dds[128:] == data[start:start + read]
    assert int.from_bytes(dds[28:32], "little") == (len(sizes) if flags & 1 else 0)
