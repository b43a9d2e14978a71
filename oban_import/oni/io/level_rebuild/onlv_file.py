"""A level's ONLV instance file as OniSplit's `-create:level` writes it (its LevelDatWriter,
docs/level.md 13), with the object setups given: the level instance, its OBOA, ONOA, ENVP and
CRSA as stored in the level read, and the OBOA's setups in the order given, each either one
of the stored setups (a door's leaf: its unnamed M3GMs and their arrays copied) or a placed
object's setup as the scene has it (its M3GMs and OBAN linked by name). Laid out as
LevelDatWriter creates its instances: the ONLV, what it links in field order, then per setup
its meshes (a named one a placeholder per link, an unnamed one followed by what it links,
field by field), its M3GA, its OBAN, its particles (ENVP), then the quad lists (IDXA) of the
ONOA and the character classes (ONCC) its corpses name, once each. An unedited level's setups
give back the ONLV `.oni` OniSplit wrote, byte for byte. No bpy."""

from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ..container.container import (CRSA_TAG, ENVP_TAG, IDXA_TAG, LINK_FLAG, M3GA_TAG, M3GM_TAG, OBAN_TAG, OBOA_TAG,
                                   ONCC_TAG, ONLV_TAG, ONOA_TAG, PNTA_TAG, TXCA_TAG, TXMP_TAG, VCRA_TAG, Container,
                                   counted, u32_at)
from ..container.instance_file import instance_file_bytes, instance_name
from ..level.onlv import ONLV_LINKS, ONLV_SIZE, ONOA_DTYPE
from ..objects.meshes import M3GM_LINKS_OFFSET, parse_m3ga
from ..objects.oboa import MAX_SETUPS, OBJECT_DTYPE, OBOA_OBJECTS_OFFSET, parse_oboa

AISA_TAG = b"ASIA"
ONLV_FIELDS = tuple(sorted([*ONLV_LINKS.values(), (0x5C, AISA_TAG)]))   # its links, in the order LevelDatWriter makes them
M3GM_FIELDS = (PNTA_TAG, VCRA_TAG, VCRA_TAG, TXCA_TAG, IDXA_TAG, IDXA_TAG, TXMP_TAG)
M3GA_COUNT_AT, ONOA_COUNT_AT = 20, 20
CRSA_COUNT_AT, CORPSE_BYTES, CORPSE_CLASS_AT = 20, 1100, 160   # a corpse: 160 bytes, ONCC, 19 matrices, a box
UNUSED = 32                                                      # setups -create:level adds after its own


@dataclass
class StoredLevel:
    """The ONLV of a level file and its OBOA's setups as stored."""
    container: Container
    onlv: int
    oboa: int
    records: np.ndarray           # OBJECT_DTYPE, as stored


class _Layout:
    """The new file's instances in the order they are created (LevelDatWriter's)."""

    def __init__(self, c: Container):
        self.c, self.tags, self.names, self.data, self.index, self.named = c, [], [], [], {}, {}

    def add(self, tag: bytes, name: str, data) -> int:
        self.tags.append(tag)
        self.names.append(name)
        self.data.append(data)
        return len(self.tags) - 1

    def copy(self, source: int, once: bool = False) -> int:
        """Instance `source` of the level file, new for each link as LevelDatWriter writes
        them (a .dat keeps one of instances alike): a named one as a placeholder (`once`: one
        for all links to it), an unnamed one with its data (its own links set by link())."""
        c = self.c
        if not c.is_unnamed(source):
            name = c.full_name(source)
            if once and name in self.named:
                return self.named[name]
            self.named[name] = self.add(c.tag_of(source), name, None)
            return self.named[name]
        self.index[source] = self.add(c.tag_of(source), "", bytearray(c.instance(source, c.tag_of(source))[0]))
        return self.index[source]

    def link(self, owner: int, at: int, target: int) -> None:
        self.data[owner][at:at + 4] = (target << 8 | LINK_FLAG).to_bytes(4, "little")

    def file_bytes(self) -> bytes:
        return instance_file_bytes([(tag, name, None if data is None else bytes(data))
                                    for tag, name, data in zip(self.tags, self.names, self.data)])


