"""Generated placed objects (docs/objects.md) for tests and benchmarks: a writer of OBOA,
M3GA, M3GM, PNTA, VCRA, TXCA, IDXA, TXMP and OBAN instances into a VR31 level + .raw and
into loose VR32 .oni files (one per named instance, linking the others as placeholders),
and slow per-element reference decoders to check the fast readers against.
"""

import os
import struct
from dataclasses import dataclass, field

import numpy as np

from oban_import.oni.container import (DESCRIPTOR_DTYPE, HEADER_DTYPE, PC_CHECKSUM, PLACEHOLDER, SIGNATURE,
                                       UNNAMED)
from oban_import.oni.oban import record_bytes

FORMATS = {"bgra4444": 0, "bgr555": 1, "bgra5551": 2, "rgba": 7, "bgr": 8, "dxt1": 9}
TAGS = {"OBOA", "M3GA", "M3GM", "PNTA", "VCRA", "TXCA", "IDXA", "TXMP", "OBAN", "ENVP"}


# --- the scene -------------------------------------------------------------------------

@dataclass
class GenTexture:
    name: str
    format: int
    width: int
    height: int
    raw: bytes                 # the first level
    mipmaps: bool = False
    flags: int = 0


@dataclass
class GenMesh:
    name: str
    points: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray
    strips: np.ndarray
    face_normals: np.ndarray
    face_indices: np.ndarray
    texture: str | None        # a GenTexture name


@dataclass
class GenObject:
    name: str
    meshes: list               # GenMesh names
    animation: str | None = None
    flags: int = 0x200
    physics: int = 1
    script_id: int = 0
    door_gunk_id: int = 0
    door_id: int = 0
    position: tuple = (0, 0, 0)
    rotation: tuple = (0, 0, 0, 1)
    scale: float = 1.0
    origin: tuple = (1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)


@dataclass
class Scene:
    textures: dict = field(default_factory=dict)
    meshes: dict = field(default_factory=dict)
    animations: dict = field(default_factory=dict)   # name: oban.Animation
    objects: list = field(default_factory=list)
    name: str = "gen"


def random_texture(rng, name, fmt, width, height, mipmaps=False, flags=0):
    size = _texture_bytes(fmt, width, height, mipmaps)
    raw = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    return GenTexture(name, fmt, width, height, raw[:_texture_bytes(fmt, width, height, False)], mipmaps,
                      flags | (1 if mipmaps else 0)), raw


