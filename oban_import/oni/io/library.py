"""Reading placed objects, meshes and textures (read_objects, read_mesh_file,
read_texture_file) into oni/objects.py's data classes, and characters and their animations
(read_character, read_characters, read_tram_file, read_trams; docs/characters.md 5, 9) into
characters.py's and tram.py's: the instances one read needs,
across files (docs/objects.md 1, 2, 8): links followed and checked, placeholders found
among the loose .oni files of the same folder, each mesh, texture and animation built
once however many objects share it.

A placeholder not found is a warning naming it; the part that needed it comes in without it.
Any other fault raises ObanError naming the file and the instance: the whole read fails.
"""

import contextlib
import os

import numpy as np

from ...core.errors import ObanError
from ...core.files import Closes, open_regular, open_small_whole
from . import meshes, textures
from .characters import Character, bare_body, character_at
from .container import (ENVP_TAG, M3GA_TAG, M3GM_TAG, OBAN_TAG, OBOA_TAG, ONCC_TAG, TRAM_TAG, TRBS_TAG, TXMP_TAG,
                        Container)
from .meshes import parse_m3ga
from .oban import Animation, check, parse_record
from .objects import Level, Mesh, PlacedObject, Texture, parse_oboa
from .tram import Tram, read_tram, read_tram_instances
from .tram_xml import read_tram_xml

IN_MEMORY = 1 << 20   # bytes: a file this small is read whole (a loose .oni; not a level)


class Library(Closes):
    """Open containers by path (the first one given, then any a placeholder leads to)."""

    def __init__(self, path: str):
        self.folder = os.path.dirname(os.path.abspath(path))
        self.containers, self.cache, self.warnings = {}, {}, []
        self.events = []  # every warning as it happens (repeats included): what one object needed
        self.main = self.open(path)

    def open(self, path: str) -> Container:
        return self.open_all([path])[0]

    def open_all(self, paths) -> list[Container]:
        """The container of each file, those not open yet opened together (Container.open_all)."""
        keys = [os.path.abspath(path) for path in paths]
        new = {key: path for key, path in zip(keys, paths) if key not in self.containers}
        files = []
        try:
            for path in new.values():
                f, size = open_small_whole(path, IN_MEMORY)   # one read, not one a piece
                files.append((f, path, size))
            self.containers.update(zip(new, Container.open_all(files)))
        except BaseException:
            for f, _, _ in files:
                f.close()
            raise
        return [self.containers[key] for key in keys]

    def close(self) -> None:
        for container in self.containers.values():
            container.close()
            container.f.close()
        self.containers.clear()

    def follow(self, c: Container, value: int, tag: bytes, owner: int, field: str):
        """(container, index) a link leads to, across a placeholder; None for no link, or for
        a placeholder not found (then a warning names it)."""
        return self.follow_all(c, [value], tag, owner, [field])[0]

    def follow_all(self, c: Container, values, tag: bytes, owner: int, fields) -> list:
        """follow() of each link of instance `owner` (`fields` naming them), the files their
        placeholders lead to opened together."""
        indices = [c.link(value, tag, owner, field) for value, field in zip(values, fields)]
        beside = {index: c.full_name(index) for index in indices if index is not None and c.is_placeholder(index)}
        paths = {index: os.path.join(self.folder, name + ".oni") for index, name in beside.items()}
        found = {index: path for index, path in paths.items() if _plain(beside[index]) and os.path.isfile(path)}
        opened = dict(zip(found, self.open_all(found.values())))
        return [None if index is None else (c, index) if index not in beside else
                self._placeholder(c, index, beside[index], tag, opened.get(index), paths[index]) for index in indices]

    def _placeholder(self, c, index, name, tag, other, path):
        """The instance placeholder `index` (named `name`) stands for in `other` (the container of
        the file named after it, or None); None and a warning when it is not there."""
        for i in other.indices(tag) if other else ():
            if not other.is_placeholder(i) and other.full_name(i) == name:
                return other, int(i)
        self.warn(f"{name or c.label(index)} not found ({os.path.basename(path)} beside "
                  f"{os.path.basename(c.path)} does not hold it): imported without it")
        return None

    def warn(self, text: str) -> None:
        self.events.append(text)
        if text not in self.warnings:
            self.warnings.append(text)

    def _cached(self, c, index, build):
        """build(c, index), once; a later call repeats the warnings the first one gave."""
        key = (id(c), index)
        if key in self.cache:
            value, events = self.cache[key]
            self.events += events
            return value
        before = len(self.events)
        value = build(c, index)
        self.cache[key] = value, self.events[before:]
        return value

    def texture(self, c: Container, index: int) -> Texture:
        return self._cached(c, index, _texture)

    def animation(self, c: Container, index: int) -> Animation:
        return self._cached(c, index, _animation)

    def tram(self, c: Container, index: int) -> Tram:
        return self._cached(c, index, read_tram)

    def trams(self, instances) -> list[Tram]:
        """The TRAM at each (container, index), those not read yet read together (they warn of nothing)."""
        new = list({(id(c), index): (c, index) for c, index in instances
                    if (id(c), index) not in self.cache}.values())
        for (c, index), tram in zip(new, read_tram_instances(new)):
            self.cache[(id(c), index)] = tram, []
        return [self.tram(c, index) for c, index in instances]

    def mesh(self, c: Container, index: int) -> Mesh | None:
        """The M3GM at `index`, its texture resolved; None (and a warning) if an array is missing."""
        return self._cached(c, index, self._mesh)

    def _mesh(self, c, index):
        data, _ = c.instance(index, M3GM_TAG)
        label = c.label(index)
        links = meshes.parse_links(data, meshes.M3GM_LINKS_OFFSET, len(meshes.M3GM_LINKS), c.path, label)
        arrays, texture, texture_name = {}, None, ""
        for (field, tag), value in zip(meshes.M3GM_LINKS, links):
            if field == "texture":
                found = c.link(value, tag, index, field)
                if found is None:
                    break
                texture_name = _short(c.full_name(found), "TXMP")
                target = self.follow(c, value, tag, index, field)
                texture = self.texture(*target) if target else None
                break
            target = self.follow(c, value, tag, index, field)
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
        faces = meshes.triangles(strips, arrays["face normal indices"], arrays["face normals"], points,
                                 c.path, label)
        return Mesh(name=_short(c.full_name(index), "M3GM"), points=points, normals=arrays["vertex normals"],
                    uvs=arrays["texture coordinates"], triangles=faces, texture=texture,
                    texture_name=texture_name)


