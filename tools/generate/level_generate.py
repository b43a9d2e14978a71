"""Generated level parts (docs/level.md) for tests and benchmarks, written from their byte
layouts (docs/level.md 1, 2, 5): an environment (AKEV and its arrays), object lists (BINACJBO),
door classes (DOOR), furniture geometry (OFGA) and a level instance (ONLV with its object
quad map ONOA and object setups OBOA), into a VR31 level + .raw and into loose VR32 .oni files
(one per named instance, linking the others as placeholders; the object lists beside the ONLV,
a space in a list's name `_` in its file's).
"""

import os
import struct
from dataclasses import dataclass, field

import numpy as np
from objects_generate import (GenObject, Instances, add_mesh, add_texture, counted, link, m3ga_data, oboa_data,
                              random_mesh, random_texture, write_level_files)

from oban_import.oni.io.container.instance_file import instance_file_bytes
from oban_import.oni.io.oban.record import record_bytes

TYPES = {"Character": "CHAR", "Combat": "CMBT", "Console": "CONS", "Door": "DOOR", "Flag": "FLAG",
         "Furniture": "FURN", "Melee": "MELE", "Neutral": "NEUT", "Particle": "PART", "Patrol Path": "PATR",
         "PowerUp": "PWRU", "Sound": "SNDG", "Trigger Volume": "TRGV", "Trigger": "TRIG", "Turret": "TURR",
         "Weapon": "WEAP"}
DOUBLE_DOOR, SECOND_LEAF = 0x80, 0x1000
ROOM_SIZE, ONLV_SIZE, AKEV_SIZE = 116, 0x2FC, 0x78


# --- the level -------------------------------------------------------------------------------

@dataclass
class GenEnvironment:
    name: str
    points: np.ndarray             # (p, 3) float32
    uvs: np.ndarray                # (t, 2) float32
    quad_points: np.ndarray        # (q, 4) int32
    quad_uvs: np.ndarray           # (q, 4) int32
    shades: np.ndarray             # (q, 4) uint32
    flags: np.ndarray              # (q,) uint32
    tags: np.ndarray               # (q,) int32
    quad_textures: np.ndarray      # (q,) uint16
    planes: np.ndarray             # (n, 4) float32
    collision_planes: np.ndarray   # (q,) int32
    collision_boxes: np.ndarray    # (q, 6) float32
    textures: list                 # [TXMP name without 'TXMP' | None (link 0)]
    rooms: list = field(default_factory=list)         # [(box 6, flags, floor 4, height)]
    door_frames: list = field(default_factory=list)   # [(quad, box 6, position 3, facing, width, height)]
    bounding_box: tuple = (0, 0, 0, 0, 0, 0)


@dataclass
class GenObjectEntry:
    """An object of a list: `payload` its type's own bytes (a door's and furniture's made by
    door_payload and furniture_payload)."""
    type: str
    id: int
    flags: int = 0
    position: tuple = (0, 0, 0)
    rotation: tuple = (0, 0, 0)
    payload: bytes = b""


@dataclass
class GenDoor:
    class_name: str
    door_id: int
    key_id: int = 0
    flags: int = 0
    center: tuple = (0, 0, 0)
    radius_squared: float = 900.0
    texture1: str = ""
    texture2: str = ""
    events: list = field(default_factory=list)   # [(type, script name | target id | None)]


@dataclass
class GenDoorClass:
    name: str
    geometries: tuple              # (OFGA name | None, OFGA name | None)
    animation: str | None
    sound_attenuation: float = 0.5
    sounds_allowed: int = 1
    sound_type: int = 1
    sound_radius: float = 100.0
    open_sound: str = "door_open"
    close_sound: str = "door_close"


