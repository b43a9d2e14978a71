"""A door's leaf setups as OniSplit v0.9.99.2's `-create:level` makes them (Oni.Level/
LevelImporter.cs ImportDoor, LevelDatWriter.cs WriteOBOA; docs/level.md 13): every field of
each leaf's OBOA record but its links, from the door's placement, id and flags and its class's
first geometry and animation, in float32 in OniSplit's order of operations (its Matrix is
row-vector: p' = p·M, stored as the 4x3 rows M11 … M43). No bpy."""

from dataclasses import replace

import numpy as np

from ..level.model import DOOR_FLAGS, DOUBLE_DOOR, SECOND_LEAF, Door
from ..objects.oboa import OBJECT_DTYPE

F32 = np.float32
MIRROR = DOOR_FLAGS["Mirror"]     # the first leaf turned half round (a DoubleDoor's second not); without: the second
LEAF_FLAGS = 0x1000 | 0x200      # FaceCollision | InUse
UNSCRIPTED = 0xFFFF              # ObjectSetup.ScriptId's default
RADIANS = F32(0.017453294)       # MathHelper.ToRadians
HALF_PI, PI = F32(1.5707965), F32(3.141593)


def moved_leaves(doors: list, listed: list) -> tuple:
    """({stored setup index: OBJECT_DTYPE record} of the leaves of each door of `doors` (the
    level read's, with their setups) that `listed` (the object list written, in order:
    -create:level's ids 1…, each door's id its own, checked before) places otherwise, as
    -create:level makes them; why that cannot be done for one, '' where it can)."""
    found, shared = {}, {door.door_id for door in doors if sum(d.door_id == door.door_id for d in doors) > 1}
    for door in doors:
        new = listed[door.id - 1]
        if np.asarray(new.position, F32).tobytes() + np.asarray(new.rotation, F32).tobytes() == (
                door.position.astype(F32).tobytes() + door.rotation.astype(F32).tobytes()):
            continue
        records = leaf_records(replace(door, position=new.position, rotation=new.rotation))
        label = f"door {door.id} ('{door.class_name}') is moved"
        if records is None:
            return {}, f"{label} and its class's first geometry, its meshes or its animation is not in the level read"
        if door.door_id in shared or None in door.setups[:door.leaf_count]:
            return {}, (f"{label} and its door id {door.door_id} is another door's too, or names no leaf setup of "
                        "the level read (which of the stored setups are its leaves cannot be told)")
        found.update(zip(door.setups, records))
    return found, ""


def leaf_records(door: Door) -> list:
    """OBJECT_DTYPE records of `door`'s leaves (one, two for a DoubleDoor), as -create:level
    writes them, links 0; None where its class, first geometry's meshes or animation is not
    found (-create:level could not make them either)."""
    door_class = door.door_class
    geometry = door_class.geometries[0] if door_class is not None else None
    if geometry is None or door_class.animation is None or any(e.mesh is None for e in geometry.elements):
        return None
    scale = np.asarray(door_class.animation.base_matrix, F32)[[0, 4, 8]]   # its 4x3's M11, M22, M33
    origins = leaf_origins(door.position, door.rotation, door.door_flags, scale,
                           [element.mesh.points for element in geometry.elements])
    records = np.zeros(len(origins), OBJECT_DTYPE)
    for side, origin in enumerate(origins):
        door_id = door.door_id | side * SECOND_LEAF
        records[side]["flags"], records[side]["door_id"], records[side]["script_id"] = LEAF_FLAGS, door_id, UNSCRIPTED
        records[side]["rotation"] = (0, 0, 0, -1)   # the identity, w negated as stored
        records[side]["scale"] = 1
        records[side]["origin"] = origin[:, :3].ravel()
        records[side]["name"] = f"door_{door_id}".encode("latin-1")
    return list(records)


def leaf_origins(position, rotation, door_flags: int, scale, points: list) -> list:
    """Each leaf's origin (a 4x4 float32, row-vector) of a door at `position` turned by
    `rotation` (degrees, float32 as OniSplit reads them), its class animation's base scale
    (3) and the points of its class's first geometry's meshes."""
    m = _product(_scale(scale), _rotation(0, -HALF_PI))
    lowest = left = right = F32(0)
    for mesh in points:
        turned = _transform(np.asarray(mesh, F32), m)
        if len(turned):
            lowest, left = min(lowest, turned[:, 1].min()), min(left, turned[:, 0].min())
            right = max(right, turned[:, 0].max())
    x, y, z = (np.asarray(rotation, F32) * RADIANS).tolist()
    placed = _product(_product(_product(_rotation(0, F32(x)), _rotation(1, F32(y))), _rotation(2, F32(z))),
                      _translation(np.asarray(position, F32)))
    placed[3, :3] = placed[3, :3] - np.array([0, 1, 0], F32) * lowest
    double = bool(door_flags & DOUBLE_DOOR)
    shift = (right - left) / F32(2) if double else F32(0)
    origins = []
    for side in range(2 if double else 1):
        side_placed = _product(_translation(np.array([shift if side == 0 else F32(0) - shift, 0, 0], F32)), placed)
        if bool(door_flags & MIRROR) == (side == 0):
            origins.append(_product(_product(_rotation(1, PI), m), side_placed))
        else:
            origins.append(_product(m, side_placed))
    return origins


def _product(a, b) -> np.ndarray:
    """Matrix a·b summed term by term left to right, in float32."""
    return ((a[:, 0:1] * b[0:1] + a[:, 1:2] * b[1:2]) + a[:, 2:3] * b[2:3]) + a[:, 3:4] * b[3:4]


def _transform(points, m) -> np.ndarray:
    """Vector3.Transform: p·M + translation, left to right, in float32."""
    return ((points[:, 0:1] * m[0, :3] + points[:, 1:2] * m[1, :3]) + points[:, 2:3] * m[2, :3]) + m[3, :3]


def _cos_sin(angle):
    """FMath.Cos, FMath.Sin (in double, then float32) and 0f - sin (+0, not -0, of 0)."""
    s = F32(np.sin(np.float64(angle)))
    return F32(np.cos(np.float64(angle))), s, F32(0) - s


def _rotation(axis, angle) -> np.ndarray:
    """OniSplit's Matrix.CreateRotationX, Y or Z (`axis` 0, 1, 2): row vectors, float32."""
    c, s, minus_s = _cos_sin(angle)
    i, j = [k for k in range(3) if k != axis]
    m = np.eye(4, dtype=F32)
    m[i, i], m[j, j] = c, c
    m[i, j], m[j, i] = (minus_s, s) if axis == 1 else (s, minus_s)
    return m


def _scale(scale) -> np.ndarray:
    m = np.eye(4, dtype=F32)
    m[[0, 1, 2], [0, 1, 2]] = scale
    return m


def _translation(position) -> np.ndarray:
    m = np.eye(4, dtype=F32)
    m[3, :3] = position
    return m
