"""Random OBAN animations for tests and benchmarks, covering every flag, dense and
sparse keys, keys up to 150 degrees apart, quaternion sign flips, non-unit
quaternions, and identity, uniform, rotated-uniform and axis-aligned base matrices."""

import math

import numpy as np

from oban_import.engine.axes import DEFAULT_AXES, transforms_many
from oban_import.oni.oban import KEY_DTYPE, KNOWN_FLAGS, Animation

BASES = ("identity", "uniform", "rotated_uniform", "rotated_diagonal")


def random_unit_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def turn(q, axis, angle):
    """q followed by a rotation of `angle` about `axis` (Hamilton product on x y z w)."""
    axis = axis / np.linalg.norm(axis)
    r = np.append(axis * math.sin(angle / 2), math.cos(angle / 2))
    x1, y1, z1, w1 = r
    x2, y2, z2, w2 = q
    return np.array([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                     w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2])


def base_matrix(rng, kind):
    """12 floats by columns: a rotation times an axis-aligned scale (all exact in Blender)."""
    scale = {"identity": np.ones(3), "uniform": np.full(3, rng.uniform(0.2, 3.0)),
             "rotated_uniform": np.full(3, rng.uniform(0.2, 3.0)),
             "rotated_diagonal": rng.uniform(0.2, 3.0, 3)}[kind]
    rotation = np.eye(3)
    if kind.startswith("rotated"):
        x, y, z, w = random_unit_quaternion(rng)
        rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                             [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                             [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    columns = np.vstack([(rotation * scale).T, rng.normal(0, 5, 3) if kind != "identity" else np.zeros(3)])
    return columns.astype(np.float32).ravel()


def random_animation(rng, name="generated", frames=None, key_count=None, flags=None,
                     max_angle=math.radians(150), base=None):
    frames = int(frames or rng.integers(2, 400))
    if key_count is None:
        key_count = frames if rng.random() < 0.3 else int(rng.integers(2, max(3, frames // 4) + 1))
    key_count = max(2, min(key_count, frames)) if frames > 1 else 1
    inner = rng.choice(np.arange(1, frames - 1), size=key_count - 2, replace=False) if key_count > 2 else []
    key_frames = np.sort(np.concatenate([[0, frames - 1][:key_count], inner])).astype(np.uint32)

    keys = np.zeros(key_count, KEY_DTYPE)
    q = random_unit_quaternion(rng)
    position = rng.normal(0, 100, 3)
    for i in range(key_count):
        if i:
            q = turn(q, rng.normal(size=3), rng.uniform(0, max_angle))
            position = position + rng.normal(0, 10, 3)
        stored = q * rng.uniform(0.5, 2.0) if rng.random() < 0.2 else q  # not always unit length
        keys[i]["rotation"] = -stored if rng.random() < 0.3 else stored  # sign flips
        keys[i]["position"] = position
    keys["frame"] = key_frames
    if flags is None:
        flags = int(rng.integers(0, KNOWN_FLAGS + 1))
    base = base or BASES[int(rng.integers(len(BASES)))]
    return Animation(name=name, flags=flags, start_matrix=np.zeros(12, np.float32),
                     base_matrix=base_matrix(rng, base), ticks_per_frame=80, frames=frames,
                     door_open_frame=50 if flags & 0x10 else 0, keys=keys)


def plain_keys(animation):
    """Keys as plain Python tuples, for the reference engine."""
    return [(tuple(map(float, k["rotation"])), tuple(map(float, k["position"])), int(k["frame"]))
            for k in animation.keys]


def level_file_bytes(animations, others=()):
    """A VR31 level file (spec 7.3) holding `animations` and `others`, a list of
    (reversed 4-byte tag, name, instance data) of other kinds, interleaved with them."""
    from oban_import.oni.container import DESCRIPTOR_DTYPE, HEADER_DTYPE, OBAN_TAG, SIGNATURE
    from oban_import.oni.container import PC_CHECKSUM
    from oban_import.oni.oban import record_bytes

    instances = [(OBAN_TAG, b"OBAN" + a.name.encode(), record_bytes(a, i + 1, 1)) for i, a in enumerate(animations)]
    for j, (tag, name, data) in enumerate(others):  # spread the others among the OBANs
        instances.insert(min(len(instances), 3 * j + 1), (tag, tag[::-1] + name.encode(),
                                                          (len(instances) + 1).to_bytes(4, "little") + bytes(4) + data))
    count = len(instances)
    tags = sorted({tag for tag, _, _ in instances})
    align = lambda n: (n + 31) // 32 * 32
    data_offset = align(64 + 20 * count + 8 * count + 16 * len(tags))
    data, names, descriptors = bytearray(), bytearray(), np.zeros(count, DESCRIPTOR_DTYPE)
    for i, (tag, name, record) in enumerate(instances):
        descriptors[i] = (tag, len(data) + 8, len(names), len(record), 0)
        data += record
        names += name + b"\0"
    name_offset = align(data_offset + len(data))
    header = np.zeros(1, HEADER_DTYPE)
    header["checksum"], header["version"], header["signature"] = PC_CHECKSUM, b"13RV", SIGNATURE
    header["instance_count"], header["name_count"], header["template_count"] = count, count, len(tags)
    header["data_offset"], header["data_size"] = data_offset, len(data)
    header["name_offset"], header["name_size"] = name_offset, len(names)
    name_descriptors = np.array([(i, 0) for i in range(count)], "<u4").tobytes()
    templates = b"".join(bytes(8) + tag + sum(t == tag for t, _, _ in instances).to_bytes(4, "little") for tag in tags)
    out = bytearray(name_offset + len(names))
    table = header.tobytes() + descriptors.tobytes() + name_descriptors + templates
    out[:len(table)] = table
    out[data_offset:data_offset + len(data)] = data
    out[name_offset:] = names
    return bytes(out)


def object_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = [sA] M [sA]^-1 of one animation: for empties and objects whose data lives in converted axes."""
    return next(transforms_many([animation], axes, scale))


def camera_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = T(sAt) . A . L of one animation: a Blender camera looks where the Oni camera looked."""
    return next(transforms_many([animation], axes, scale, camera=True))
