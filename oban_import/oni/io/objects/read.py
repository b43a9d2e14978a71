"""Reading placed objects, meshes and textures (docs/objects.md) into model.py's data
classes: a level's or an OBOA file's objects (read_objects), a loose M3GM or TXMP
(read_mesh_file, read_texture_file), a mesh or texture at a link, built once per
Library (mesh_at, texture_at) for every format that links them, and an instance an import
came from, again, for an export to write back as stored (stored_mesh, stored_texture)."""

import functools
import os

import numpy as np

from ....core.errors import ObanError
from ..container.container import ENVP_TAG, M3GA_TAG, M3GM_TAG, OBAN_TAG, OBOA_TAG, TXMP_TAG, Container
from ..container.library import Library, open_library
from ..oban.read import read_oban
from . import meshes, textures
from .meshes import parse_m3ga
from .model import Level, Mesh, PlacedObject, Texture
from .oboa import parse_oboa


def read_objects(path: str, library: Library | None = None) -> Level:
    """Every placed object of a level .dat or an OBOA .oni, with meshes, textures and animations
    (`library`: open_library's)."""
    path = os.fspath(path)
    with open_library(path, library) as library:
        c, start = library.main, len(library.warnings)
        arrays = c.with_data(OBOA_TAG)
        if not arrays:
            raise ObanError(path, "holds no object setup array (OBOA)")
        objects, used = [], {}
        for oboa in arrays:
            label = c.label(oboa)
            for n, record in enumerate(parse_oboa(c.instance(oboa, OBOA_TAG)[0], path, label)):
                if not empty_setup(record):
                    objects.append(_placed(library, c, oboa, n, record, used))
        animations = list(used.values())
        for i in c.with_data(OBAN_TAG):  # every OBAN of the file, those no object uses included
            animation = library.cached(c, i, read_oban)
            if id(animation) not in used:
                used[id(animation)] = animation
                animations.append(animation)
        return Level(objects=objects, animations=animations, warnings=library.warnings[start:])


def empty_setup(record) -> bool:
    """A setup in use by nothing: no flags, no geometry, no animation (OniSplit's level builder
    writes 32 after the real ones, docs/level.md 3)."""
    return not record["flags"] and not record["geometry"] and not record["animation"]


def _placed(library, c, oboa, n, record, used) -> PlacedObject:
    """Object `n` of the OBOA at `oboa`: its meshes (M3GA) and animation followed; `used`
    collects the animations by id."""
    path, where = c.path, f"{c.label(oboa)} object {n}"
    for part in ("position", "rotation", "scale", "origin"):
        if not np.isfinite(record[part]).all():
            raise ObanError(path, f"{where}: non-finite value in its {part}")
    before = len(library.events)
    c.link(int(record["particles"]), ENVP_TAG, oboa, f"object {n} particles")
    found = []
    geometry = library.follow(c, int(record["geometry"]), M3GA_TAG, oboa, f"object {n} geometry")
    if geometry:
        gc, gi = geometry
        for value in parse_m3ga(gc.instance(gi, M3GA_TAG)[0], gc.path, gc.label(gi)):
            target = library.follow(gc, value, M3GM_TAG, gi, "mesh")
            mesh = mesh_at(library, *target) if target else None
            if mesh is not None:
                found.append(mesh)
    target = library.follow(c, int(record["animation"]), OBAN_TAG, oboa, f"object {n} animation")
    animation = library.cached(*target, read_oban) if target else None
    if animation is not None:
        used[id(animation)] = animation
    warnings = list(dict.fromkeys(library.events[before:]))
    if not found and not warnings:
        warnings = [f"{where} has no meshes"]
    return PlacedObject(
        name=record["name"].split(b"\0", 1)[0].decode("latin-1"), flags=int(record["flags"]),
        physics=int(record["physics"]), script_id=int(record["script_id"]),
        door_gunk_id=int(record["door_gunk_id"]), door_id=int(record["door_id"]),
        position=record["position"].copy(), rotation=record["rotation"].copy(), scale=float(record["scale"]),
        origin=record["origin"].copy(), meshes=found, animation=animation, warnings=warnings, setup=n)


def read_mesh_file(path: str, library: Library | None = None) -> Mesh:
    """The M3GM of a loose .oni (its texture found beside it, or Mesh.texture None)."""
    with open_library(path, library) as library:
        start = len(library.warnings)
        mesh = mesh_at(library, library.main, main_instance(library.main, M3GM_TAG, "mesh (M3GM)"))
        if mesh is None:
            raise ObanError(library.main.path, "; ".join(library.warnings[start:]))
        return mesh


def read_texture_file(path: str, library: Library | None = None) -> Texture:
    """The TXMP of a loose .oni, its pixels from the file's raw table."""
    with open_library(path, library) as library:
        return texture_at(library, library.main, main_instance(library.main, TXMP_TAG, "texture (TXMP)"))