def _plain(name):
    """A name that stays a file name in the folder (no path separators, no '..')."""
    return bool(name) and name not in (".", "..") and not any(ch in name for ch in "/\\:\0")


def _short(full: str, tag: str) -> str:
    return full[len(tag):] if full.startswith(tag) else full


def _texture(c, index):
    data, _ = c.instance(index, TXMP_TAG)
    label = c.label(index)
    h = textures.parse_header(data, c.path, label)
    length = textures.pixel_bytes(h["width"], h["height"], h["format"])
    raw = c.raw(h["raw_offset"], length, f"{label}'s pixels")
    return Texture(name=_short(c.full_name(index), "TXMP"), width=h["width"], height=h["height"],
                   format=h["format"], flags=h["flags"], has_alpha=h["format"] in textures.WITH_ALPHA,
                   raw=raw)


def _animation(c, index):
    record, offset = c.record(index)
    if c.tag_of(index) != OBAN_TAG or len(record) < 8:
        raise ObanError(c.path, f"{c.label(index)} is not an OBAN with data")
    animation = parse_record(record, c.path, _short(c.full_name(index), "OBAN") or c.label(index), file_offset=offset)
    check(animation, c.path)
    return animation


def read_objects(path: str) -> Level:
    """Every placed object of a level .dat or an OBOA .oni, with meshes, textures and animations."""
    path = os.fspath(path)
    with _library(path) as library:
        c = library.main
        arrays = [int(i) for i in c.indices(OBOA_TAG) if not c.is_placeholder(int(i))]
        if not arrays:
            raise ObanError(path, "holds no object setup array (OBOA)")
        objects, used = [], {}
        for oboa in arrays:
            label = c.label(oboa)
            for n, record in enumerate(parse_oboa(c.instance(oboa, OBOA_TAG)[0], path, label)):
                where = f"{label} object {n}"
                for part in ("position", "rotation", "scale", "origin"):
                    if not np.isfinite(record[part]).all():
                        raise ObanError(path, f"{where}: non-finite value in its {part}")
                before = len(library.events)
                c.link(int(record["particles"]), ENVP_TAG, oboa, f"object {n} particles")
                meshes = []
                geometry = library.follow(c, int(record["geometry"]), M3GA_TAG, oboa, f"object {n} geometry")
                if geometry:
                    gc, gi = geometry
                    for value in parse_m3ga(gc.instance(gi, M3GA_TAG)[0], gc.path, gc.label(gi)):
                        target = library.follow(gc, value, M3GM_TAG, gi, "mesh")
                        mesh = library.mesh(*target) if target else None
                        if mesh is not None:
                            meshes.append(mesh)
                target = library.follow(c, int(record["animation"]), OBAN_TAG, oboa, f"object {n} animation")
                animation = library.animation(*target) if target else None
                if animation is not None:
                    used[id(animation)] = animation
                warnings = list(dict.fromkeys(library.events[before:]))
                if not meshes and not warnings:
                    warnings = [f"{where} has no meshes"]
                objects.append(PlacedObject(
                    name=record["name"].split(b"\0", 1)[0].decode("latin-1"),
                    flags=int(record["flags"]), physics=int(record["physics"]),
                    script_id=int(record["script_id"]), door_gunk_id=int(record["door_gunk_id"]),
                    door_id=int(record["door_id"]), position=record["position"].copy(),
                    rotation=record["rotation"].copy(), scale=float(record["scale"]),
                    origin=record["origin"].copy(), meshes=meshes, animation=animation,
                    warnings=list(warnings)))
        animations = list(used.values())
        for i in c.indices(OBAN_TAG):  # every OBAN of the file, those no object uses included
            if not c.is_placeholder(int(i)):
                animation = library.animation(c, int(i))
                if id(animation) not in used:
                    used[id(animation)] = animation
                    animations.append(animation)
        return Level(objects=objects, animations=animations, warnings=list(library.warnings))