@dataclass
class GenLevel:
    name: str = "gen"
    environment: GenEnvironment | None = None
    lists: dict = field(default_factory=dict)            # list name: [GenObjectEntry]
    door_classes: dict = field(default_factory=dict)     # name: GenDoorClass
    geometries: dict = field(default_factory=dict)       # OFGA name: [(gunk flags, M3GM name)]
    meshes: dict = field(default_factory=dict)           # objects_generate.GenMesh by name
    textures: dict = field(default_factory=dict)         # objects_generate.GenTexture by name
    texture_raws: dict = field(default_factory=dict)     # name: its raw bytes, mipmaps included
    animations: dict = field(default_factory=dict)       # name: oban.Animation
    setups: list | None = None     # [objects_generate.GenObject] of the OBOA; None: no OBOA
    object_quads: list = field(default_factory=list)     # [(object tag, quad indices)] of the ONOA
    sky: str = "night"
    with_onlv: bool = True


# --- bytes -----------------------------------------------------------------------------------

def name_bytes(text, size):
    return text.encode("latin-1")[:size].ljust(size, b"\0")


def door_payload(door: GenDoor) -> bytes:
    """A DOOR's own data from 0x24: class, ids, flags, frame position, radius², textures, events."""
    out = bytearray(name_bytes(door.class_name, 63))
    out += struct.pack("<3H3ff", door.door_id, door.key_id, door.flags, *door.center, door.radius_squared)
    out += name_bytes(door.texture1, 63) + name_bytes(door.texture2, 63) + struct.pack("<H", len(door.events))
    for kind, value in door.events:
        out += struct.pack("<H", kind)
        out += name_bytes(value, 32) if kind == 1 else struct.pack("<H", value) if kind else b""
    return bytes(out)


def furniture_payload(class_name: str, particle: str) -> bytes:
    return name_bytes(class_name, 32) + name_bytes(particle, 48)


def object_bytes(o: GenObjectEntry) -> bytes:
    """u32 n, then the object: type (reversed letters), id, flags, position, rotation, its own
    data, padded to a multiple of 4."""
    body = o.type.encode("latin-1")[::-1] + struct.pack("<2I6f", o.id, o.flags, *o.position, *o.rotation)
    body += o.payload
    body += bytes(-len(body) % 4)
    return struct.pack("<I", len(body)) + body


def list_bytes(objects, version=39) -> bytes:
    body = b"".join(object_bytes(o) for o in objects) + bytes(4)
    return b"CJBO" + struct.pack("<2I", len(body) + 4, version) + body


def akev_arrays(env: GenEnvironment) -> dict:
    """Each AKEV array instance's data (past the record header), by tag."""
    quads = b"".join(struct.pack("<4i4i4I I i", *p, *u, *s, f, t) for p, u, s, f, t in
                     zip(env.quad_points.tolist(), env.quad_uvs.tolist(), env.shades.tolist(), env.flags.tolist(),
                         env.tags.tolist()))
    rooms = bytearray()
    for box, flags, floor, height in env.rooms:
        room = bytearray(ROOM_SIZE)
        struct.pack_into("<6f", room, 0x30, *box)
        struct.pack_into("<I4ff", room, 0x5C, flags, *floor, height)
        rooms += room
    frames = b"".join(struct.pack("<I6f3f3f", quad, *box, *position, facing, width, height)
                      for quad, box, position, facing, width, height in env.door_frames)
    head = bytes(0x14)
    return {
        "PNTA": counted("PNTA", env.points, "<f4"), "PLEA": counted("PLEA", env.planes, "<f4"),
        "TXCA": counted("TXCA", env.uvs, "<f4"), "AGQG": head + struct.pack("<I", len(env.flags)) + quads,
        "AGQR": head + struct.pack("<I", len(env.quad_textures)) + b"".join(
            struct.pack("<HH", t, 0) for t in env.quad_textures.tolist()),
        "AGQC": head + struct.pack("<I", len(env.collision_planes)) + b"".join(
            struct.pack("<i6f", p, *b) for p, b in zip(env.collision_planes.tolist(), env.collision_boxes.tolist())),
        "AKVA": head + struct.pack("<I", len(env.rooms)) + bytes(rooms),
        "AKDA": head + struct.pack("<I", len(env.door_frames)) + frames,
    }


