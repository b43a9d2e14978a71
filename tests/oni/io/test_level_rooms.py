"""A room's floor polygon found again in its BSP (oni/io/level/rooms.py, docs/level.md 5): OniSplit's
chain gives the authored corners in order (the sample's in test_level_rebuild_source.py); a slanted
floor; a tree of another shape the room's box cut by its walls; faults named."""

import numpy as np
import pytest

from oban_import.core.errors import ObanError
from oban_import.oni.io.level.environment import ROOM_DTYPE
from oban_import.oni.io.level.rooms import BSP_NODE_DTYPE, room_floors


def onisplit_chain(corners, floor, height):
    """The nodes and planes OniSplit's RoomBuilder makes of a floor polygon (edge i from corner i
    to i + 1 through a point one unit up; the ceiling; the floor negated), the last edge the root."""
    corners = np.asarray(corners, np.float64)
    planes, nodes = [-np.asarray(floor, np.float64), np.r_[floor[:3], floor[3] - height]], []
    for i in range(len(corners)):
        a, b = corners[i], corners[(i + 1) % len(corners)]
        normal = np.cross(b - a, b + [0, 1, 0] - a)
        normal /= np.linalg.norm(normal)
        planes.append(np.r_[normal, -normal @ a])
    count = len(planes)
    nodes = [(0, -1, -1), (1, 0, -1)] + [(k, k - 1, -1) for k in range(2, count)]
    return np.array(nodes, BSP_NODE_DTYPE), np.array(planes, np.float32), count - 1


def room(box, floor):
    r = np.zeros(1, ROOM_DTYPE)
    r["box"], r["floor"] = box, floor
    return r


def test_a_slanted_floor_of_six_corners_comes_back_in_order():
    corners = np.array([[0, 0, 0], [0, 0, 40], [20, 0, 60], [50, 0, 60], [60, 0, 30], [40, 0, 0]], np.float64)
    floor = np.array([0.3, 1, 0, 0]) / np.linalg.norm([0.3, 1, 0])
    corners[:, 1] = -(floor[0] * corners[:, 0]) / floor[1]
    nodes, planes, root = onisplit_chain(corners, floor, 20)
    points, counts = room_floors(nodes, planes, room([0, 0, 0, 60, 40, 60], floor), np.array([root]), "f", "AKBP")
    assert counts.tolist() == [6]
    assert np.abs(points - corners).max() < 1e-4


def test_a_tree_of_another_shape_is_the_box_cut_by_its_walls():
    # two walls as a front/back pair: x <= 50 and z <= 30 (inside where a x + c z + d <= 0), over a box 0..100
    planes = np.array([[1, 0, 0, -50], [0, 0, 1, -30], [0, -1, 0, 0], [0, 1, 0, -25]], np.float32)
    nodes = np.array([(0, 1, 3), (1, 2, -1), (2, -1, -1), (3, -1, -1)], BSP_NODE_DTYPE)
    points, counts = room_floors(nodes, planes, room([0, 0, 0, 100, 20, 100], [0, 1, 0, -5]), np.array([0]), "f", "x")
    assert counts.tolist() == [4]
    assert sorted(map(tuple, points.tolist())) == [(0, 5, 0), (0, 5, 30), (50, 5, 0), (50, 5, 30)]


@pytest.mark.parametrize("nodes, root, fault", [
    ([(0, 1, -1), (0, 0, -1)], 0, "loop at node 0"),
    ([(0, -1, -1)], 3, "root 3 is past the 1 nodes"),
    ([(9, -1, -1)], 0, "plane past the 3 planes"),
    ([(0, -1, -1)], 0, "leave nothing of its box"),
])
def test_faults_are_named(nodes, root, fault):
    planes = np.array([[-1, 0, 0, 5], [0, 0, 1, 0], [0, 1, 0, 0]], np.float32)   # x >= 5: outside the box
    with pytest.raises(ObanError, match=fault):
        room_floors(np.array(nodes, BSP_NODE_DTYPE), planes, room([0, 0, 0, 1, 1, 1], [0, 1, 0, 0]),
                    np.array([root]), "f", "AKBP")


def test_a_vertical_floor_is_named():
    with pytest.raises(ObanError, match="vertical"):
        room_floors(np.array([(0, -1, -1)], BSP_NODE_DTYPE), np.array([[1, 0, 0, 0]], np.float32),
                    room([0, 0, 0, 1, 1, 1], [1, 0, 0, 0]), np.array([0]), "f", "AKBP")


@pytest.mark.parametrize("spoil, fault", [
    (lambda r, planes: r["floor"].__setitem__((0, 1), np.nan), "not finite numbers"),
    (lambda r, planes: planes.__setitem__((3, 0), np.inf), "not finite numbers"),
    (lambda r, planes: planes.__setitem__(slice(3, 4), planes[2]), "two neighbouring edges that never meet"),
])
def test_a_floor_plane_or_walls_that_meet_nowhere_are_named(spoil, fault):
    """A NaN floor plane, an infinite wall, two parallel neighbouring edges: an ObanError naming
    the room, never numpy's own error."""
    corners = np.array([[0, 0, 0], [0, 0, 40], [40, 0, 40], [40, 0, 0]], np.float64)
    nodes, planes, root = onisplit_chain(corners, np.array([0, 1, 0, 0.0]), 20)
    r = room([0, 0, 0, 40, 20, 40], [0, 1, 0, 0])
    planes = planes.copy()
    spoil(r, planes)
    with pytest.raises(ObanError, match=f"room 0's .*{fault}"):
        room_floors(nodes, planes, r, np.array([root]), "f", "AKBP")
