"""The writers against OniSplit v0.9.99.2's own files where a rule decides bytes the samples never
reached (tests/data/io_writers, its README says how each was made): a bounding box whose extremes
mix -0.0 and +0.0, a point far past the world, names at the longest OniSplit opens, DXT1 blocks two
encodings decode equally well, a body of more than 16 parts. No Mono needed: OniSplit's outputs are
stored; the inputs it was given are made again here and checked byte for byte."""

import dataclasses
import lzma
import os

import numpy as np
import pytest
from hashed import hashed
from oban_generate import random_animation
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.core.tga import tga_bytes
from oban_import.oni.io.characters.body_write import (body_file_bytes, character_file_bytes,
                                                      textures_file_bytes)
from oban_import.oni.io.characters.read import counted_items, read_character
from oban_import.oni.io.container.container import M3GM_TAG, TRIA_TAG, TXMP_TAG, UNNAMED, Container
from oban_import.oni.io.container.instance_file import MAX_NAME, instance_file_bytes
from oban_import.oni.io.oban.write import oni_file_bytes
from oban_import.oni.io.objects.mesh_write import bounds, mesh_file_bytes, triangle_strips
from oban_import.oni.io.objects.read import read_mesh_file
from oban_import.oni.io.objects.texture_write import onisplit_flags, texture_file_bytes
from oban_import.oni.io.trams.tram import PART_NAMES
from oban_import.oni.io.trams.write import tram_oni_bytes
from oban_import.oni.io.trams.xml_write import tram_xml_bytes
from test_body_write import body_bytes_as_read, opened, prism, sample
from test_objects_write import stored_arrays, stored_strips
from test_objects_written import block_error, padded_blocks
from test_tram import plain_tram

HERE = os.path.join(DATA, "io_writers")
BGR, DXT1 = 8, 9
COLLADA = ('<?xml version="1.0" encoding="utf-8"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" '
           'version="1.4.1"><asset><unit meter="{meter}"/><up_axis>Y_UP</up_axis></asset>'
           '<library_geometries>{geometries}</library_geometries><library_visual_scenes><visual_scene id="s">'
           '{nodes}</visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene>'
           '</COLLADA>\n')
# A body of 26 parts numbered depth first, as OniSplit numbers a Collada's nodes; the root has 16 children
TREE_PARENTS = [-1, 0, 1, 1, 1, 0, 5, 6, 6, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 19, 19, 0, 0, 0, 0]
# Points (Collada text) that OniSplit's unit scale (meter 1e-21: x 1e-20) takes to 1e-10 or to a zero
# keeping their sign (Mono's float parser reads "-0" as +0): per column the extremes mix -0.0 and +0.0
ZERO_POINTS = ("-1e-30 -1e10 1e-30", "1e10 1e-30 -1e-30", "1e-30 -1e-30 1e-30", "5e9 -5e9 -1e-30")
LONGEST = "n" * (MAX_NAME - 4)


# --- the inputs OniSplit was given -------------------------------------------------------------

def _floats(values):
    return " ".join(repr(float(v)) for v in np.ravel(values))


def _geometry(name, points, corners):
    """A Collada geometry: points (text or floats), one normal, a texture coordinate per point."""
    count = len(points)
    text = " ".join(points) if isinstance(points[0], str) else _floats(points)
    uvs = _floats(np.arange(2 * count) % 3 / 2)
    accessor = '<accessor source="#{0}" count="{1}" stride="{2}">{3}</accessor>'
    xyz = "".join(f'<param name="{a}" type="float"/>' for a in "XYZ")
    st = "".join(f'<param name="{a}" type="float"/>' for a in "ST")
    sources = "".join(
        f'<source id="{name}-{s}"><float_array id="{name}-{s}a" count="{len(data.split())}">{data}</float_array>'
        f'<technique_common>{accessor.format(f"{name}-{s}a", len(data.split()) // stride, stride, params)}'
        '</technique_common></source>'
        for s, data, stride, params in (("p", text, 3, xyz), ("n", "0 0 1", 3, xyz), ("t", uvs, 2, st)))
    indices = " ".join(f"{c} 0 {c}" for c in np.ravel(corners))
    return (f'<geometry id="{name}"><mesh>{sources}<vertices id="{name}-v"><input semantic="POSITION" '
            f'source="#{name}-p"/></vertices><triangles count="{len(corners)}"><input semantic="VERTEX" '
            f'source="#{name}-v" offset="0"/><input semantic="NORMAL" source="#{name}-n" offset="1"/><input '
            f'semantic="TEXCOORD" source="#{name}-t" offset="2" set="0"/><p>{indices}</p></triangles></mesh>'
            '</geometry>')


