"""Where a level's objects and door leaves stand (docs/level.md, "Doors"): the object lists'
Euler rotations, a leaf's mirror flip folded into its OBAN, and the origins Bungie's level
builder gives the leaves of a door that has no object setup.

A leaf plays its door class's OBAN as a placed object does (docs/objects.md 6): W(f) =
O . Rx(+pi/2) . T(p) . R(q) . Base . [Rx(pi) if flipped], so a flipped leaf is the same
animation with Base . Rx(pi) for its base."""

from dataclasses import replace

import numpy as np

from ..io.level.model import DOOR_FLAGS, SECOND_LEAF, Door, LevelContents
from ..io.oban.record import Animation, stored_columns
from ..io.objects.model import PlacedObject, placed

MIRROR = DOOR_FLAGS["Mirror"]


def euler_rotations(degrees) -> np.ndarray:
    """(..., 3) rotations in degrees about x, y, z -> (..., 3, 3) Rz(z) . Ry(y) . Rx(x), for
    column vectors (the object lists' rotations, docs/level.md 1)."""
    x, y, z = np.moveaxis(np.radians(np.asarray(degrees, np.float64)), -1, 0)
    zero, one = np.zeros_like(x), np.ones_like(x)
    rx = np.stack([one, zero, zero, zero, np.cos(x), -np.sin(x), zero, np.sin(x), np.cos(x)], -1)
    ry = np.stack([np.cos(y), zero, np.sin(y), zero, one, zero, -np.sin(y), zero, np.cos(y)], -1)
    rz = np.stack([np.cos(z), -np.sin(z), zero, np.sin(z), np.cos(z), zero, zero, zero, one], -1)
    shape = x.shape + (3, 3)
    return rz.reshape(shape) @ ry.reshape(shape) @ rx.reshape(shape)


def placements(positions, degrees) -> np.ndarray:
    """(n, 4, 4) T(position) . Rz . Ry . Rx of the object lists' positions and rotations."""
    matrices = np.tile(np.eye(4), (len(positions), 1, 1))
    matrices[:, :3, :3] = euler_rotations(np.reshape(degrees, (-1, 3)))
    matrices[:, :3, 3] = np.reshape(positions, (-1, 3))
    return matrices


def leaf_flips(mirror: bool, leaves: int) -> list[bool]:
    """Which of a door's leaves turn about x by pi: leaf 0 when the door is mirrored, leaf 1
    when it is not."""
    return [mirror, not mirror][:leaves]


def flipped(animation: Animation) -> Animation:
    """The animation a flipped leaf plays: its base times Rx(pi), the y and z columns
    negated (exact in float32)."""
    base = animation.base_matrix.reshape(4, 3).copy()
    base[1:3] = -base[1:3]
    return replace(animation, base_matrix=base.ravel(), warnings=list(animation.warnings))


def builder_origins(placement, first_mesh_points, double: bool, mirror: bool) -> tuple[np.ndarray, np.ndarray]:
    """((k, 4, 4) leaf origins, (k, 4, 4) closed-door gunk frames) of a door's k leaves as
    Bungie's level builder made them, for a door without object setups: the opening's centre
    from the bounding box of the first mesh of the class's leaf geometry (3ds Max axes: z
    up), each leaf of a double door half its width to a side (docs/level.md, "Doors")."""
    points = np.asarray(first_mesh_points, np.float64).reshape(-1, 3)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = np.array([(high[0] + low[0]) / 2, -low[2], (high[1] + low[1]) / 2])
    half = np.array([(high[0] - low[0]) / 2, 0.0, 0.0])
    offsets = [centre + half, centre - half] if double else [centre]
    quarter, turn = _turn((-90.0, 0.0, 0.0)), _turn((0.0, 180.0, 0.0))
    origins, gunk = [], []
    for offset, flip in zip(offsets, leaf_flips(mirror, len(offsets))):
        side = np.asarray(placement, np.float64) @ _translation(offset)
        origins.append(side @ quarter @ (turn if flip else np.eye(4)))
        gunk.append(side @ (turn if flip else np.eye(4)) @ quarter)
    return np.array(origins), np.array(gunk)


def _translation(offset):
    m = np.eye(4)
    m[:3, 3] = offset
    return m


def _turn(degrees):
    """4x4 of euler_rotations(degrees)."""
    m = np.eye(4)
    m[:3, :3] = euler_rotations(degrees)
    return m


def door_leaves(contents: LevelContents, setups: list) -> list[PlacedObject]:
    """Every leaf of every door of `contents` as a placed object playing its door class's OBAN
    (flipped where it turns): the object setup `setups` holds for it (PlacedObject.setup: its
    OBOA index), as stored; else one made by Bungie's rule from the class's geometry."""
    by_setup = {placed.setup: placed for placed in setups}
    leaves = []
    for door in contents.doors:
        flips = leaf_flips(bool(door.door_flags & MIRROR), door.leaf_count)
        made = _builder_leaves(door) if any(setup is None for setup in door.setups[:door.leaf_count]) else None
        for leaf, (setup, flip) in enumerate(zip(door.setups, flips)):
            placed = by_setup.get(setup) if setup is not None else None
            placed = placed if placed is not None else made[leaf] if made else None
            if placed is None:
                continue
            animation = door.door_class.animation if door.door_class is not None else None
            leaves.append(replace(placed, animation=flipped(animation) if animation and flip else animation,
                                  door_id=door.door_id, leaf=leaf))
    return leaves


def _builder_leaves(door: Door) -> list[PlacedObject] | None:
    """A door's leaves placed by Bungie's rule from its class's geometry (leaf 1 takes the
    class's second geometry where it has one), with the door's textures; None without a class
    or geometry."""
    geometries = door.door_class.geometries if door.door_class is not None else [None, None]
    first = geometries[0]
    meshes = first.meshes if first else []
    if not meshes:
        return None
    origins, _ = builder_origins(placements([door.position], [door.rotation])[0], meshes[0].points,
                                 door.leaf_count == 2, bool(door.door_flags & MIRROR))
    texture = door.textures[0]   # leaf 1 takes Texture1 too, where Texture2 is set (docs/level.md 3)
    made = []
    for leaf, origin in enumerate(origins):
        geometry = geometries[leaf] if leaf and geometries[1] is not None else first
        parts = geometry.meshes
        if texture is not None and (leaf == 0 or door.texture_names[1]):
            parts = [replace(mesh, texture=texture, texture_name=texture.name) for mesh in parts]
        made.append(placed(f"door_{door.door_id | SECOND_LEAF * leaf}", parts, stored_columns(origin),
                           door_id=door.door_id))
    return made


def furniture_objects(contents: LevelContents) -> list[PlacedObject]:
    """The furniture of the object lists as placed objects of their geometry's meshes, at
    T(position) . Rz . Ry . Rx (docs/level.md 4): what shows it where no environment does."""
    pieces = [piece for piece in contents.furniture if piece.geometry is not None]
    origins = placements([p.position for p in pieces], [p.rotation for p in pieces]) if pieces else []
    return [placed(f"furniture_{piece.id}", piece.geometry.meshes, stored_columns(origin), piece.position)
            for piece, origin in zip(pieces, origins)]
