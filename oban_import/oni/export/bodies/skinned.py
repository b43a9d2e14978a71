"""A character modelled as one mesh deformed by its armature (a skinned mesh) as the rigid parts
the engine draws (docs/characters.md, "Skinned meshes"): each vertex to the part its heaviest
vertex group names, each face to the part most of its corners name, each part's faces an M3GM
part (oni/export/shared/parts.py) in its bone's frame. A loop per vertex group and per part; none per
vertex, corner or face."""

from dataclasses import dataclass

import numpy as np

from ....blender.vertex_weights import vertex_weights
from ....core.errors import ObanError
from ....core.report import listed
from ...blender.shared.fingerprints import face_corners
from ..shared.edits import unheld_edits
from ..shared.parts import SceneMesh, checked, faces_part, flattens, shown_mesh

NO_PART = -1        # the part of a vertex or corner without weight, of a group naming none


@dataclass
class SkinnedParts:
    parts: list                 # per part of the body, in order: its Part, None where no face goes to it
    face_parts: np.ndarray      # (faces,) int32: the part each face of the mesh goes to
    face_slots: np.ndarray      # (faces,) the material slot each face shows
    faces: np.ndarray           # (parts,) int64: how many faces go to each part
    disagreeing: int            # faces whose corners' heaviest groups name more than one part
    notes: list                 # what the report says of the split
    dropped: list               # what the object shows that its parts cannot hold (not applied)


def skinned_parts(obj, body, label) -> SkinnedParts:
    """The parts of `body` (armature_body.ArmatureBody) that the mesh object `obj`, deformed by
    its armature, splits into: each vertex to the part its heaviest vertex group names (of
    equal weights, the group of lower index), each face to the part most of its corners' vertices
    name (of parts named equally often, the one its earliest such corner names); each part's
    points about its bone's head at rest, p = A^T (x - head) / s, x the point in the armature's
    space at rest. ObanError naming the object and the group, face or part: a vertex group with
    weight that names no part, a face without weight, a part larger than the engine draws."""
    where = f"{label} object '{obj.name}'"
    dropped = _unapplied(obj, body.armature, where)
    with shown_mesh(obj) as mesh:   # as the user sees it, in edit mode too
        return _split(obj, mesh, body, where, dropped)


def _split(obj, mesh, body, where, dropped) -> SkinnedParts:
    """skinned_parts of `obj` showing `mesh`."""
    rest = _rest_matrix(obj, body.armature, where)
    weights = vertex_weights(mesh, [group.name for group in obj.vertex_groups], where)
    group_parts = _group_parts(obj, body.names, weights, where)
    if len(weights):     # the heaviest group, the first of equal ones (argmax); none where all are 0
        vertex_parts = np.where(weights.max(axis=0) > 0, group_parts[weights.argmax(axis=0)], NO_PART)
    else:
        vertex_parts = np.full(len(mesh.vertices), NO_PART)
    scene = SceneMesh(mesh, body.scale, body.axes, 1, rest)
    if not len(scene.sizes):
        raise ObanError(where, "has no faces to split into the body's parts")
    face_parts, named, partly = _face_parts(vertex_parts[scene.corner_point], scene.starts, scene.sizes,
                                            len(body.names))
    bare = np.flatnonzero(face_parts == NO_PART)
    if len(bare):
        raise ObanError(where, f"face {bare[0]} has no corner with weight in a vertex group ({len(bare)} such faces "
                               f"in all): each face goes to the part its corners' groups name; nothing written "
                               f"for the object")
    faces = np.bincount(face_parts, minlength=len(body.names)).astype(np.int64)
    parts = [_part(scene, face_parts == index, obj, name, body.rest[index, :3, 3], where) if faces[index] else None
             for index, name in enumerate(body.names)]
    disagreeing = int((named > 1).sum())
    return SkinnedParts(parts, face_parts, scene.slots, faces, disagreeing,
                        _split_notes(where, body.names, faces, disagreeing, partly), dropped)


def _unapplied(obj, armature, where) -> list:
    """What deforms `obj` besides the armature at rest, not applied (its parts are its mesh's own
    faces and points) nor held by an M3GM; ObanError where it is no mesh the armature deforms."""
    if obj.type != "MESH":
        raise ObanError(where, f"is a {obj.type.lower()}, not a mesh")
    deforming = [modifier for modifier in obj.modifiers if modifier.type == "ARMATURE" and modifier.object == armature]
    if not deforming and not (obj.parent == armature and obj.parent_type == "ARMATURE"):
        raise ObanError(where, f"is not deformed by armature '{armature.name}' (no Armature modifier of it, not "
                               f"parented to it with Armature Deform)")
    return unheld_edits(obj, deforming)