def main_instance(c: Container, tag: bytes, what: str) -> int:
    """The first instance of `tag` with data in `c`; ObanError naming `what` without one."""
    index = c.first(tag)
    if index is None:
        raise ObanError(c.path, f"holds no {what}")
    return index


def mesh_at(library: Library, c: Container, index: int) -> Mesh | None:
    """The M3GM at descriptor `index` of `c`, its arrays and texture followed through
    `library`; None (and a warning) when an array's placeholder is not found."""
    return library.cached(c, index, functools.partial(_mesh, library))


def texture_at(library: Library, c: Container, index: int) -> Texture:
    return library.cached(c, index, _texture)


def _mesh(library, c, index):
    data, _ = c.instance(index, M3GM_TAG)
    label = c.label(index)
    links = meshes.parse_links(data, meshes.M3GM_LINKS_OFFSET, len(meshes.M3GM_LINKS), c.path, label)
    arrays, texture, texture_name = {}, None, ""
    for (field, tag), value in zip(meshes.M3GM_LINKS, links):
        if field == "texture":
            found = c.link(value, tag, index, field)
            if found is None:
                break
            texture_name = c.short_name(found)
            target = library.follow(c, value, tag, index, field)
            texture = texture_at(library, *target) if target else None
            break
        target = library.follow(c, value, tag, index, field)
        if target is None:
            if value:
                return None  # warned
            raise ObanError(c.path, f"{label}: no {field} (link 0)")
        other, i = target
        arrays[field] = meshes.parse_array(other.instance(i, tag)[0], tag, other.path, other.label(i))
    points = arrays["points"]
    for field in ("points", "vertex normals", "texture coordinates"):
        if not np.isfinite(arrays[field]).all():
            raise ObanError(c.path, f"{label}: non-finite value in its {field}")
    for field in ("vertex normals", "texture coordinates"):
        if len(arrays[field]) != len(points):
            raise ObanError(c.path, f"{label}: {len(arrays[field])} {field} for {len(points)} points")
    strips = arrays["triangle strips"]
    faces = meshes.triangles(strips, arrays["face normal indices"], arrays["face normals"], points, c.path, label)
    return Mesh(name=c.short_name(index), points=points, normals=arrays["vertex normals"],
                uvs=arrays["texture coordinates"], triangles=faces, texture=texture, texture_name=texture_name,
                strips=strips, face_normals=arrays["face normals"], face_normal_indices=arrays["face normal indices"],
                source=os.path.abspath(c.path), instance=index)


def _texture(c, index):
    """The TXMP at descriptor `index` of `c`, its first level's pixels read from the raw data."""
    data, _ = c.instance(index, TXMP_TAG)
    label = c.label(index)
    h = textures.parse_header(data, c.path, label)
    length = textures.pixel_bytes(h["width"], h["height"], h["format"])
    raw = c.raw(h["raw_offset"], length, f"{label}'s pixels")
    return Texture(name=c.short_name(index), width=h["width"], height=h["height"], format=h["format"],
                   flags=h["flags"], has_alpha=h["format"] in textures.WITH_ALPHA, raw=raw,
                   source=os.path.abspath(c.path), instance=index, pixels_at=c.raw_at(h["raw_offset"]))


def stored_mesh(path: str, index: int, name: str, library: Library | None = None) -> Mesh:
    """The M3GM`name` at descriptor `index` of `path` (where an import read it), its arrays as
    stored; ObanError where the file no longer holds it there."""
    with open_library(path, library) as library:
        start = len(library.warnings)
        mesh = mesh_at(library, library.main, _stored(library.main, index, M3GM_TAG, name))
        if mesh is None:
            raise ObanError(library.main.path, "; ".join(library.warnings[start:]))
        return mesh


def stored_texture(path: str, index: int, name: str, library: Library | None = None) -> tuple:
    """(Texture, every level's bytes as stored, its environment map's name or '') of the
    TXMP`name` at descriptor `index` of `path`; ObanError where the file no longer holds it."""
    with open_library(path, library) as library:
        c = library.main
        texture = texture_at(library, c, _stored(c, index, TXMP_TAG, name))
        h = textures.parse_header(c.instance(index, TXMP_TAG)[0], c.path, c.label(index))
        pixels = c.raw(h["raw_offset"], textures.stored_bytes(h["width"], h["height"], h["format"], h["flags"]),
                       f"{c.label(index)}'s pixels and mipmaps")
        env_map = c.link(h["env_map"], TXMP_TAG, index, "environment map")
        return texture, pixels, "" if env_map is None else c.short_name(env_map)


def _stored(c: Container, index: int, tag: bytes, name: str) -> int:
    """`index`, checked to be an instance of `tag` named `name` with its data in `c`."""
    if not (0 <= index < len(c.descriptors) and c.tag_of(index) == tag and not c.is_placeholder(index)
            and c.short_name(index) == name):
        raise ObanError(c.path, f"no longer holds {tag[::-1].decode()}{name} at instance {index}")
    return index