def read_mesh_file(path: str) -> Mesh:
    """The M3GM of a loose .oni (its texture found beside it, or Mesh.texture None)."""
    with _library(path) as library:
        mesh = library.mesh(library.main, _main(library.main, M3GM_TAG, "mesh (M3GM)"))
        if mesh is None:
            raise ObanError(library.main.path, "; ".join(library.warnings))
        return mesh


def read_texture_file(path: str) -> Texture:
    """The TXMP of a loose .oni, its pixels from the file's raw table."""
    with _library(path) as library:
        return library.texture(library.main, _main(library.main, TXMP_TAG, "texture (TXMP)"))


def read_tram_file(path: str) -> Tram:
    """The TRAM of a loose .oni (the first one of a level .dat), its raw data from the file's raw
    table (or the level's .raw); or of OniSplit's XML of one (.xml), as OniSplit's -create makes it
    (docs/characters.md 9)."""
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() == ".xml":
        with _reading(path):
            f, size = open_regular(path)
            with f:
                return read_tram_xml(f, path, size)[0]
    with _library(path) as library:
        return library.tram(library.main, _main(library.main, TRAM_TAG, "animation (TRAM)"))


def read_trams(path: str) -> list[Tram]:
    """Every TRAM of a level .dat (+ .raw) or a .oni, in descriptor order; the one of
    OniSplit's XML of a TRAM."""
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() == ".xml":
        return [read_tram_file(path)]
    with _library(path) as library:
        c = library.main
        return library.trams([(c, int(i)) for i in c.indices(TRAM_TAG) if not c.is_placeholder(int(i))])


def read_character(path: str) -> Character:
    """The character of an ONCC .oni (its body, textures and animations found beside it), the
    first ONCC of a level .dat, or a bare body from a TRBS .oni (no ONCC in the file)."""
    path = os.fspath(path)
    with _library(path) as library:
        c = library.main
        oncc, trbs = _first(c, ONCC_TAG), _first(c, TRBS_TAG)
        if oncc is not None:
            return character_at(library, c, oncc)
        if trbs is not None:
            return bare_body(library, c, trbs)
        raise ObanError(path, "holds no character class (ONCC) or body set (TRBS)")


def read_characters(path: str) -> list[Character]:
    """Every ONCC of a level .dat (+ .raw) or a .oni, each with its body and animations."""
    path = os.fspath(path)
    with _library(path) as library:
        c = library.main
        found = [character_at(library, c, int(i)) for i in c.indices(ONCC_TAG) if not c.is_placeholder(int(i))]
        if not found:
            raise ObanError(path, "holds no character class (ONCC)")
        return found


def _first(c, tag):
    return next((int(i) for i in c.indices(tag) if not c.is_placeholder(int(i))), None)


def _main(c, tag, what):
    index = _first(c, tag)
    if index is None:
        raise ObanError(c.path, f"holds no {what}")
    return index


@contextlib.contextmanager
def _library(path):
    """A Library of the file at `path`, closed after; OSError while reading -> ObanError."""
    path = os.fspath(path)
    with _reading(path), Library(path) as library:
        yield library


@contextlib.contextmanager
def _reading(path):
    """OSError while reading -> ObanError naming the file."""
    try:
        yield
    except OSError as error:
        raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
