"""The two Colladas OniSplit builds a level's environment from (docs/level.md 11): the
environment's quads (one node per run of equal flags, one primitive per run of equal texture,
a quad a 4-corner polygon, a Triangle a 3-corner one, positions, texture coordinates t = 1 - v
and shades per corner) and the rooms (each room's floor polygon, then each ghost). Oni axes
(Y_UP), decimetres (without `unit meter="0.1"` OniSplit scales by 10). Every point within the
game's world (mesh_write.check_in_world; docs/level.md 11), every texture a name OniSplit's
files hold (instance_name). No bpy."""

from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..container.instance_file import instance_name
from ..level.model import Quads, corner_counts, shade_rgba
from ..objects.mesh_write import check_in_world
from .object_xml import xml_floats

HEAD = ('<?xml version="1.0" encoding="utf-8"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" '
        'version="1.4.1"><asset><unit meter="0.1" name="decimeter"/><up_axis>Y_UP</up_axis></asset>')
TAIL = ('<scene><instance_visual_scene url="#scene"/></scene></COLLADA>\n')
# The flags OniSplit derives from a polygon's shape (Triangle, Horizontal, Vertical, the projection bits):
# never asked for, as it ORs what it is given into what it derives.
DERIVED = 0x40 | 0x80000 | 0x100000 | 0x2000000 | 0x4000000


def runs(values: np.ndarray) -> np.ndarray:
    """(k + 1,) the starts of each run of equal values, and the end."""
    changes = np.flatnonzero(values[1:] != values[:-1]) + 1
    return np.concatenate([[0], changes, [len(values)]]).astype(np.int64)


def environment_collada(quads: Quads) -> tuple[str, list]:
    """(the environment Collada's text, [(its node id, the flags OniSplit is to be told)] per
    node: the master XML's GunkFlags). ObanError naming the quad whose corner lies beyond the
    world, or the texture whose name no instance can take."""
    check_in_world("the environment", "a corner of quad", _farthest_corners(quads.points))
    used = np.unique(quads.textures) if len(quads.textures) else np.zeros(0, np.int32)
    names = [quads.texture_names[i] for i in used.tolist()]
    for name in names:
        instance_name("TXMP", name)
    material = {int(texture): f"m{k}" for k, texture in enumerate(used.tolist())}
    nodes, geometries, flags = [], [], []
    bounds = runs(quads.flags)
    for k, (start, end) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        part = slice(start, end)
        geometry, symbols = _geometry(f"g{k}", quads, part, material)
        geometries.append(geometry)
        bound = "".join(f'<instance_material symbol="{s}" target="#{s}"><bind_vertex_input semantic="UV0" '
                        f'input_semantic="TEXCOORD" input_set="0"/></instance_material>' for s in symbols)
        nodes.append(f'<node id="n{k}" name="n{k}"><instance_geometry url="#g{k}"><bind_material>'
                     f'<technique_common>{bound}</technique_common></bind_material></instance_geometry></node>')
        flags.append((f"n{k}", int(quads.flags[start]) & ~DERIVED))
    images = "".join(f'<image id="m{k}-img"><init_from>{escape(name)}.tga</init_from></image>'
                     for k, name in enumerate(names))
    effects = "".join(f'<effect id="m{k}-fx"><profile_COMMON><newparam sid="surf"><surface type="2D"><init_from>'
                      f'm{k}-img</init_from></surface></newparam><newparam sid="samp"><sampler2D><source>surf'
                      f'</source></sampler2D></newparam><technique sid="common"><lambert><diffuse><texture '
                      f'texture="samp" texcoord="UV0"/></diffuse></lambert></technique></profile_COMMON></effect>'
                      for k in range(len(names)))
    materials = "".join(f'<material id="m{k}" name={quoteattr(name)}><instance_effect url="#m{k}-fx"/></material>'
                        for k, name in enumerate(names))
    text = (HEAD + f"<library_images>{images}</library_images><library_effects>{effects}</library_effects>"
            f"<library_materials>{materials}</library_materials>"
            f"<library_geometries>{''.join(geometries)}</library_geometries>"
            f'<library_visual_scenes><visual_scene id="scene">{"".join(nodes)}</visual_scene>'
            f"</library_visual_scenes>" + TAIL)
    return text, flags