def stored_level(c: Container) -> StoredLevel:
    """The one ONLV with data of `c` and its OBOA (in the same file); ObanError otherwise."""
    found = c.with_data(ONLV_TAG)
    if len(found) != 1:
        raise ObanError(c.path, f"holds {len(found)} level instances (ONLV); a level file holds one")
    onlv = found[0]
    data, _ = c.instance(onlv, ONLV_TAG)
    if len(data) < ONLV_SIZE:
        raise ObanError(c.path, f"{c.label(onlv)}: {len(data)} bytes, too short for an ONLV (0x{ONLV_SIZE:x})")
    oboa = c.link(u32_at(data, ONLV_LINKS["objects"][0]), OBOA_TAG, onlv, "objects")
    if oboa is None or c.is_placeholder(oboa):
        raise ObanError(c.path, f"{c.label(onlv)}: its object setups (OBOA) are not in the file")
    records = parse_oboa(c.instance(oboa, OBOA_TAG)[0], c.path, c.label(oboa)).copy()
    return StoredLevel(c, onlv, oboa, records)


def onlv_file_bytes(level: StoredLevel, setups: list) -> bytes:
    """The ONLV .oni with `setups` in order: each an int (that stored setup, copied) or a
    (Setup, OBJECT_DTYPE record or None) (a placed object; the 64 bytes after its name, which
    -create:level fills with its mesh's file name, from that record, else 0, and the bytes past
    the end of its name too where the name is the record's)."""
    c = level.container
    if len(setups) + UNUSED > MAX_SETUPS:
        raise ObanError(c.path, f"{len(setups)} object setups and the {UNUSED} unused -create:level adds: "
                                f"{len(setups) + UNUSED}, more than an OBOA counts ({MAX_SETUPS})")
    out = _Layout(c)
    onlv_data, _ = c.instance(level.onlv, ONLV_TAG)
    onlv, oboa, linked = out.add(ONLV_TAG, c.full_name(level.onlv), bytearray(onlv_data)), None, {}
    for at, tag in ONLV_FIELDS:
        linked[tag] = target = c.link(u32_at(onlv_data, at), tag, level.onlv, f"link at 0x{at:x}")
        if target is not None:
            new = out.add(OBOA_TAG, "", None) if target == level.oboa else out.copy(target)
            oboa = new if target == level.oboa else oboa
            out.link(onlv, at, new)
    records = np.zeros(len(setups) + UNUSED, OBJECT_DTYPE)
    for k, setup in enumerate(setups):
        records[k] = _setup(out, level, setup)
    head = bytearray(c.instance(level.oboa, OBOA_TAG)[0][:OBOA_OBJECTS_OFFSET])
    head[OBOA_OBJECTS_OFFSET - 2:] = len(records).to_bytes(2, "little")
    out.data[oboa] = head + records.tobytes()
    for tag, links in ((ONOA_TAG, _onoa_links), (CRSA_TAG, _corpse_links)):
        source = linked[tag]
        if source is None or not c.is_unnamed(source):
            continue
        data = c.instance(source, tag)[0]
        for at, target_tag in links(c, source):
            target = c.link(u32_at(data, at), target_tag, source, f"link at {at}")
            if target is not None:
                out.link(out.index[source], at, out.copy(target, once=target_tag == ONCC_TAG))
    return out.file_bytes()