AKEV_ORDER = ("PNTA", "PLEA", "TXCA", "AGQG", "AGQR", "AGQC", "AGDB", "TXMA", "AKVA", "AKBA", "IDXA", "IDXA",
              "AKBP", "ABNA", "AKOT", "AKAA", "AKDA")


def door_class_data(d: GenDoorClass, geometries, animation) -> bytes:
    return struct.pack("<3IfIif", *geometries, animation, d.sound_attenuation, d.sounds_allowed, d.sound_type,
                       d.sound_radius) + name_bytes(d.open_sound, 32) + name_bytes(d.close_sound, 32) + bytes(8)


def geometry_data(elements) -> bytes:
    """OFGA: ENVP link 0 at 0x10, count at 0x14, (gunk flags, M3GM link, padding) from 0x18."""
    return bytes(0x14) + struct.pack("<I", len(elements)) + b"".join(
        struct.pack("<II4x", flags, mesh) for flags, mesh in elements)


# --- instances ---------------------------------------------------------------------------------

def level_instances(level: GenLevel, only=None) -> Instances:
    """All of a level's instances in one set (a level .dat), or with `only` a full name the
    instances of that loose file: it first, its unnamed parts, every other named instance it
    links a placeholder."""
    inst = Instances()
    main = inst.add(only[:4], only) if only else None

    def named(full, build):
        if full == only:
            inst.items[main] = (full[:4], full, build(), False)
            inst.by_name[full] = main
            return main
        if full in inst.by_name:
            return inst.by_name[full]
        if only is not None:
            return inst.add(full[:4], full, placeholder=True)
        index = inst.add(full[:4], full)
        inst.items[index] = (full[:4], full, build(), False)
        inst.by_name[full] = index   # a build that adds its instance last and takes it back leaves it pointing there
        return index

    def texture(name):
        if name is None:
            return None
        if name not in level.textures:
            full = "TXMP" + name
            return inst.by_name[full] if full in inst.by_name else inst.add("TXMP", full, placeholder=True)
        return named("TXMP" + name, lambda: _texture_data(inst, level, name))

    def mesh(name):
        return named("M3GM" + name, lambda: _mesh_data(inst, level, name, texture))

    def animation(name):
        return None if name is None else named("OBAN" + name, lambda: record_bytes(level.animations[name])[8:])

    def geometry(name):
        return None if name is None else named("OFGA" + name, lambda: geometry_data(
            [(flags, link(mesh(m))) for flags, m in level.geometries[name]]))

    def door_class(name):
        d = level.door_classes[name]
        return named("DOOR" + name, lambda: door_class_data(d, [link(geometry(g)) for g in d.geometries],
                                                            link(animation(d.animation))))

    def environment():
        env = level.environment
        return named("AKEV" + env.name, lambda: _akev_data(inst, env, texture))

    def object_list(name):
        return named("BINACJBO" + name, lambda: _bina_data(inst, level.lists[name]))

    def onlv():
        return named("ONLV" + level.name, lambda: _onlv_data(inst, level, environment, mesh, animation))

    if only is None:
        if level.with_onlv:
            onlv()
        elif level.environment is not None:
            environment()
        for name in level.lists:
            object_list(name)
        for name in level.door_classes:
            door_class(name)
        for name in level.geometries:
            geometry(name)
    else:
        build = {"ONLV": onlv, "AKEV": environment, "DOOR": lambda: door_class(only[4:]),
                 "OFGA": lambda: geometry(only[4:]), "M3GM": lambda: mesh(only[4:]),
                 "TXMP": lambda: texture(only[4:]), "OBAN": lambda: animation(only[4:])}
        build["BINA"] = lambda: object_list(only[len("BINACJBO"):])
        build[only[:4]]()
    return inst