def zeros_dae() -> str:
    """ZERO_POINTS as two triangles, scaled by 1e-20 as OniSplit reads the unit."""
    return COLLADA.format(meter="1e-21", geometries=_geometry("g", ZERO_POINTS, [[0, 1, 2], [2, 1, 3]]),
                          nodes='<node id="n" name="n"><instance_geometry url="#g"/></node>')


def far_obj() -> str:
    """A triangle with a corner at x = 1e30."""
    return ("v 0.0 0.0 0.0\nv 1e30 0.0 0.0\nv 0.0 1.0 0.0\nvt 0.0 0.0\nvt 1.0 0.0\nvt 0.0 1.0\n"
            "vn 0.0 0.0 1.0\nf 1/1/1 2/2/1 3/3/1\n")


def tree_dae() -> str:
    """TREE_PARENTS as nested nodes, each a translation and a triangle of its own."""
    count = len(TREE_PARENTS)

    def node(k):
        children = "".join(node(c) for c in range(count) if TREE_PARENTS[c] == k)
        return (f'<node id="n{k}" name="n{k}"><translate>{_floats([k % 3, 1 + k % 5, k % 2])}</translate>'
                f'<instance_geometry url="#g{k}"/>{children}</node>')

    geometries = "".join(_geometry(f"g{k}", np.eye(3)[[2, 0, 1]] * [1, 1, 0] + k / 4, [[0, 1, 2]])
                         for k in range(count))
    return COLLADA.format(meter="0.1", geometries=geometries, nodes=node(0))


def name_image():
    """4 x 4 opaque hashed pixels."""
    rgba = hashed((4, 4, 4), 70)
    rgba[..., 3] = 255
    return rgba


def tie_image():
    """32 x 32 opaque 4 x 4 blocks of colours a DXT1 block decodes to (each channel on the reader's
    5- or 6-bit grid), which OniSplit's block decodes exactly, and so does another: the first 32
    blocks two colours, the first no greater than the second in any channel, texels hashed
    between them (OniSplit's block: the box's corners, three colours; the same endpoints swapped:
    four colours); the other 32 one colour (OniSplit's: it twice; any second endpoint no texel uses)."""
    bits = hashed((64, 2, 3), 71).astype(np.int64) % [32, 64, 32]
    bits.sort(axis=1)
    colours = np.rint(bits * 255 / np.array([31, 63, 31])).astype(np.uint8)       # (block, low/high, rgb)
    which = hashed((64, 16), 72) & 1
    which[32:] = 0
    blocks = np.full((64, 16, 4), 255, np.uint8)
    blocks[..., :3] = np.take_along_axis(colours, which[..., None].astype(np.intp).repeat(3, axis=2), axis=1)
    return blocks.reshape(8, 8, 4, 4, 4).transpose(0, 2, 1, 3, 4).reshape(32, 32, 4)


def inputs() -> dict:
    """{file name in in/: bytes} of what OniSplit was given."""
    files = {"zeros.dae": zeros_dae().encode(), "far.obj": far_obj().encode(), "tree26.dae": tree_dae().encode(),
             "ties.tga": tga_bytes(tie_image()[::-1])}
    for name in (LONGEST, LONGEST + "n"):
        files[name + ".tga"] = tga_bytes(name_image()[::-1])
    return files


def write_inputs(folder):
    os.makedirs(folder, exist_ok=True)
    for name, data in inputs().items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def stored(*parts) -> bytes:
    path = os.path.join(HERE, *parts)
    if os.path.exists(path + ".xz"):
        with lzma.open(path + ".xz") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def test_the_folder_holds_what_the_readme_says():
    def listed(folder):
        return sorted(name.removesuffix(".xz") for name in os.listdir(os.path.join(HERE, folder)))
    assert listed("in") == sorted(inputs())
    assert listed("onisplit") == sorted(["M3GMzeros.oni", "M3GMfar.oni", "TRBStree26.oni", "TXMPties.oni",
                                         f"TXMP{LONGEST}.oni", f"TXMP{LONGEST}n.oni"])


@pytest.mark.parametrize("name", sorted(inputs()))
def test_the_inputs_given_to_onisplit(name):
    assert stored("in", name) == inputs()[name]


# --- bounds --------------------------------------------------------------------------------------

def onisplit_mesh(name, tmp_path):
    path = tmp_path / f"{name}.oni"
    path.write_bytes(stored("onisplit", f"{name}.oni"))
    with open(path, "rb") as f:
        arrays = stored_arrays(Container(f, str(path), path.stat().st_size), 0)
    return str(path), arrays["points"]


