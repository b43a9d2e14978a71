"""A level of placed objects alone (an OBOA and the classes it links, no environment:
docs/level.md 13) as the OniSplit XML its plain `-create` makes that OBOA of: every field of
every object setup as it is to be stored (the quaternion and the origin matrix as their
float32 values, which `-create` keeps bit for bit, unlike `-create:level`'s <Physics>), an
unnamed M3GA per object linking its M3GMs by name, its OBAN by name. What the XML cannot carry
is refused: more setups than an OBOA counts, a byte past a setup's name (its String64 and the 64
bytes of padding after it, which `-create` writes 0). No bpy."""

from dataclasses import dataclass
from xml.sax.saxutils import escape

import numpy as np

from ....core.errors import ObanError
from ..container.container import ENVP_TAG, M3GA_TAG, M3GM_TAG, OBAN_TAG, OBOA_TAG
from ..container.instance_file import instance_name
from ..container.library import Library, open_library
from ..objects.meshes import parse_m3ga
from ..objects.oboa import MAX_SETUPS, OBJECT_DTYPE, parse_oboa
from .master_xml import flag_names
from .object_xml import xml_floats

OBOA_FILE = "OBOA{}.xml"          # `-create` names the instance after its file
SETUP_FLAGS = {"InUse": 0x200, "NoCollision": 0x400, "NoGravity": 0x800, "FaceCollision": 0x1000}
PHYSICS = ("None", "Static", "Linear", "Animated", "Newton")
NAME_BYTES = 63                   # String64, NUL-ended


@dataclass
class Setup:
    """One object setup as it is to be stored (docs/objects.md 3)."""
    name: str
    flags: int
    door_gunk_id: int
    door_id: int
    physics: int
    script_id: int
    position: np.ndarray          # (3,) float32
    rotation: np.ndarray          # (4,) float32, x y z w as stored
    scale: float
    origin: np.ndarray            # 12 float32, 3 x 4 by columns
    geometries: list              # M3GM names without 'M3GM', in M3GA order ([]: no M3GA, an unused setup)
    animation: str = ""           # the OBAN's name without 'OBAN' ('' none)


def oboa_xml(setups: list) -> str:
    """The OBOA XML of `setups` in order, each object's M3GA after it; ObanError for more setups
    than an OBOA counts (OniSplit's XmlImporter reads 65535 of a 16-bit counted array and fails
    on the next) or a mesh or animation name no instance can take (instance_name)."""
    if len(setups) > MAX_SETUPS:
        raise ObanError("OBOA", f"{len(setups)} object setups: an OBOA counts at most {MAX_SETUPS}")
    objects, arrays = [], []
    for setup in setups:
        geometry = ""
        if setup.geometries:
            geometry = f"#{len(arrays) + 1}"
            links = "".join(f"<Link>{escape(instance_name('M3GM', name))}</Link>" for name in setup.geometries)
            arrays.append(f'<M3GA id="{len(arrays) + 1}"><Geometries>{links}</Geometries></M3GA>')
        animation = escape(instance_name("OBAN", setup.animation)) if setup.animation else ""
        physics = PHYSICS[setup.physics] if setup.physics < len(PHYSICS) else str(setup.physics)
        objects.append(
            f"<OBOAObject><Geometry>{geometry}</Geometry><Animation>{animation}</Animation><Particle></Particle>"
            f"<Flags>{flag_names(setup.flags, SETUP_FLAGS) or 'None'}</Flags>"
            f"<DoorGunkId>{setup.door_gunk_id}</DoorGunkId><DoorId>{setup.door_id}</DoorId><PhysicsType>{physics}</PhysicsType>"
            f"<ScriptId>{setup.script_id}</ScriptId><Position>{xml_floats(setup.position)}</Position>"
            f"<Rotation>{xml_floats(setup.rotation)}</Rotation><Scale>{xml_floats(setup.scale)}</Scale>"
            f"<Transform>{xml_floats(setup.origin)}</Transform><Name>{escape(setup.name)}</Name></OBOAObject>")
    return ('<?xml version="1.0" encoding="utf-8"?>\n<Oni><OBOA id="0"><Objects>' + "".join(objects)
            + "</Objects></OBOA>" + "".join(arrays) + "</Oni>\n")