def _bina_data(inst, objects):
    """A BINA: u32 size and u32 raw offset of its list."""
    data = list_bytes(objects)
    return struct.pack("<2I", len(data), inst.add_raw(data))


def _texture_data(inst, level, name):
    index = add_texture(inst, level.textures[name], level.texture_raws[name])
    return inst.items.pop(index)[2]


def _mesh_data(inst, level, name, texture):
    index = add_mesh(inst, level.meshes[name], texture(level.meshes[name].texture))
    return inst.items.pop(index)[2]


def _akev_data(inst, env, texture):
    """The AKEV's data, its arrays added in link order (OniSplit's), its TXMPs after them."""
    arrays = akev_arrays(env)
    indices = {}
    for tag in AKEV_ORDER:
        if tag not in indices:
            indices[tag] = inst.add(tag, "", arrays.get(tag, bytes(0x18)))
    txma = [link(texture(name)) for name in env.textures]
    inst.items[indices["TXMA"]] = ("TXMA", "", bytes(0x14) + struct.pack(f"<I{len(txma)}I", len(txma), *txma), False)
    data = struct.pack("<17I6f", *[link(indices[tag]) for tag in AKEV_ORDER], *env.bounding_box)
    return data + bytes(AKEV_SIZE - len(data))


def _onlv_data(inst, level, environment, mesh, animation):
    data = bytearray(ONLV_SIZE)
    data[:64] = name_bytes(level.name, 64)
    quads = []
    for tag, indices in level.object_quads:
        quads.append((tag, link(inst.add("IDXA", "", counted("IDXA", np.asarray(indices), "<i4")))))
    values = {0x40: link(environment()) if level.environment else 0,
              0x54: link(inst.add("ONSK", "ONSK" + level.sky, placeholder=True)) if level.sky else 0,
              0x6C: link(inst.add("ONOA", "", bytes(0x14) + struct.pack("<I", len(quads)) + b"".join(
                  struct.pack("<iI", tag, idxa) for tag, idxa in quads))),
              0x70: link(inst.add("ENVP", "", bytes(0x18))), 0x2F8: link(inst.add("CRSA", "", bytes(0x18)))}
    if level.setups is not None:
        entries = [(o, link(inst.add("M3GA", "", m3ga_data([link(mesh(m)) for m in o.meshes]))) if o.meshes else 0,
                    link(animation(o.animation)) if o.animation else 0) for o in level.setups]
        values[0x44] = link(inst.add("OBOA", "", oboa_data(entries)))
    for offset, value in values.items():
        struct.pack_into("<I", data, offset, value)
    return bytes(data)


# --- files -------------------------------------------------------------------------------------

def write_level(level: GenLevel, folder, name="level7_Final"):
    """levelN_Final.dat + .raw; returns the .dat's path."""
    return write_level_files(level_instances(level), folder, name)


def loose_names(level: GenLevel) -> list:
    """The full names of a level's loose files, the ONLV (or AKEV) first."""
    first = ["ONLV" + level.name] if level.with_onlv else \
        ["AKEV" + level.environment.name] if level.environment is not None else []
    if level.with_onlv and level.environment is not None:
        first.append("AKEV" + level.environment.name)
    return (first + ["BINACJBO" + n for n in level.lists] + ["DOOR" + n for n in level.door_classes]
            + ["OFGA" + n for n in level.geometries] + ["M3GM" + n for n in level.meshes]
            + ["TXMP" + n for n in level.textures] + ["OBAN" + n for n in level.animations])