def test_a_box_of_mixed_zero_extremes_is_onisplits(tmp_path):
    """OniSplit's box takes, of equal values, the last point's (BoundingBox.CreateFromPoints,
    Vector3.Min/Max): here each column's least or greatest value is a zero of both signs, and
    the writer gives OniSplit's PNTA and whole file."""
    path, (pnta, points) = onisplit_mesh("M3GMzeros", tmp_path)
    signs = np.signbit(points)
    zeros = points == 0
    assert (zeros & signs).any(axis=0).all() and (zeros & ~signs).any(axis=0).all()   # both zeros in each column
    extremes = (points == points.min(axis=0)) | (points == points.max(axis=0))
    assert ((extremes & zeros & signs).any(axis=0) & (extremes & zeros & ~signs).any(axis=0)).all()
    assert bounds(points).tobytes() == pnta[12:52]
    mesh = read_mesh_file(path)
    written = mesh_file_bytes(mesh.name, mesh.points, mesh.normals, mesh.uvs, *stored_strips(path), mesh.texture_name)
    assert written == stored("onisplit", "M3GMzeros.oni")


def test_a_point_onisplit_writes_an_infinite_radius_for_is_refused(tmp_path):
    """OniSplit's -create:m3gm of a corner at 1e30 squares it in float32: an infinite radius. The
    writer refuses the point, naming the mesh and the world's end."""
    path, (pnta, points) = onisplit_mesh("M3GMfar", tmp_path)
    assert np.isinf(np.frombuffer(pnta, "<f4", 1, 48)[0]) and points[1, 0] == np.float32(1e30)
    mesh = read_mesh_file(path)
    with pytest.raises(ObanError, match=r"^M3GMfar: point 1 lies at \(1\.00000002e\+30, 0, 0\), beyond 4096 units "):
        mesh_file_bytes("far", mesh.points, mesh.normals, mesh.uvs, *stored_strips(path), None)


# --- names ---------------------------------------------------------------------------------------

def test_the_longest_name_onisplit_opens_is_written_as_onisplit_writes_it():
    """OniSplit -create:txmp wrote both names; it opens the 64-character one (tag included) and
    not the 65 (its -list: IndexOutOfRangeException in InstanceFile.ReadNames). The writer gives
    OniSplit's file for the first and refuses the second, naming it and the limit."""
    flags = onisplit_flags(0, BGR, mipmaps=True)
    assert texture_file_bytes(LONGEST, name_image(), BGR, flags) == stored("onisplit", f"TXMP{LONGEST}.oni")
    assert f"TXMP{LONGEST}n".encode() + b"\0" in stored("onisplit", f"TXMP{LONGEST}n.oni")
    with pytest.raises(ObanError, match=f"^TXMP{LONGEST}n: the name is 65 characters with its tag: OniSplit opens "
                                        "no file holding a name of more than 64$"):
        texture_file_bytes(LONGEST + "n", name_image(), BGR, flags)


def _mesh(name="m", texture=None):
    points = np.eye(3, dtype=np.float32)
    return mesh_file_bytes(name, points, points, points[:, :2], *triangle_strips(name, points, [[0, 1, 2]]), texture)


def _body(name):
    return body_file_bytes(name, PART_NAMES[:2], (-1, 0), np.zeros((2, 3)), [[prism(0), prism(1)]] * 5)


def _class(name="c", body="b", link=None):
    return character_file_bytes(name, sample("ONCCchar0")[:0xC90], {} if link is None else {0x20: "TXMP" + link},
                                body, None)