def _group_parts(obj, names, weights, where) -> np.ndarray:
    """(groups,) int64: the part each vertex group names, NO_PART for one naming none;
    ObanError naming those of them with weight."""
    found = np.array([names.index(group.name) if group.name in names else NO_PART for group in obj.vertex_groups],
                     np.int64)
    stray = np.flatnonzero((found == NO_PART) & (weights > 0).any(axis=1))
    if len(stray):
        groups = [obj.vertex_groups[int(index)].name for index in stray]
        many = len(groups) > 1
        them = "each" if many else "it"
        raise ObanError(where, f"vertex group{'s' * many} {listed(groups)} hold{'s' * (not many)} weight but "
                               f"name{'s' * (not many)} no part of the body (its parts: {listed(names, 3)}): rename "
                               f"{them} after the part it moves, or remove its weight; nothing written for the object")
    return found


def _rest_matrix(obj, armature, where) -> np.ndarray:
    """(4, 4) float64: `obj`'s frame to the armature's at rest, as the Armature deform takes it
    (the armature's world matrix undone from the object's): for an object parented to the
    armature, its parent inverse times its own transform (exactly what its world matrix is made
    of, without the round trip through the armature's); else through the world matrices.
    ObanError where either flattens the mesh (a zero scale)."""
    if obj.parent == armature and obj.parent_type in ("OBJECT", "ARMATURE") and not obj.constraints:
        rest = np.array(obj.matrix_parent_inverse, np.float64) @ np.array(obj.matrix_basis, np.float64)
    else:
        world = np.array(armature.matrix_world, np.float64)
        if flattens(world):
            raise ObanError(where, f"armature '{armature.name}' is scaled to nothing on an axis (a zero scale): "
                                   f"where the mesh stands on it at rest is not known; nothing written for the object")
        rest = np.linalg.inv(world) @ np.array(obj.matrix_world, np.float64)
    if flattens(rest):
        raise ObanError(where, "its placement on the armature is not finite or flattens it (a zero scale); nothing "
                               "written for the object")
    return rest


def _face_parts(corner_parts, starts, sizes, count) -> tuple:
    """((faces,) int32 each face's part, NO_PART where no corner has one; (faces,) how many
    parts its corners name; how many faces have both weighted corners and corners of none):
    the part most of its corners name, of equally many the one its earliest such corner names."""
    faces = len(sizes)
    face_of = np.repeat(np.arange(faces, dtype=np.int64), sizes)             # face after face
    parts = corner_parts[face_corners(np.arange(faces), starts, sizes)]
    weighted = parts != NO_PART
    pairs, first, votes = np.unique(face_of[weighted] * count + parts[weighted], return_index=True,
                                    return_counts=True)
    pair_face = pairs // count
    order = np.lexsort((first, -votes, pair_face))   # each face's pairs: most votes, then earliest corner
    best = order[np.r_[True, pair_face[order][1:] != pair_face[order][:-1]]] if len(order) else order
    face_parts = np.full(faces, NO_PART, np.int32)
    face_parts[pair_face[best]] = pairs[best] % count
    named = np.bincount(pair_face, minlength=faces)
    partly = int(((np.bincount(face_of[~weighted], minlength=faces) > 0) & (named > 0)).sum())
    return face_parts, named, partly


def _part(scene, selected, obj, name, head, where):
    """The part `name` of the `selected` faces, its points about `head`, within the engine's sizes."""
    label = f"{where} part '{name}'"
    slot = int(np.bincount(scene.slots[selected]).argmax())
    part = faces_part(scene, selected, f"{obj.name} {name}", slot, f"split from the skinned mesh '{obj.name}'",
                      label, head)
    return checked(part, label, "give some of its faces to another part's vertex group")


def _split_notes(where, names, faces, disagreeing, partly) -> list:
    """The report's lines of the split: faces per part, the parts no face goes to, the faces
    whose corners disagree or have no weight."""
    counts = ", ".join(f"{name} {count}" for name, count in zip(names, faces.tolist()) if count)
    notes = [f"{where}: split into the body's parts, faces per part: {counts}; {disagreeing} faces whose corners' "
             f"heaviest vertex groups name more than one part (each to the part most of its corners name)"]
    empty = [name for name, count in zip(names, faces.tolist()) if not count]
    if empty:
        notes.append(f"{where}: no face goes to part {listed(empty, len(empty))}")
    if partly:
        notes.append(f"{where}: {partly} faces have corners without weight (each to the part its other corners name)")
    return notes