def rooms_collada(floors: np.ndarray, floor_counts: np.ndarray, ghosts: np.ndarray) -> str:
    """The rooms' Collada: the floor polygons ((k, 3) corners, (r,) counts), then the ghosts
    ((g, 4, 3)), positions only, in one polygon list. ObanError naming the corner beyond the world."""
    check_in_world("the rooms", "floor corner", floors.reshape(-1, 3))
    check_in_world("the rooms", "a corner of ghost", _farthest_corners(ghosts))
    points = np.concatenate([floors.reshape(-1, 3), ghosts.reshape(-1, 3)])
    counts = np.concatenate([floor_counts, np.full(len(ghosts), 4, np.int32)])
    mesh = (_source("rooms-p", points, ("X", "Y", "Z")) + '<vertices id="rooms-v"><input semantic="POSITION" '
            'source="#rooms-p"/></vertices>' + f'<polylist count="{len(counts)}"><input semantic="VERTEX" '
            f'source="#rooms-v" offset="0"/><vcount>{_ints(counts)}</vcount><p>{_ints(np.arange(len(points)))}</p>'
            '</polylist>')
    return (HEAD + f'<library_geometries><geometry id="rooms" name="rooms"><mesh>{mesh}</mesh></geometry>'
            '</library_geometries><library_visual_scenes><visual_scene id="scene"><node id="room-node" name="rooms">'
            '<instance_geometry url="#rooms"/></node></visual_scene></library_visual_scenes>' + TAIL)


def collada_t(v: np.ndarray) -> np.ndarray:
    """float32 t for each stored v: the float32 nearest 1 - v. OniSplit's float32 1 - t then
    gives v back exactly wherever some float32 t can (every v OniSplit itself wrote: multiples
    of 2^-24 below 1/2), else the float32 nearest it."""
    return (1.0 - np.asarray(v, np.float64)).astype(np.float32)


def _farthest_corners(quads) -> np.ndarray:
    """(n, 3): of each of the (n, 4, 3) quads, the corner with the largest coordinate (in size)."""
    quads = np.asarray(quads).reshape(-1, 4, 3)
    return quads[np.arange(len(quads)), np.abs(quads).max(axis=2).argmax(axis=1)]


def _geometry(name, quads: Quads, part: slice, material: dict) -> tuple[str, list]:
    counts = corner_counts(quads.flags[part])   # this part's alone: a level has thousands of parts
    keep = (np.arange(4)[None, :] < counts[:, None]).ravel()
    points = quads.points[part].reshape(-1, 3)[keep]
    uv = quads.texture_coordinates[part].reshape(-1, 2)[keep]
    uv = np.column_stack([uv[:, 0], collada_t(uv[:, 1])])
    colours = (shade_rgba(quads.shades[part].ravel()[keep]).astype(np.float64) + 0.5) / 255   # OniSplit: int(f*255)
    sources = (_source(f"{name}-p", points, ("X", "Y", "Z")) + _source(f"{name}-t", uv, ("S", "T"))
               + _source(f"{name}-c", colours, ("R", "G", "B", "A")) + f'<vertices id="{name}-v"><input '
               f'semantic="POSITION" source="#{name}-p"/></vertices>')
    textures = quads.textures[part]
    bounds, first, lists, symbols = runs(textures), np.concatenate([[0], np.cumsum(counts)]), [], []
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        symbol = material[int(textures[start])]
        symbols.append(symbol)
        lists.append(f'<polylist count="{end - start}" material="{symbol}"><input semantic="VERTEX" '
                     f'source="#{name}-v" offset="0"/><input semantic="TEXCOORD" source="#{name}-t" offset="0" '
                     f'set="0"/><input semantic="COLOR" source="#{name}-c" offset="0"/><vcount>'
                     f'{_ints(counts[start:end])}</vcount><p>{_ints(np.arange(first[start], first[end]))}</p>'
                     '</polylist>')
    return f'<geometry id="{name}" name="{name}"><mesh>{sources}{"".join(lists)}</mesh></geometry>', \
        list(dict.fromkeys(symbols))


def _source(name, values, params) -> str:
    count = len(values)
    return (f'<source id="{name}"><float_array id="{name}-a" count="{count * len(params)}">'
            f'{xml_floats(values, np.float64)}'
            f'</float_array><technique_common><accessor source="#{name}-a" count="{count}" stride="{len(params)}">'
            + "".join(f'<param name="{p}" type="float"/>' for p in params) + "</accessor></technique_common></source>")


def _ints(values) -> str:
    return " ".join(map(str, np.asarray(values).ravel().tolist()))