WRITERS = {   # (tag of the name given, a writer of it)
    "M3GM": ("M3GM", _mesh),
    "M3GM's texture": ("TXMP", lambda name: _mesh(texture=name)),
    "TXMP": ("TXMP", lambda name: texture_file_bytes(name, name_image(), BGR, 0)),
    "TXMP's environment map": ("TXMP", lambda name: texture_file_bytes("t", name_image(), BGR, 0, name)),
    "TRBS": ("TRBS", _body),
    "TRMA": ("TRMA", lambda name: textures_file_bytes(name, ["skin"])),
    "TRMA's texture": ("TXMP", lambda name: textures_file_bytes("t", ["skin", name])),
    "ONCC": ("ONCC", _class),
    "ONCC's body": ("TRBS", lambda name: _class(body=name)),
    "ONCC's link": ("TXMP", lambda name: _class(link=name)),
    "TRAM": ("TRAM", lambda name: tram_oni_bytes(dataclasses.replace(plain_tram(), name=name))),
    "TRAM's direct animation": ("TRAM", lambda name: tram_oni_bytes(dataclasses.replace(
        plain_tram(), direct_animations=("", name)))),
    "TRAM XML's direct animation": ("TRAM", lambda name: tram_xml_bytes(dataclasses.replace(
        plain_tram(), direct_animations=(name, "")))),
    "OBAN": ("OBAN", lambda name: oni_file_bytes(dataclasses.replace(
        random_animation(np.random.default_rng(0)), name=name))),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_takes_the_longest_name_and_refuses_a_longer_one(writer):
    tag, write = WRITERS[writer]
    assert f"{tag}{LONGEST}".encode() in write(LONGEST)
    with pytest.raises(ObanError) as error:
        write(LONGEST + "n")
    assert error.value.path == f"{tag}{LONGEST}n" and error.value.problem.endswith("a name of more than 64")


def test_the_one_writer_of_a_oni_checks_every_name_it_is_given():
    """Names copied as read (a level's placeholders, its classes) meet the same check."""
    assert instance_file_bytes([(TXMP_TAG, "TXMP" + LONGEST, None)])
    with pytest.raises(ObanError, match=f"^TXMP{LONGEST}n: the name is 65 characters"):
        instance_file_bytes([(M3GM_TAG, "M3GMm", b"data"), (TXMP_TAG, f"TXMP{LONGEST}n", None)])


# --- DXT1 ties -----------------------------------------------------------------------------------

def test_dxt1_blocks_that_tie_are_onisplits():
    """Each block of tie_image decodes exactly both as OniSplit writes it and with its endpoints
    swapped (four colours), other bytes: where encodings tie the writer keeps OniSplit's block."""
    blocks = padded_blocks(tie_image())
    theirs = stored("onisplit", "TXMPties.oni")
    words = np.frombuffer(theirs, "<u4", 2 * len(blocks), len(theirs) - 8 * len(blocks)).reshape(-1, 2)
    c0, c1 = words[:, 0] & 0xFFFF, words[:, 0] >> 16
    shifts = 2 * np.arange(16, dtype=np.uint32)
    codes = (words[:, 1:] >> shifts) & 3                                # 0: the low colour, 1: the high
    swapped = np.stack([c1 | c0 << 16, (np.uint32(1) - codes << shifts).sum(axis=1, dtype=np.uint32)], axis=1)
    two_colours = (blocks[..., :3] != blocks[:, :1, :3]).any(axis=(1, 2))
    assert (block_error(words, blocks) == 0).all() and (two_colours == (c0 != c1)).all()
    assert (block_error(swapped, blocks) == 0)[two_colours].all() and two_colours.sum() > 24
    assert (codes[~two_colours] == 0).all() and (~two_colours).sum() == 32
    assert texture_file_bytes("ties", tie_image(), DXT1, onisplit_flags(0, DXT1, mipmaps=False)) == theirs


# --- a body of more than 16 parts ----------------------------------------------------------------

def test_a_body_of_26_parts_is_onisplits(tmp_path):
    """OniSplit's -create:trbs of TREE_PARENTS (a root of 16 children): its tree as nested, its
    TRIA's first children and next siblings in part order, and the writer's whole file."""
    path = tmp_path / "TRBStree26.oni"
    path.write_bytes(stored("onisplit", "TRBStree26.oni"))
    assert read_character(str(path)).body.parents.tolist() == TREE_PARENTS
    items = counted_items(opened(path.read_bytes()), 4, TRIA_TAG).tolist()
    for part, (parent, first, following, _) in enumerate(items):
        children = [c for c, p in enumerate(TREE_PARENTS) if p == part]
        siblings = [c for c, p in enumerate(TREE_PARENTS) if p == TREE_PARENTS[part] and c > part] if part else []
        assert (parent, first, following) == (max(TREE_PARENTS[part], 0), children[0] if children else 0,
                                              siblings[0] if siblings else 0)
    assert body_bytes_as_read(str(path)) == path.read_bytes()


# --- an unnamed mesh -----------------------------------------------------------------------------

def test_an_unnamed_mesh_is_written_as_onisplit_writes_one(tmp_path):
    """OniSplit makes an instance of an empty name unnamed (ImporterFile.MakeInstanceName: null),
    as a body's M3GMs: flag 1, no name in the table; the body writer gives those bytes. A loose
    M3GM file of no name, which OniSplit never writes (it names a file after its first instance)
    and of which it lists and extracts nothing, is refused."""
    data = stored("onisplit", "TRBStree26.oni")
    c = opened(data)
    unnamed = c.descriptors[c.descriptors["tag"] == M3GM_TAG]
    assert len(unnamed) == len(TREE_PARENTS)          # one TRCM for the five levels
    assert (unnamed["flags"] == UNNAMED).all() and (unnamed["name_offset"] == 0).all()
    assert c.names.rstrip(b"\0") == b"TRBStree26"
    (tmp_path / "TRBStree26.oni").write_bytes(data)
    assert opened(body_bytes_as_read(str(tmp_path / "TRBStree26.oni"))).descriptors.tobytes() == c.descriptors.tobytes()
    with pytest.raises(ObanError, match="^M3GM: an empty name: each instance written here is named"):
        _mesh("")