def write_loose(level: GenLevel, folder) -> str:
    """One .oni per named instance (instance_file_bytes: OniSplit's layout); returns the first's path."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for full in loose_names(level):
        inst = level_instances(level, only=full)
        items = [(tag.encode("latin-1")[::-1], name, None if placeholder else data)
                 for tag, name, data, placeholder in inst.items]
        paths.append(os.path.join(folder, full.replace(" ", "_") + ".oni"))
        with open(paths[-1], "wb") as f:
            f.write(instance_file_bytes(items, bytes(inst.raw)))
    return paths[0]


# --- the standard level ------------------------------------------------------------------------

def door(object_id, door, position=(0, 0, 0), rotation=(0, 0, 0), flags=0):
    return GenObjectEntry("DOOR", object_id, flags, position, rotation, door_payload(door))


def furniture(object_id, class_name, particle="", position=(0, 0, 0), rotation=(0, 0, 0), flags=8):
    return GenObjectEntry("FURN", object_id, flags, position, rotation, furniture_payload(class_name, particle))


def random_environment(rng, name, tags, textures, quads=60, points=40):
    """`quads` quads on `points` random points (a third of them triangles), every flag bit on
    some quad, each of `tags` on one or more quads, textures from `textures` (names)."""
    p = rng.normal(0, 50, (points, 3)).astype(np.float32)
    corners = np.array([rng.choice(points, 4, replace=False) for _ in range(quads)], np.int32)
    flags = rng.integers(0, 1 << 32, quads, dtype=np.uint64).astype(np.uint32)
    flags[:32] = 1 << np.arange(32, dtype=np.uint64)
    triangle = rng.random(quads) < 1 / 3
    flags = np.where(triangle, flags | 0x40, flags & ~np.uint32(0x40)).astype(np.uint32)
    corners[triangle, 3] = corners[triangle, 2]
    uvs = rng.uniform(-3, 3, (points // 2, 2)).astype(np.float32)
    quad_uvs = rng.integers(0, len(uvs), (quads, 4)).astype(np.int32)
    quad_tags = np.full(quads, -1, np.int32)
    quad_tags[:len(tags)] = tags
    quad_tags[len(tags):2 * len(tags)] = tags
    planes = rng.normal(size=(quads // 2, 4)).astype(np.float32)
    collision = rng.integers(0, len(planes), quads).astype(np.int32) | np.where(rng.random(quads) < 0.5, -0x80000000,
                                                                               0).astype(np.int32)
    return GenEnvironment(
        name=name, points=p, uvs=uvs, quad_points=corners, quad_uvs=quad_uvs,
        shades=rng.integers(0, 1 << 32, (quads, 4), dtype=np.uint64).astype(np.uint32), flags=flags, tags=quad_tags,
        quad_textures=rng.integers(0, len(textures), quads).astype(np.uint16), planes=planes,
        collision_planes=collision, collision_boxes=rng.normal(0, 20, (quads, 6)).astype(np.float32),
        textures=list(textures),
        rooms=[(tuple(rng.normal(0, 50, 6)), int(rng.integers(0, 16)), tuple(rng.normal(size=4)),
                float(rng.uniform(10, 40))) for _ in range(3)],
        door_frames=[(int(rng.integers(0, quads)), tuple(rng.normal(0, 50, 6)), tuple(rng.normal(0, 50, 3)),
                      float(rng.uniform(0, 6)), float(rng.uniform(5, 20)), float(rng.uniform(20, 40)))
                     for _ in range(2)],
        bounding_box=tuple(rng.normal(0, 50, 6)))


def standard_level(rng, environment=True, missing_texture=False):
    """Every case: single, double (a class with a second leaf) and mirrored doors, doors with
    every event type and without events, with and without textures, every door flag; furniture
    of one and two elements; every known object type in its list, an empty list; an environment
    with triangles, every flag bit, quads tagged with each door, furniture and other objects;
    OBOA setups of every leaf (and two unused ones), an ONOA."""
    from oban_generate import random_animation
    level = GenLevel(name="gen")
    for name, fmt in (("wall", 8), ("floor", 0), ("glass", 7), ("panel", 9), ("DOORTEX", 1)):
        t, raw = random_texture(rng, name, fmt, 8, 4)
        level.textures[name], level.texture_raws[name] = t, raw
    for name, texture in (("leaf", "panel"), ("trim", "panel"), ("leaf2", "panel"), ("box", "wall"),
                          ("pane", "glass")):
        level.meshes[name] = random_mesh(rng, name, texture)
    level.animations["door_anim"] = random_animation(rng, "door_anim", frames=40, flags=0x10)
    level.geometries = {"dr_main": [(0x10000, "leaf"), (0x10080, "trim")], "dr_other": [(0x10000, "leaf2")],
                        "fu_box": [(0, "box")], "fu_shelf": [(0, "box"), (0x10000 | 0x80, "pane")]}
    level.door_classes = {"dr_single": GenDoorClass("dr_single", ("dr_main", None), "door_anim"),
                          "dr_double": GenDoorClass("dr_double", ("dr_main", "dr_other"), "door_anim", 0.25, 3, -1,
                                                    50.0, "", "shut")}
    events = [(k, "script_%d" % k if k == 1 else None if k == 0 else 100 + k) for k in range(12)]
    doors = [GenDoor("dr_single", 1, 0, 0, (1, 2, 3)),
             GenDoor("dr_double", 2, 5, 0x80 | 0x100, (4, 5, 6), 400.0, "DOORTEX", "wall", events),
             GenDoor("dr_single", 3, 1, 0x1 | 0x4 | 0x10 | 0x200 | 0x400 | 0x800 | 0x1000, (7, 8, 9), 100.0,
                     "doortex", "", events[1:3]),
             GenDoor("dr_double", 4, 2, 0x80, (0, 0, 0), 900.0, "", "DOORTEX", [(0, None)])]
    level.lists["Door"] = [door(k + 1, d, tuple(rng.normal(0, 50, 3)), tuple(rng.uniform(-180, 180, 3)))
                           for k, d in enumerate(doors)]
    level.lists["Furniture"] = [furniture(5, "fu_box", "", tuple(rng.normal(0, 50, 3)), (0, 90, 0)),
                                furniture(6, "fu_shelf", "fx_smoke", tuple(rng.normal(0, 50, 3)), (10, 20, 30))]
    for k, (list_name, kind) in enumerate(t for t in TYPES.items() if t[1] not in ("DOOR", "FURN")):
        level.lists[list_name] = [GenObjectEntry(kind, 7 + 2 * k + j, j, tuple(rng.normal(0, 9, 3)),
                                                 tuple(rng.normal(0, 9, 3)), rng.bytes(4 * (k + j)))
                                  for j in range(k % 3)]
    tags = [3 << 24 | 1, 3 << 24 | 2, 3 << 24 | 3, 3 << 24 | 4, 5 << 24 | 5, 5 << 24 | 6, 13 << 24 | 9,
            14 << 24 | 10, 15 << 24 | 11, 7 << 24 | 0xABCDEF]
    textures = list(level.textures) + (["nowhere"] if missing_texture else []) + [None]
    level.environment = random_environment(rng, "gen", tags, textures) if environment else None
    if environment:
        level.object_quads = [(tag, np.flatnonzero(level.environment.tags == tag)) for tag in tags[:6]]
    level.setups = []
    for d in doors:
        for leaf in range(2 if d.flags & DOUBLE_DOOR else 1):
            level.setups.append(GenObject(f"door_{d.door_id}_{leaf}", ["leaf"], "door_anim",
                                          door_id=d.door_id | SECOND_LEAF * leaf, origin=tuple(rng.normal(size=12))))
    level.setups += [GenObject("", [], flags=0, physics=0, door_id=0) for _ in range(2)]
    return level


def rare_cases(level: GenLevel) -> GenLevel:
    """`level` (standard_level's, with its environment) given what no other level holds: door 99,
    a second door of door id 1; two door frames (AKDA), of quads 20 and 21 (bits 20 and 21 alone,
    no object: drawn), the first at the InDoorFrame door 3's frame position, the second at that
    door's own position; door 1's tag listed again in the ONOA, with another list."""
    level.lists["Door"].append(door(99, GenDoor("dr_single", 1, 0, 0, (9, 8, 7))))
    in_door_frame = level.lists["Door"][2]
    center = struct.unpack_from("<3f", in_door_frame.payload, 0x45)   # its door's frame position (docs/level.md 1)
    level.environment.door_frames = [(20, (0, 0, 0, 1, 1, 1), center, 0.0, 10.0, 20.0),
                                     (21, (0, 0, 0, 1, 1, 1), in_door_frame.position, 0.0, 10.0, 20.0)]
    tag = level.object_quads[0][0]
    level.object_quads.append((tag, [len(level.environment.flags) - 1]))
    return level


def retail_level(rng, quads=47_000, doors=60, objects=100, points=30_000):
    """A level of retail size for benchmarks/level_rebuild_speed.py: an environment of `quads`
    quads (a third triangles, no flag, no tag) on `points` points, 8 textures; `doors` doors of
    two classes (every fourth a double door: a second leaf), each leaf an OBOA setup named as
    -create:level names it (door_<id>, the second leaf's door id | 0x1000); `objects` placed
    objects (OBOA setups of a mesh each, of 10 meshes, every fifth with an OBAN of its own)."""
    from oban_generate import random_animation
    level = GenLevel(name="retail", setups=[])
    for k in range(8):
        name = f"retail_tex{k}"
        level.textures[name], level.texture_raws[name] = random_texture(rng, name, 8, 32, 32)
    level.textures["DOORTEX"], level.texture_raws["DOORTEX"] = random_texture(rng, "DOORTEX", 1, 16, 16)
    for name in ("leaf", "leaf2"):
        level.meshes[name] = random_mesh(rng, name, "DOORTEX", strips=6, points=24)
    for k in range(10):
        level.meshes[f"prop{k}"] = random_mesh(rng, f"prop{k}", f"retail_tex{k % 8}", strips=8, points=32)
    level.animations["door_anim"] = random_animation(rng, "door_anim", frames=40, flags=0x10)
    level.geometries = {"dr_main": [(0x10000, "leaf")], "dr_other": [(0x10000, "leaf2")]}
    level.door_classes = {"dr_single": GenDoorClass("dr_single", ("dr_main", None), "door_anim"),
                          "dr_double": GenDoorClass("dr_double", ("dr_main", "dr_other"), "door_anim")}
    gen_doors = [GenDoor("dr_double" if k % 4 == 0 else "dr_single", k + 1, 0, DOUBLE_DOOR if k % 4 == 0 else 0,
                         tuple(rng.normal(0, 500, 3))) for k in range(doors)]
    level.lists["Door"] = [door(k + 1, d, tuple(rng.normal(0, 500, 3)), (0, float(rng.uniform(0, 360)), 0))
                           for k, d in enumerate(gen_doors)]
    for d in gen_doors:
        for leaf in range(2 if d.flags & DOUBLE_DOOR else 1):
            level.setups.append(GenObject(f"door_{d.door_id | SECOND_LEAF * leaf}", ["leaf"],
                                          "door_anim", door_id=d.door_id | SECOND_LEAF * leaf))
    for k in range(objects):
        animation = None
        if k % 5 == 0:
            animation = f"prop_anim{k}"
            level.animations[animation] = random_animation(rng, animation, frames=60)
        position = tuple(float(v) for v in rng.normal(0, 500, 3))
        level.setups.append(GenObject(f"prop_object{k:03d}", [f"prop{k % 10}"], animation, flags=0x200,
                                      physics=3 if animation else 1, position=position,
                                      origin=(1, 0, 0, 0, 1, 0, 0, 0, 1, *position)))
    env = random_environment(rng, "retail", [], list(level.textures)[:8], quads=quads, points=points)
    env.flags = np.where(env.flags & 0x40, 0x40, 0).astype(np.uint32)
    env.tags[:] = -1
    env.door_frames = []
    level.environment = env
    return level
