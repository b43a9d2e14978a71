"""A mesh object's M3GM parts as the scene holds them (docs/objects.md 10). A part an import
made and the user left as it was (its fingerprint, normals as drawn included, as made, its
source file still holding the arrays read) is its stored arrays, to be written back bit for bit;
any other is made of the faces Blender holds: each point in the object's own frame with the
import's scale and axes undone, a vertex for each point, UV and normal its corners take, the
faces as triangles, stripped. All in bulk: no loop per vertex, corner or face."""

import functools
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np

from ....blender import compat
from ....core.errors import ObanError
from ....core.id_properties import numbers, plain, texts
from ...blender.shared.fingerprints import face_corners, face_parts, part_shapes
from ...blender.shared.mesh_data import corner_uvs, face_ints
from ...blender.shared.meshes import converted_normals
from ...engine.to_oni import oni_directions, oni_points
from ...io.objects.mesh_write import mesh_file_bytes, triangle_strips
from ...io.objects.properties import (MESH_PARTS, PART_FILES, PART_FINGERPRINTS, PART_INSTANCES, PART_SHAPES,
                                      PART_STORED, TEXTURE_FILE)
from ...io.objects.read import stored_mesh
from .as_read import normals_close, rows_close

MAX_POINTS = 2047       # the engine's buffers hold fewer than 2048 points of a mesh (BFW_Motoko.h, M3cMaxObjVertices)
MAX_TRIANGLES = 4095    # ... and fewer than 4096 face normals (M3cMaxObjTris)
UNCHANGED = "unchanged import"
EDITED = "edited"
REMADE = "as the scene holds it"   # an unedited part made of its faces: its source no longer holds it
SINGULAR = 1e-9    # a frame whose linear part's determinant is this small (relative) flattens a mesh


@dataclass
class Part:
    """One M3GM to write: its arrays as the reader should give them back, its strips, the
    material slot whose texture it shows, and how it was made (`note`)."""
    name: str
    points: np.ndarray        # (n, 3) float32, Oni axes
    normals: np.ndarray       # (n, 3) float32
    uvs: np.ndarray           # (n, 2) float32, Direct3D v
    triangles: np.ndarray     # (t, 3): the reader gives them back (a strip pair's first rotated)
    strips: np.ndarray
    face_normals: np.ndarray
    face_normal_indices: np.ndarray
    slot: int
    note: str

    @property
    def stored(self) -> bool:
        return self.note == UNCHANGED

    @property
    def edited(self) -> bool:
        """Whether the user changed it since the import (not merely re-made of a source gone)."""
        return self.note == EDITED

    @property
    def remade(self) -> bool:
        """Whether it is an unedited import made of its faces, its source not holding it (the note says why)."""
        return self.note.startswith(REMADE)

    def file_bytes(self, texture_name: str) -> bytes:
        return mesh_file_bytes(self.name, self.points, self.normals, self.uvs, self.strips, self.face_normals,
                               self.face_normal_indices, texture_name)


@dataclass
class _Recorded:
    """What the import recorded of one part (io/objects/properties.py)."""
    name: str
    file: str
    instance: int
    stored: int               # PART_STORED
    fingerprint: int          # PART_SHAPES (the last release's PART_FINGERPRINTS: `drawn`)
    drawn: bool               # whether its fingerprint holds the normals as drawn


def read_from(mesh, images) -> list:
    """The files an imported mesh's parts and `images` (those its slots show) were read from."""
    files = plain(mesh.get(PART_FILES, []))
    files = [file for file in files if isinstance(file, str) and file] if isinstance(files, list | tuple) else []
    return files + [image[TEXTURE_FILE] for image in images
                    if image is not None and isinstance(image.get(TEXTURE_FILE), str)]