@dataclass
class StoredSetups:
    """A file's one OBOA as stored: its name, each setup (Setup) and whether it links particles."""
    name: str
    setups: list
    particles: list               # [bool] by setup: an ENVP linked, which the XML does not carry


def stored_setups(path: str, library: Library | None = None) -> StoredSetups:
    """The object setups of the named OBOA of a level .dat or an OBOA .oni, as stored, each
    M3GA's M3GMs and the OBAN by name. ObanError where the file holds no named OBOA, or more
    than one, or a link is wrong, or a setup holds a byte past its name (unused_bytes)."""
    with open_library(path, library) as library:
        c = library.main
        arrays = [i for i in c.with_data(OBOA_TAG) if not c.is_unnamed(i)]
        if len(arrays) != 1:
            raise ObanError(path, f"holds {len(arrays)} named object setup arrays (OBOA); a level of placed "
                                  "objects alone holds one")
        oboa = arrays[0]
        records = parse_oboa(c.instance(oboa, OBOA_TAG)[0], path, c.label(oboa))
        unused = np.flatnonzero(unused_bytes(records).any(axis=1))
        if unused.size:
            n = int(unused[0])
            more = f" ({unused.size - 1} more setups likewise)" if unused.size > 1 else ""
            raise ObanError(path, f"{c.label(oboa)} object {n} ('{_name(records[n])}'): a byte past its name is not 0 "
                                  "(in its name field or the 64 bytes after it, which OniSplit's XML does not carry: "
                                  f"-create writes them 0){more}")
        setups, particles = setups_of(c, oboa, records)
        name = c.full_name(oboa)[4:]
        instance_name("OBOA", name)   # -create names the OBOA after its XML file: one it can open
        return StoredSetups(name, setups, particles)


def setups_of(c, oboa: int, records: np.ndarray) -> tuple:
    """([Setup] of `records`, the OBOA at `oboa` of `c`: each M3GA's M3GMs and the OBAN by
    name, [whether it links particles]); ObanError where a mesh has no name."""
    setups, particles = [], []
    for n, record in enumerate(records):
        array = c.link(int(record["geometry"]), M3GA_TAG, oboa, f"object {n} geometry")
        meshes = [] if array is None else [
            c.link(value, M3GM_TAG, array, "mesh") for value in
            parse_m3ga(c.instance(array, M3GA_TAG)[0], c.path, c.label(array))]
        if any(mesh is None or c.is_unnamed(mesh) for mesh in meshes):
            raise ObanError(c.path, f"{c.label(oboa)} object {n}: its geometry holds a mesh of no name, which "
                                    "the XML cannot link")
        animation = c.link(int(record["animation"]), OBAN_TAG, oboa, f"object {n} animation")
        particles.append(c.link(int(record["particles"]), ENVP_TAG, oboa, f"object {n} particles") is not None)
        setups.append(Setup(
            name=_name(record), flags=int(record["flags"]),
            door_gunk_id=int(record["door_gunk_id"]), door_id=int(record["door_id"]),
            physics=int(record["physics"]), script_id=int(record["script_id"]),
            position=record["position"].copy(), rotation=record["rotation"].copy(),
            scale=float(record["scale"]), origin=record["origin"].copy(),
            geometries=[c.full_name(mesh)[4:] for mesh in meshes],
            animation=c.full_name(animation)[4:] if animation is not None else ""))
    return setups, particles


def unused_bytes(records: np.ndarray) -> np.ndarray:
    """(n, 128) bool of OBJECT_DTYPE `records`: each byte of the name field past its first NUL
    and of the 64 after it that is not 0."""
    start = OBJECT_DTYPE.fields["name"][1]
    tail = records.view(np.uint8).reshape(len(records), OBJECT_DTYPE.itemsize)[:, start:start + 128]
    ended = np.cumsum(tail == 0, axis=1) > 0          # from each name's NUL on (the padding: always)
    ended[:, 64:] = True
    return ended & (tail != 0)


def _name(record) -> str:
    return record["name"].split(b"\0", 1)[0].decode("latin-1")
