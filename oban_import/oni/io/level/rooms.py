"""A room's floor polygon (docs/level.md 5, rooms): what OniSplit builds a room (AKVA) from,
found again in the room's BSP (AKBP). OniSplit chains one node per floor edge, the last edge
first, each node's back child the edge before it, then the ceiling and the negated floor: the
floor's corners are where consecutive edge planes meet the floor, in the order authored.
A tree of another shape (Bungie's levels) gives the room's box clipped by its vertical planes."""

import numpy as np

from ....core.errors import ObanError

BSP_COUNT_OFFSET = 0x16   # AKBP: u16 node count, then nodes from 0x18
BSP_NODE_DTYPE = np.dtype([("plane", "<i4"), ("back", "<i4"), ("front", "<i4")])
VERTICAL = 1e-6           # |normal.y| under this: a wall plane, an edge of the floor
FLOAT32_MAX = float(np.finfo(np.float32).max)


def bsp_nodes(data: bytes, path: str, label: str) -> np.ndarray:
    """An AKBP's nodes, their counts and indices checked."""
    if len(data) < BSP_COUNT_OFFSET + 2:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for an AKBP")
    count = int.from_bytes(data[BSP_COUNT_OFFSET:BSP_COUNT_OFFSET + 2], "little")
    if BSP_COUNT_OFFSET + 2 + BSP_NODE_DTYPE.itemsize * count > len(data):
        raise ObanError(path, f"{label}: {count} nodes do not fit in its {len(data)} bytes")
    nodes = np.frombuffer(data, BSP_NODE_DTYPE, count, BSP_COUNT_OFFSET + 2)
    children = np.stack([nodes["back"], nodes["front"]])
    if ((children < -1) | (children >= count)).any():
        raise ObanError(path, f"{label}: a node's child is past its {count} nodes")
    return nodes


def room_floors(nodes: np.ndarray, planes: np.ndarray, rooms: np.ndarray, roots: np.ndarray, path: str,
                label: str):
    """((k, 3) float32 corners, (r,) int32 corner counts): each room's floor polygon from the
    BSP `nodes` at its root (`planes`: PLEA's (n, 4), an index with its top bit set negated;
    `rooms`: ROOM_DTYPE, whose floor plane the corners lie on)."""
    polygons = [_floor(*_planes_below(nodes, planes, root, path, label, room), rooms[room], path, label, room)
                for room, root in enumerate(roots.tolist())]
    counts = np.array([len(p) for p in polygons], np.int32)
    corners = np.concatenate(polygons).astype(np.float32) + np.float32(0)   # -0 as 0
    return corners, counts


def _planes_below(nodes, planes, root, path, label, room) -> tuple[np.ndarray, bool]:
    """(the planes of the tree at `root`, (n, 4) float64 signed, in back-child order; whether
    the tree is OniSplit's chain)."""
    if not 0 <= root < len(nodes):
        raise ObanError(path, f"{label}: room {room}'s BSP root {root} is past the {len(nodes)} nodes")
    seen, order, stack, chain = set(), [], [root], True
    while stack:
        node = stack.pop()
        if node in seen:
            raise ObanError(path, f"{label}: room {room}'s BSP has a loop at node {node}")
        seen.add(node)
        order.append(node)
        back, front = int(nodes["back"][node]), int(nodes["front"][node])
        chain &= front == -1
        stack += [child for child in (front, back) if child != -1]
    index = nodes["plane"][order]
    if ((index & 0x7FFFFFFF) >= len(planes)).any():
        raise ObanError(path, f"{label}: room {room}'s BSP names a plane past the {len(planes)} planes")
    found = planes[index & 0x7FFFFFFF].astype(np.float64)
    return np.where((index < 0)[:, None], -found, found), chain


def _floor(planes, chain, room, path, label, index) -> np.ndarray:
    walls = np.abs(planes[:, 1]) < VERTICAL
    floor = room["floor"].astype(np.float64)
    box = room["box"].astype(np.float64)
    if not (np.isfinite(floor).all() and np.isfinite(box).all() and np.isfinite(planes).all()):
        raise ObanError(path, f"{label}: room {index}'s floor plane, box or BSP planes are not finite numbers")
    if abs(floor[1]) < VERTICAL:
        raise ObanError(path, f"{label}: room {index}'s floor plane is vertical: it holds no floor polygon")
    if chain and len(walls) >= 5 and walls[:-2].all() and not walls[-2:].any():
        edges = planes[:-2][::-1]   # edge 0 first
        corners = _meet(np.roll(edges, 1, axis=0), edges, floor)
        if corners is None:
            raise ObanError(path, f"{label}: room {index}'s floor has two neighbouring edges that never meet")
        return corners
    polygon = _clipped(planes[walls], box)
    if len(polygon) < 3:
        raise ObanError(path, f"{label}: room {index}'s walls leave nothing of its box")
    y = -(floor[0] * polygon[:, 0] + floor[2] * polygon[:, 2] + floor[3]) / floor[1]
    return np.column_stack([polygon[:, 0], y, polygon[:, 2]])


def _meet(first, second, floor) -> np.ndarray | None:
    """(n, 3): where each pair of planes meets the floor plane; None where a pair is parallel
    (or meets it out of float range)."""
    system = np.stack([first[:, :3], second[:, :3], np.broadcast_to(floor[:3], first[:, :3].shape)], axis=1)
    right = -np.stack([first[:, 3], second[:, 3], np.broadcast_to(floor[3], first[:, 3].shape)], axis=1)
    try:
        corners = np.linalg.solve(system, right[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return None
    return corners if np.isfinite(corners).all() and np.abs(corners).max(initial=0) < FLOAT32_MAX else None


def _clipped(walls, box) -> np.ndarray:
    """(k, 3) with y 0: the room's box seen from above, cut by every wall (inside where
    a x + c z + d <= 0), corners in the order Sutherland-Hodgman leaves them."""
    polygon = np.array([[box[0], 0, box[2]], [box[3], 0, box[2]], [box[3], 0, box[5]], [box[0], 0, box[5]]])
    for wall in walls:
        side = polygon[:, [0, 2]] @ wall[[0, 2]] + wall[3]
        following = np.roll(np.arange(len(polygon)), -1)
        inside, crossing = side <= 0, (side <= 0) != (side[following] <= 0)
        t = side / np.where(crossing, side - side[following], 1.0)
        cut = polygon + t[:, None] * (polygon[following] - polygon)
        polygon = np.stack([polygon, cut], axis=1)[np.stack([inside, crossing], axis=1)]
        if len(polygon) < 3:
            break
    return polygon