def recorded_parts(mesh, label) -> list:
    """[_Recorded] of an imported mesh's parts; [] for a mesh made in Blender. ObanError naming
    the property that is not what the import wrote."""
    if MESH_PARTS not in mesh:
        return []
    names = texts(mesh, MESH_PARTS, label)
    files = texts(mesh, PART_FILES, label)
    if len(files) != len(names):
        raise ObanError(label, f"property '{PART_FILES}' holds {len(files)} texts, not {len(names)} "
                               f"(for the parts of '{MESH_PARTS}')")
    drawn = PART_SHAPES not in mesh and PART_FINGERPRINTS in mesh
    whole = [numbers(mesh, key, label, len(names), per=MESH_PARTS).astype(np.int64)
             for key in (PART_INSTANCES, PART_STORED, PART_FINGERPRINTS if drawn else PART_SHAPES)]
    return [_Recorded(*row, drawn) for row in zip(names, files, *(values.tolist() for values in whole))]


class SceneMesh:
    """A mesh as Blender holds it, read once, in Oni's terms: the points in the object's own
    frame (s.A.p undone), each corner's point, UV (u, 1 - v) and normal as drawn, each face's
    part and slot, the faces as triangles of corners. With `matrix` (4, 4), the object's frame
    to another (a skinned mesh's to its armature's), its points and normals in that frame."""

    def __init__(self, mesh, scale: float, axes, parts: int, matrix=None):
        self.axes = np.asarray(axes, np.float64)
        self.scale = scale
        co = np.empty(3 * len(mesh.vertices), np.float32)
        mesh.vertices.foreach_get("co", co)
        self.positions = co.reshape(-1, 3).astype(np.float64)                       # Blender's axes
        if matrix is not None:
            self.positions = self.positions @ matrix[:3, :3].T + matrix[:3, 3]
        self.points = self.oni_points()
        self.corner_point = np.empty(len(mesh.loops), np.int32)
        mesh.loops.foreach_get("vertex_index", self.corner_point)
        self.starts, self.sizes = (np.empty(len(mesh.polygons), np.int32) for _ in range(2))
        mesh.polygons.foreach_get("loop_start", self.starts)
        mesh.polygons.foreach_get("loop_total", self.sizes)
        self.uvs = corner_uvs(mesh).astype(np.float64)
        self.uvs[:, 1] = 1.0 - self.uvs[:, 1]                                           # Direct3D v
        self.drawn = compat.corner_normals(mesh)                                        # Blender's axes
        if matrix is not None and not np.array_equal(matrix[:3, :3], np.eye(3)):
            self.drawn = _turned_normals(self.drawn, matrix[:3, :3])
        self.normals = oni_directions(self.drawn, self.axes).astype(np.float32)
        self.parts = face_parts(mesh, parts)
        self.slots = np.clip(face_ints(mesh, compat.MATERIAL_INDEX, np.zeros(len(mesh.polygons), np.int32)), 0,
                             max(len(mesh.materials) - 1, 0))
        mesh.calc_loop_triangles()
        self.triangle_corners = np.empty(3 * len(mesh.loop_triangles), np.int32)
        mesh.loop_triangles.foreach_get("loops", self.triangle_corners)
        self.triangle_corners = self.triangle_corners.reshape(-1, 3)
        self.triangle_face = np.empty(len(mesh.loop_triangles), np.int32)
        mesh.loop_triangles.foreach_get("polygon_index", self.triangle_face)

    def oni_points(self, origin=None) -> np.ndarray:
        """(n, 3) float32: the points about `origin` (Blender's axes, in the frame; default its
        own origin) in Oni's axes and units, A^T (x - origin) / s, worked out in float64."""
        at = self.positions if origin is None else self.positions - np.asarray(origin, np.float64)
        with np.errstate(over="ignore"):      # past float32: inf, refused (_check_finite)
            return oni_points(at, self.axes, self.scale).astype(np.float32)

    def faces_of(self, part: int) -> np.ndarray:
        return np.flatnonzero(self.parts == part)

    def keep_as_read(self, meshes) -> None:
        """Each of the first points (the import numbered the `meshes`' points in order, a vertex
        each) within AS_READ of its point as read takes that point; each corner of such a
        vertex its texture coordinate where within AS_READ, its normal where drawn within
        NORMAL_AS_READ of the one set (as_read.normals_close): what was not moved is written as read."""
        points, normals, uvs = (np.concatenate([getattr(m, key) for m in meshes]) for key in ("points", "normals",
                                                                                               "uvs"))
        count = min(len(points), len(self.points))
        close = rows_close(self.points[:count], points[:count])
        self.points[:count][close] = points[:count][close]
        known = self.corner_point < len(points)
        vertex = np.where(known, self.corner_point, 0)
        close = known & rows_close(self.uvs, uvs[vertex])
        self.uvs[close] = uvs[vertex][close]
        drawn = converted_normals(normals, self.axes)[vertex]
        close = known & normals_close(self.drawn, drawn)
        self.normals[close] = normals[vertex][close]

    def normals_as_stored(self, part: int, first_point: int, stored) -> bool:
        """Whether every corner of `part`'s faces draws the normal of its point as stored
        (`stored`, the part's (n, 3) Oni normals, its point k the vertex `first_point` + k):
        normals_close, whatever the Blender."""
        corners = face_corners(self.faces_of(part), self.starts, self.sizes)
        point = self.corner_point[corners] - first_point
        return bool(((point >= 0) & (point < len(stored))).all()) and \
            bool(normals_close(self.drawn[corners], converted_normals(stored, self.axes)[point]).all())


