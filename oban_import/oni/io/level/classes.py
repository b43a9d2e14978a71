"""Door classes (DOOR) and furniture geometry (OFGA, docs/level.md 2), each built once per
Library, and the instances an object list names rather than links: found by full name in
the same container, else as `<full name>.oni` beside the file read."""

import functools
import os

import numpy as np

from ....core.errors import ObanError
from ..container.container import DOOR_TAG, ENVP_TAG, M3GM_TAG, OBAN_TAG, OFGA_TAG, Container, counted
from ..container.library import Library
from ..oban.read import read_oban
from ..objects.read import mesh_at
from .arrays import text
from .model import DoorClass, FurnitureGeometry, GeometryElement

DOOR_CLASS_DTYPE = np.dtype([("geometries", "<u4", 2), ("animation", "<u4"), ("sound_attenuation", "<f4"),
                             ("sounds_allowed", "<u4"), ("sound_type", "<i4"), ("sound_radius", "<f4"),
                             ("open_sound", "S32"), ("close_sound", "S32"), ("run_time", "V8")])
OFGA_PARTICLES_OFFSET = 0x10
ELEMENT_DTYPE = np.dtype([("flags", "<u4"), ("mesh", "<u4"), ("padding", "V4")])
assert DOOR_CLASS_DTYPE.itemsize == 100 and ELEMENT_DTYPE.itemsize == 12


def door_class_at(library: Library, c: Container, index: int) -> DoorClass:
    return library.cached(c, index, functools.partial(_door_class, library))


def geometry_at(library: Library, c: Container, index: int) -> FurnitureGeometry:
    return library.cached(c, index, functools.partial(_geometry, library))


def locate(library: Library, c: Container, tag: bytes, full_name: str):
    """(container, index) of the instance of `tag` named `full_name` with data: in `c`, else in
    `<full_name>.oni` beside the file read; None when neither holds it."""
    index = library.named(c, tag).get(full_name)
    return (c, index) if index is not None else library.beside(full_name, tag)


def find_named(library: Library, c: Container, tag: bytes, full_name: str, what: str, then: str):
    """locate(), and a warning naming `what` and what `then` happens when it finds nothing."""
    found = locate(library, c, tag, full_name)
    if found is None:
        not_found(library, c, full_name, what, then)
    return found


def not_found(library: Library, c: Container, full_name: str, what: str, then: str) -> None:
    library.warn(f"{what} {full_name} not found (not in {os.path.basename(c.path)}, nor {full_name}.oni beside it): "
                 f"{then}")


def _door_class(library, c, index):
    data, _ = c.instance(index, DOOR_TAG)
    label = c.label(index)
    if len(data) < DOOR_CLASS_DTYPE.itemsize:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for a DOOR ({DOOR_CLASS_DTYPE.itemsize})")
    record = np.frombuffer(data, DOOR_CLASS_DTYPE, 1)[0]
    geometries, names = [], []
    for value, field in zip(record["geometries"].tolist(), ("leaf", "second leaf")):
        found = c.link(value, OFGA_TAG, index, field)
        names.append("" if found is None else c.short_name(found))
        target = library.follow(c, value, OFGA_TAG, index, field)
        geometries.append(geometry_at(library, *target) if target else None)
    value = int(record["animation"])
    found = c.link(value, OBAN_TAG, index, "animation")
    if found is None:
        library.warn(f"{c.full_name(index) or label} has no animation (OBAN link 0): the engine never opens "
                     f"its doors, which stay gunk")
    target = library.follow(c, value, OBAN_TAG, index, "animation")
    return DoorClass(
        name=c.short_name(index), geometries=geometries, geometry_names=names,
        animation=library.cached(*target, read_oban) if target else None,
        animation_name="" if found is None else c.short_name(found),
        sound_attenuation=float(record["sound_attenuation"]), sounds_allowed=int(record["sounds_allowed"]),
        sound_type=int(record["sound_type"]), sound_radius=float(record["sound_radius"]),
        open_sound=text(record["open_sound"]), close_sound=text(record["close_sound"]))


def _geometry(library, c, index):
    data, _ = c.instance(index, OFGA_TAG)
    label = c.label(index)
    elements = counted(data, ELEMENT_DTYPE, c.path, label, "element")
    c.link(int.from_bytes(data[OFGA_PARTICLES_OFFSET:OFGA_PARTICLES_OFFSET + 4], "little"), ENVP_TAG, index,
           "particles")
    fields = [f"element {k} mesh" for k in range(len(elements))]
    meshes = elements["mesh"].tolist()
    found = [c.link(value, M3GM_TAG, index, field) for value, field in zip(meshes, fields)]
    targets = library.follow_all(c, meshes, M3GM_TAG, index, fields)
    return FurnitureGeometry(name=c.short_name(index), elements=[
        GeometryElement(flags=flags, mesh=mesh_at(library, *target) if target else None,
                        mesh_name="" if i is None else c.short_name(i))
        for flags, target, i in zip(elements["flags"].tolist(), targets, found)])