def _texture_bytes(fmt, width, height, mipmaps):
    total = 0
    while True:
        total += ((width + 3) // 4) * ((height + 3) // 4) * 8 if fmt == 9 else width * height * (4 if fmt in (7, 8) else 2)
        if not mipmaps or (width == 1 and height == 1):
            return total
        width, height = max(1, width // 2), max(1, height // 2)


def random_mesh(rng, name, texture=None, strips=3, points=12):
    p = rng.normal(0, 10, (points, 3)).astype(np.float32)
    indices = []
    for _ in range(strips):
        length = int(rng.integers(3, 9))
        chain = rng.choice(points, length, replace=False) if length <= points else rng.integers(0, points, length)
        indices += [int(chain[0]) | -0x80000000] + [int(v) for v in chain[1:]]
    s = np.array(indices, np.int32)
    count = len(reference_strip_triangles(s))
    face_normals = rng.normal(size=(count + 2, 3)).astype(np.float32)
    face_indices = rng.integers(0, count + 2, count).astype(np.int32)
    return GenMesh(name, p, rng.normal(size=(points, 3)).astype(np.float32),
                   rng.random((points, 2)).astype(np.float32), s, face_normals, face_indices, texture)


# --- reference (slow, per element) ---------------------------------------------------------

def reference_strip_triangles(strips):
    """The strip walk of docs/objects.md 4, one index at a time: (a, b, c) per triangle."""
    out, first = [], None
    for i, value in enumerate(int(v) for v in strips):
        if value < 0:
            first, window = i, [value & 0x7FFFFFFF]
            continue
        window.append(value)
        if i - first >= 2:
            a, b, c = window[-3:]
            out.append((b, a, c) if (i - first) % 2 else (a, b, c))
    return out


def reference_triangles(mesh):
    result = []
    for k, (a, b, c) in enumerate(reference_strip_triangles(mesh.strips)):
        p = mesh.points.astype(np.float64)
        n = np.cross(p[b] - p[a], p[c] - p[a])
        if float(n @ mesh.face_normals[mesh.face_indices[k]].astype(np.float64)) < 0:
            a, c = c, a
        result.append((a, b, c))
    return np.array(result, np.int32).reshape(-1, 3)


def reference_pixels(texture):
    """(h, w, 4) float64 RGBA, one texel at a time."""
    w, h, raw, fmt = texture.width, texture.height, texture.raw, texture.format
    out = np.zeros((h, w, 4))
    for y in range(h):
        for x in range(w):
            out[y, x] = _texel(raw, fmt, w, x, y)
    return out


def _texel(raw, fmt, w, x, y):
    i = y * w + x
    if fmt in (7, 8):
        r, g, b, a = raw[4 * i:4 * i + 4]
        return (r / 255, g / 255, b / 255, a / 255) if fmt == 7 else (b / 255, g / 255, r / 255, 1.0)
    if fmt != 9:
        v = raw[2 * i] | raw[2 * i + 1] << 8
        if fmt == 0:
            return ((v >> 8 & 15) / 15, (v >> 4 & 15) / 15, (v & 15) / 15, (v >> 12) / 15)
        return ((v >> 10 & 31) / 31, (v >> 5 & 31) / 31, (v & 31) / 31, (v >> 15) if fmt == 2 else 1.0)
    block = (y // 4) * ((w + 3) // 4) + x // 4
    c0, c1, bits = struct.unpack_from("<HHI", raw, 8 * block)
    code = bits >> (2 * ((y % 4) * 4 + x % 4)) & 3
    e0 = ((c0 >> 11) / 31, (c0 >> 5 & 63) / 63, (c0 & 31) / 31)
    e1 = ((c1 >> 11) / 31, (c1 >> 5 & 63) / 63, (c1 & 31) / 31)
    if code < 2:
        return (*(e0 if code == 0 else e1), 1.0)
    if c0 > c1:
        t = 1 / 3 if code == 2 else 2 / 3
        return (*[(1 - t) * p + t * q for p, q in zip(e0, e1)], 1.0)
    return (*[(p + q) / 2 for p, q in zip(e0, e1)], 1.0) if code == 2 else (0.0, 0.0, 0.0, 0.0)


# --- instances -------------------------------------------------------------------------------

class Instances:
    """Instances (tag, full name or '', data past the record header, placeholder) and raw data."""

    def __init__(self):
        self.items, self.raw, self.by_name = [], bytearray(32), {}

    def add(self, tag, name, data=b"", placeholder=False):
        self.items.append((tag, name, bytes(data), placeholder))
        if name:
            self.by_name[name] = len(self.items) - 1
        return len(self.items) - 1

    def add_raw(self, data):
        offset = len(self.raw)
        self.raw += data
        self.raw += bytes(-len(self.raw) % 32)
        return offset


def link(index):
    return 0 if index is None else (index << 8) | 1


def counted(tag, values, dtype):
    values = np.ascontiguousarray(values, dtype)
    head = bytes(0x34) if tag == "PNTA" else bytes(0x14)
    return head + struct.pack("<I", len(values)) + values.tobytes()


def txmp_data(t, raw_offset, env=0):
    return bytes(0x80) + struct.pack("<IHHIIII", t.flags, t.width, t.height, t.format, 0, env, raw_offset) + bytes(8)


def m3gm_data(links):
    return bytes(4) + struct.pack("<7I", *links) + bytes(4)


def m3ga_data(links):
    return bytes(0x14) + struct.pack("<I", len(links)) + struct.pack(f"<{len(links)}I", *links)


def oboa_data(objects):
    out = bytearray(0x16) + struct.pack("<H", len(objects))
    for o, geometry, animation in objects:
        out += struct.pack("<4I2iIi", geometry, animation, 0, o.flags, o.door_gunk_id, o.door_id, o.physics,
                           o.script_id)
        out += struct.pack("<3f4ff12f", *o.position, *o.rotation, o.scale, *o.origin)
        out += o.name.encode("latin-1").ljust(64, b"\0") + bytes(64)
    return bytes(out)


def add_texture(inst, t, raw_full):
    return inst.add("TXMP", "TXMP" + t.name, txmp_data(t, inst.add_raw(raw_full)))


def add_mesh(inst, m, texture_index):
    arrays = [("PNTA", m.points, "<f4"), ("VCRA", m.normals, "<f4"), ("VCRA", m.face_normals, "<f4"),
              ("TXCA", m.uvs, "<f4"), ("IDXA", m.strips, "<i4"), ("IDXA", m.face_indices, "<i4")]
    links = [link(inst.add(tag, "", counted(tag, values, dtype))) for tag, values, dtype in arrays]
    return inst.add("M3GM", "M3GM" + m.name, m3gm_data(links + [link(texture_index)]))


def scene_instances(scene, raws, only=None):
    """All of a scene's instances in one set (a level), or, with `only` a full name, the
    instances of that one loose file: the named one plus its unnamed parts, every other
    named instance it links a placeholder."""
    inst = Instances()
    loose = only is not None

    def named(full, build):
        if full in inst.by_name:
            return inst.by_name[full]
        if loose and full != only:
            return inst.add(full[:4], full, placeholder=True)
        return build()

    def texture(name):
        if name is None:
            return None
        full = "TXMP" + name
        if name not in scene.textures:  # a missing texture: a placeholder with nothing behind it
            return inst.by_name.get(full) if full in inst.by_name else inst.add("TXMP", full, placeholder=True)
        return named(full, lambda: add_texture(inst, scene.textures[name], raws[name]))

    def mesh(name):
        full = "M3GM" + name
        if name not in scene.meshes:
            return inst.by_name.get(full) if full in inst.by_name else inst.add("M3GM", full, placeholder=True)
        return named(full, lambda: add_mesh(inst, scene.meshes[name], texture(scene.meshes[name].texture)))

    def animation(name):
        return named("OBAN" + name, lambda: inst.add("OBAN", "OBAN" + name, record_bytes(scene.animations[name])[8:]))

    if only is None or only.startswith("OBOA"):
        entries = []
        for o in scene.objects:
            geometry = inst.add("M3GA", "", m3ga_data([link(mesh(m)) for m in o.meshes])) if o.meshes else None
            entries.append((o, link(geometry), link(animation(o.animation)) if o.animation else 0))
        inst.add("OBOA", "OBOA" + scene.name, oboa_data(entries))
    if only is None:
        for name in scene.animations:
            animation(name)
    elif only.startswith("M3GM"):
        mesh(only[4:])
    elif only.startswith("TXMP"):
        texture(only[4:])
    elif only.startswith("OBAN"):
        animation(only[4:])
    return inst


# --- containers ------------------------------------------------------------------------------

def container_bytes(inst, version):
    """A VR31 level (its raw data returned beside it) or a VR32 .oni (raw table inside)."""
    count = len(inst.items)
    align = lambda n: (n + 31) // 32 * 32
    descriptors, data, names = np.zeros(count, DESCRIPTOR_DTYPE), bytearray(), bytearray()
    for i, (tag, name, body, placeholder) in enumerate(inst.items):
        flags = (PLACEHOLDER if placeholder else 0) | (0 if name else UNNAMED)
        name_offset = len(names)
        if name:
            names += name.encode("latin-1") + b"\0"
        if placeholder:
            descriptors[i] = (tag.encode()[::-1], 0, name_offset, 0, flags)
            continue
        record = struct.pack("<II", link(i), 1) + body
        descriptors[i] = (tag.encode()[::-1], len(data) + 8, name_offset, len(record), flags)
        data += record
    tags = sorted({tag for tag, *_ in inst.items})
    tables = 64 + 20 * count
    if version == "VR31":
        tables += 8 * count + 16 * len(tags)
    name_offset = align(tables)
    data_offset = align(name_offset + len(names))
    raw_offset = align(data_offset + len(data))
    header = np.zeros(1, HEADER_DTYPE)
    header["checksum"], header["signature"] = PC_CHECKSUM, SIGNATURE
    header["version"] = b"13RV" if version == "VR31" else b"23RV"
    header["instance_count"] = count
    header["data_offset"], header["data_size"] = data_offset, len(data)
    header["name_offset"], header["name_size"] = name_offset, len(names)
    raw = bytes(inst.raw) if len(inst.raw) > 32 else b""
    if version == "VR32" and raw:
        header["raw_offset"], header["raw_size"] = raw_offset, len(raw)
    out = bytearray(raw_offset if version == "VR31" or not raw else raw_offset + len(raw))
    out[:64 + 20 * count] = header.tobytes() + descriptors.tobytes()
    out[name_offset:name_offset + len(names)] = names
    out[data_offset:data_offset + len(data)] = data
    if version == "VR32" and raw:
        out[raw_offset:] = raw
    return bytes(out), raw


def write_level(scene, raws, folder, name="level9_Final"):
    """levelN_Final.dat + .raw; returns the .dat's path."""
    os.makedirs(folder, exist_ok=True)
    dat, raw = container_bytes(scene_instances(scene, raws), "VR31")
    path = os.path.join(folder, name + ".dat")
    with open(path, "wb") as f:
        f.write(dat)
    with open(os.path.join(folder, name + ".raw"), "wb") as f:
        f.write(raw or bytes(32))
    return path


def write_loose(scene, raws, folder):
    """One .oni per named instance; returns the OBOA file's path."""
    os.makedirs(folder, exist_ok=True)
    fulls = (["OBOA" + scene.name] + ["M3GM" + n for n in scene.meshes] + ["TXMP" + n for n in scene.textures]
             + ["OBAN" + n for n in scene.animations])
    for full in fulls:
        data, _ = container_bytes(scene_instances(scene, raws, only=full), "VR32")
        with open(os.path.join(folder, full + ".oni"), "wb") as f:
            f.write(data)
    return os.path.join(folder, "OBOA" + scene.name + ".oni")


def standard_scene(rng, missing_texture=False, missing_mesh=False):
    """Every case: each format with and without mipmaps, a shared texture, one and two
    meshes, static, animated and Localized objects; optionally a missing placeholder."""
    from generate import random_animation
    scene, raws = Scene(), {}
    for k, (fname, fmt) in enumerate(FORMATS.items()):
        for mip in (False, True):
            w, h = [(8, 8), (16, 4), (12, 20), (64, 8), (5, 3), (1, 1)][(k + mip) % 6]
            t, raw = random_texture(rng, f"tex_{fname}_{int(mip)}", fmt, w, h, mip, flags=0x04 * mip)
            scene.textures[t.name], raws[t.name] = t, raw
    names = list(scene.textures)
    for i, tname in enumerate(names):
        m = random_mesh(rng, f"mesh{i:02d}", tname)
        scene.meshes[m.name] = m
    scene.meshes["shared"] = random_mesh(rng, "shared", names[0])      # a texture two meshes use
    scene.meshes["plain"] = random_mesh(rng, "plain", None)            # no texture
    if missing_texture:
        scene.meshes["lost"] = random_mesh(rng, "lost", "nowhere")
    scene.animations["move"] = random_animation(rng, "move", flags=0x01)
    scene.animations["door"] = random_animation(rng, "door", flags=0x10)
    scene.animations["spare"] = random_animation(rng, "spare", flags=0)
    meshes = list(scene.meshes)
    for i in range(0, len(meshes), 2):
        pair = meshes[i:i + 2] if i % 4 == 0 else meshes[i:i + 1]
        anim = [None, "move", "door"][i // 2 % 3]
        q = rng.normal(size=4)
        scene.objects.append(GenObject(
            f"object{i:02d}", pair, anim, flags=0x200 | (0x400 if i % 3 == 0 else 0),
            physics=3 if anim else 1, script_id=i, door_gunk_id=-i, door_id=i // 2,
            position=tuple(rng.normal(0, 100, 3)), rotation=tuple(q / np.linalg.norm(q)),
            scale=float(rng.uniform(0.5, 2)), origin=tuple(rng.normal(size=12))))
    if missing_mesh:  # two objects needing the same missing mesh: each is told
        scene.objects.append(GenObject("ghost2", ["plain", "notthere"]))
        scene.objects.append(GenObject("ghost", ["notthere"]))
    return scene, raws