@contextmanager
def shown_mesh(obj):
    """The mesh a mesh object shows: its own, or, in edit mode, a copy of it with the edits taken
    (update_from_editmode: an edit-mode mesh gives no UVs), removed afterwards."""
    if obj.mode != "EDIT":
        yield obj.data
        return
    obj.update_from_editmode()
    mesh = obj.data.copy()
    try:
        yield mesh
    finally:
        bpy.data.meshes.remove(mesh)


def flattens(matrix) -> bool:
    """Whether a (4, 4) map of a mesh's points is not finite or flattens them (a zero scale: its
    normals cannot be carried)."""
    linear = matrix[:3, :3]
    return not np.isfinite(matrix).all() or \
        abs(np.linalg.det(linear)) <= SINGULAR * max(np.abs(linear).max(), 1e-30) ** 3


def scene_parts(obj, label, scale, axes, libraries, frame=None, placed="", as_read=None) -> tuple:
    """([Part] of a mesh object, in order, the SceneMesh they come from): an imported mesh's
    parts by PART_ATTRIBUTE, a mesh made in Blender one part named after the object (as is an
    unnamed part; with others, the object's name and its index, 'door_1_0').
    `frame`: a (4, 4) map of the mesh's points (and normals) into another frame before the
    scale and axes are undone (a part placed otherwise on a character's bone): its parts are then
    made of the faces, an unedited import's noted `placed` (what the placement does). `as_read`:
    the [Mesh] the import's points were (SceneMesh.keep_as_read), for the level rebuild's door
    leaves. ObanError (naming the object and the part) for a part that cannot be written. An
    object in edit mode is read as it shows (shown_mesh)."""
    recorded = recorded_parts(obj.data, f"{label} mesh '{obj.data.name}'")
    with shown_mesh(obj) as mesh:
        scene = SceneMesh(mesh, scale, axes, max(len(recorded), 1), frame)
        now = part_shapes(mesh, len(recorded), recorded[0].drawn) if recorded else []
    if as_read:
        scene.keep_as_read(as_read)
    parts, stored = [], [_Stored(record, libraries) for record in recorded]
    for index, record in enumerate(recorded or [None]):
        name = record.name if record is not None and record.name else \
            obj.name + (f"_{index}" if len(recorded) > 1 else "")      # a body part's, a door's M3GMs are unnamed
        where = f"{label} part '{name}'"
        faces = scene.faces_of(index)
        if not len(faces):
            raise ObanError(where, "has no faces (an M3GM needs a triangle); nothing written for the object")
        slot = int(np.bincount(scene.slots[faces]).argmax())
        part = None
        if record is None:
            note = "new"
        elif record.fingerprint != now[index]:
            note = EDITED
        elif frame is not None:
            note = placed
        else:
            part, note = stored[index].part(name, slot)
            first_point = sum(found.point_count() for found in stored[:index])   # the import's, in order
            if part is not None and not record.drawn and not scene.normals_as_stored(index, first_point,
                                                                                     part.normals):
                part, note = None, EDITED
        parts.append(checked(part if part is not None else faces_part(scene, scene.parts == index, name, slot, note,
                                                                      where), where))
    return parts, scene