def _setup(out: _Layout, level: StoredLevel, setup) -> np.void:
    """One setup's record, what it links added to `out`."""
    if isinstance(setup, int):
        c, oboa = out.c, level.oboa
        stored, record = level.records[setup], level.records[setup].copy()
        array = c.link(int(stored["geometry"]), M3GA_TAG, oboa, f"object {setup} geometry")
        meshes = [] if array is None else [
            c.link(value, M3GM_TAG, array, "mesh") for value in parse_m3ga(c.instance(array, M3GA_TAG)[0], c.path,
                                                                          c.label(array))]
        geometry = [_mesh(out, mesh) for mesh in meshes if mesh is not None]
        animation = c.link(int(stored["animation"]), OBAN_TAG, oboa, f"object {setup} animation")
        particles = c.link(int(stored["particles"]), ENVP_TAG, oboa, f"object {setup} particles")
        record["geometry"] = _m3ga(out, geometry) if array is not None else 0
        record["animation"] = out.copy(animation) << 8 | LINK_FLAG if animation is not None else 0
        record["particles"] = out.copy(particles) << 8 | LINK_FLAG if particles is not None else 0
        return record
    scene, stored = setup
    record = np.zeros((), OBJECT_DTYPE)
    geometry = [out.add(M3GM_TAG, instance_name("M3GM", name), None) for name in scene.geometries]
    record["geometry"] = _m3ga(out, geometry)
    record["animation"] = (out.add(OBAN_TAG, instance_name("OBAN", scene.animation), None) << 8 | LINK_FLAG
                           if scene.animation else 0)
    for field in ("flags", "door_gunk_id", "door_id", "physics", "script_id", "position", "rotation", "scale",
                  "origin"):
        record[field] = getattr(scene, field)
    name = scene.name.encode("latin-1")
    record["name"] = name
    if stored is not None:   # the bytes past its name as read
        record["padding"] = stored["padding"]
        if stored["name"].split(b"\0", 1)[0] == name:
            record["name"] = stored["name"]
    return record


def placed_file_bytes(name: str, setups: list) -> bytes:
    """A loose .oni of an OBOA named `name` holding the placed objects' setups alone, each a
    (Setup, record or None) as onlv_file_bytes takes them, their meshes and OBANs by name
    (place.py merges them into the ONLV -create:level writes)."""
    out = _Layout(None)
    oboa = out.add(OBOA_TAG, instance_name("OBOA", name), None)
    records = np.zeros(len(setups), OBJECT_DTYPE)
    for k, setup in enumerate(setups):
        records[k] = _setup(out, None, setup)
    head = bytearray(OBOA_OBJECTS_OFFSET)
    head[OBOA_OBJECTS_OFFSET - 2:] = len(records).to_bytes(2, "little")
    out.data[oboa] = head + records.tobytes()
    return out.file_bytes()


def _mesh(out: _Layout, mesh: int) -> int:
    """A setup's M3GM: a named one a placeholder; an unnamed one with its arrays and texture."""
    c = out.c
    if not c.is_unnamed(mesh):
        return out.copy(mesh)
    copied = out.copy(mesh)
    data = c.instance(mesh, M3GM_TAG)[0]
    for k, tag in enumerate(M3GM_FIELDS):
        at = M3GM_LINKS_OFFSET + 4 * k
        target = c.link(u32_at(data, at), tag, mesh, f"link {k}")
        if target is not None:
            out.link(copied, at, out.copy(target))
    return copied


def _m3ga(out: _Layout, meshes: list) -> int:
    """A new M3GA of `meshes` (the new file's indices); its link."""
    data = bytearray(M3GA_COUNT_AT) + len(meshes).to_bytes(4, "little") + b"".join(
        (mesh << 8 | LINK_FLAG).to_bytes(4, "little") for mesh in meshes)
    return out.add(M3GA_TAG, "", data) << 8 | LINK_FLAG


def _onoa_links(c: Container, onoa: int) -> list:
    entries = counted(c.instance(onoa, ONOA_TAG)[0], ONOA_DTYPE, c.path, c.label(onoa), "object")
    return [(ONOA_COUNT_AT + 4 + ONOA_DTYPE.itemsize * k + 4, IDXA_TAG) for k in range(len(entries))]


def _corpse_links(c: Container, crsa: int) -> list:
    data = c.instance(crsa, CRSA_TAG)[0]
    count = u32_at(data, CRSA_COUNT_AT)
    if CRSA_COUNT_AT + 4 + count * CORPSE_BYTES > len(data):
        raise ObanError(c.path, f"{c.label(crsa)}: {count} corpses do not fit in {len(data)} bytes")
    return [(CRSA_COUNT_AT + 4 + CORPSE_BYTES * k + CORPSE_CLASS_AT, ONCC_TAG) for k in range(count)]