class _Stored:
    """The M3GM an import made a part of, as its source holds it now: read once, when asked."""

    def __init__(self, record, libraries):
        self.record, self.libraries = record, libraries

    @functools.cached_property
    def read(self):
        """(the Mesh, or None; why not)."""
        record = self.record
        if not record.file:
            return None, f"{REMADE} (no file recorded)"
        try:
            return stored_mesh(record.file, record.instance, record.name, self.libraries.get(record.file)), ""
        except ObanError as error:
            return None, f"{REMADE}: its source cannot be read ({error})"

    def point_count(self) -> int:
        """Its points (the part's vertices in the mesh); 0 where its source cannot be read (the
        parts after it are then not told unedited by their normals: normals_as_stored)."""
        mesh = self.read[0]
        return len(mesh.points) if mesh is not None else 0

    def part(self, name, slot):
        """(the Part `name` as stored, or None, why not) of an unedited part."""
        stored, why = self.read
        if stored is None:
            return None, why
        if stored.stored_fingerprint() != self.record.stored:
            return None, f"{REMADE}: {self.record.file} holds other arrays for it now"
        return Part(name, stored.points, stored.normals, stored.uvs, stored.triangles, stored.strips,
                    stored.face_normals, stored.face_normal_indices, slot, UNCHANGED), UNCHANGED


def faces_part(scene, selected, name, slot, note, where, origin=None) -> Part:
    """The part made of the `selected` faces ((faces,) bool) Blender holds, its points about
    `origin` (SceneMesh.oni_points): a vertex per point, UV and normal its corners take
    (numbered by point, then by first use), the faces' triangles in order."""
    triangles = scene.triangle_corners[selected[scene.triangle_face]]
    corners = triangles.ravel()
    point = scene.corner_point[corners]
    every = scene.points if origin is None else scene.oni_points(origin)
    uvs = scene.uvs[corners].astype(np.float32)
    normals = scene.normals[corners]
    _check_finite(where, every[point], point, "the point of vertex")
    _check_finite(where, uvs, corners, "the texture coordinate of corner")
    _check_finite(where, normals, corners, "the normal of corner")
    keys = np.empty((len(corners), 6), np.uint32)
    keys[:, 0], keys[:, 1:3], keys[:, 3:] = point, uvs.view(np.uint32), normals.view(np.uint32)
    _, first, vertex = np.unique(keys.view(np.dtype((np.void, 24))).ravel(), return_index=True,
                                 return_inverse=True)
    order = np.lexsort((first, point[first]))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    chosen = first[order]
    points = every[point[chosen]]
    faces = rank[vertex.ravel()].reshape(-1, 3).astype(np.int32)
    strips, face_normals, face_normal_indices = triangle_strips(name, points, faces)
    return Part(name, points, normals[chosen], uvs[chosen], faces, strips, face_normals, face_normal_indices,
                slot, note)


def _turned_normals(normals, linear) -> np.ndarray:
    """(k, 3) float32 normals carried by the linear map `linear` (3, 3): by its inverse
    transpose, unit length again."""
    turned = normals.astype(np.float64) @ np.linalg.inv(linear)     # rows: (L^-T n)^T = n^T L^-1
    length = np.sqrt(np.einsum("ij,ij->i", turned, turned))[:, None]
    return (turned / np.where(length == 0.0, 1.0, length)).astype(np.float32)


def _check_finite(where, values, items, what):
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if len(bad):
        raise ObanError(where, f"{what} {items[bad[0]]} is not a finite number; nothing written for the object")


def checked(part: Part, where, remedy="split it into more objects") -> Part:
    """`part`, within what the engine holds of a mesh; else ObanError saying `remedy`."""
    if len(part.points) > MAX_POINTS or len(part.face_normals) > MAX_TRIANGLES:
        raise ObanError(where, f"{len(part.points)} points and {len(part.face_normals)} triangles: the engine draws "
                               f"at most {MAX_POINTS} and {MAX_TRIANGLES} of one mesh (BFW_Motoko.h); {remedy}; "
                               f"nothing written for the object")
    return part
