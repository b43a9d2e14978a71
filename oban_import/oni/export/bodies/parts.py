"""A character armature's body as the scene holds it, for the body export (docs/characters.md,
"Exporting a body"): each part's translation from its bone's rest head, and each part's mesh
from the mesh object parented to its bone, its points at rest in the part's own frame
(oni/export/shared/parts.py's Part): p = A^T (x_rest - head) / s, where x_rest is the point in armature
space through the bone's rest matrix, its tail, the object's parent inverse and basis. An object
placed on its bone as the import placed it is read as the mesh export reads it (an unedited
one as stored); any other placement is baked into its points and normals, and said. A mesh the
armature deforms (skinned) is split into parts (skinned.py)."""

from dataclasses import dataclass

import bpy
import numpy as np

from ....core.errors import ObanError
from ....core.report import listed
from ...blender.characters.armature_body import ArmatureBody, armature_body
from ...engine import bones
from ...engine.to_oni import oni_points
from ...io.characters.properties import TRANSLATIONS
from ...io.import_frame import import_frame
from ..shared.as_read import AS_READ
from ..shared.edits import dropped_mesh_edits, unwritten_uv_maps
from ..shared.parts import Part, flattens, recorded_parts, scene_parts
from ..shared.textures import slot_textures
from .skinned import skinned_parts

PLACED = 1e-4      # relative: a part's placement on its bone this close to the import's is the import's (Blender
                   # makes a bone's rest matrix in float32 from its head, tail and roll, some directions 1e-5 off
                   # orthonormal, and the import's parent inverse is its transpose: 1.5e-5 seen)
GEOMETRY = {"CURVE", "SURFACE", "META", "FONT", "CURVES", "POINTCLOUD", "VOLUME", "GPENCIL", "GREASEPENCIL"}
                   # object types that show geometry a body part (a mesh) does not hold


@dataclass
class ScenePart:
    """A body part's mesh as the scene holds it."""
    obj: object
    part: Part                # its M3GM: points, normals, uvs in the part's frame (Oni axes and units)
    texture: str              # the TXMP its faces show ('' none)
    image: object             # that texture's image (None: none shown)
    source: tuple             # (file, descriptor index) of the M3GM an import made it of, ("", -1) for none
    placed: str               # how its placement on the bone differs from the import's ('' not at all)


@dataclass
class SceneBody:
    body: ArmatureBody
    label: str
    translations: np.ndarray  # (P, 3) float32, Oni units: the stored ones where the bones are as imported
    moved: list               # the parts whose translation is not the one stored
    parts: dict               # {part index: ScenePart}
    dropped: list             # what the part objects show that a body cannot hold
    notes: list               # how skinned meshes were split, the UV maps not written


def scene_body(armature, scale: float, axes, libraries) -> SceneBody:
    """The body `armature` holds (armature_body's checks; `scale`, `axes` where it does not say), its part
    objects read (an armature in edit mode as it shows); ObanError naming the armature and the
    bone or object where it cannot be written."""
    if armature.mode == "EDIT":
        armature.update_from_editmode()
    body = armature_body(armature, scale, axes)
    label = f"armature '{armature.name}'"
    translations, moved = _translations(armature, body, label)
    rigid, skinned, dropped = _part_objects(armature, body, label)
    parts, notes = {}, []
    for index, obj in rigid.items():
        parts[index], edits = _scene_part(obj, index, body, f"{label} object '{obj.name}'", libraries)
        dropped += [f"object '{obj.name}': {edit}" for edit in edits]
        notes += [f"{label} object '{obj.name}': {note}" for note in unwritten_uv_maps(obj.data)]
    for obj in skinned:
        split = skinned_parts(obj, body, label)
        slots = slot_textures(obj.data)
        for index, part in enumerate(split.parts):
            if part is not None and index in parts:
                raise ObanError(f"{label}: object '{obj.name}'", f"gives faces to part '{body.names[index]}', which "
                                                                 f"object '{parts[index].obj.name}' is too: a part has "
                                                                 f"one mesh; join them (Object > Join)")
            if part is not None:
                name, image = slots[part.slot]
                parts[index] = ScenePart(obj, part, name, image, ("", -1), "")
                dropped += _textures_shown(obj, body.names[index], split, index, slots)
        dropped += [f"object '{obj.name}': {edit}" for edit in split.dropped]
        notes += split.notes + [f"{label} object '{obj.name}': {note}" for note in unwritten_uv_maps(obj.data)]
    return SceneBody(body, label, translations, moved, dict(sorted(parts.items())), dropped, notes)


def _translations(armature, body: ArmatureBody, label):
    """((P, 3) float32 translations, [moved part names]): each part's from its parent's bone
    head to its own at rest, in Oni's axes and units; the stored one (TRTA as read) where the
    part's and its parent's heads are where the import put them."""
    every = np.empty(3 * len(armature.data.bones), np.float32)
    armature.data.bones.foreach_get("head_local", every)
    heads = every.reshape(-1, 3)[[armature.data.bones.find(name) for name in body.names]].astype(np.float64)
    parents = body.parents
    now = oni_points(heads - np.where(parents[:, None] >= 0, heads[parents], 0.0), body.axes, body.scale)
    if not np.isfinite(now).all() or np.abs(now).max(initial=0.0) > np.finfo(np.float32).max:
        raise ObanError(label, "a bone's rest head is too far out for a translation (float32)")
    if TRANSLATIONS not in armature:
        return now.astype(np.float32), list(body.names)
    expected = bones.rest_heads(parents, body.translations, body.axes, body.scale)
    reach = max(np.abs(expected).max(initial=0.0), body.scale)
    off = np.abs(heads - expected).max(axis=1) > AS_READ * reach   # relative to the body's reach
    moved = off | np.where(parents >= 0, off[parents], False)
    chosen = np.where(moved[:, None], now, body.translations).astype(np.float32)
    return chosen, [name for name, m in zip(body.names, moved.tolist()) if m]


def _part_objects(armature, body: ArmatureBody, label) -> tuple:
    """({part index: the mesh object parented to its bone}, [the mesh objects the armature
    deforms], [what the other objects on it show that a body cannot hold: another kind's
    geometry]), of the objects in a scene. ObanError naming the object for one on a bone that is
    not a part, on the armature itself but neither on a bone nor deformed by it, or sharing a
    part with another."""
    found, skinned = {}, []
    children = [obj for obj in armature.children if obj.users_scene]
    deformed = [obj for obj in bpy.data.objects if obj.type == "MESH" and obj.users_scene and obj.parent != armature
                and _deformed_by(obj, armature)]
    unheld = [f"object '{obj.name}': is a {obj.type.lower()} on {_on_what(obj)}, not a mesh: a body part is a mesh "
              f"(Object > Convert > Mesh)" for obj in children if obj.type in GEOMETRY]
    for obj in [obj for obj in children if obj.type == "MESH"] + deformed:
        where = f"{label}: object '{obj.name}'"
        if _deformed_by(obj, armature):
            skinned.append(obj)
            continue
        if obj.parent_type != "BONE":
            raise ObanError(where, f"is parented to the armature but not to a bone (parent type {obj.parent_type}); "
                                   f"parent it to its part's bone, or deform it by the armature (skinned)")
        if obj.parent_bone not in body.names:
            raise ObanError(where, f"is parented to bone '{obj.parent_bone}', which is not one of the body's "
                                   f"parts; parent it to a part's bone, or unparent it")
        index = body.names.index(obj.parent_bone)
        if index in found:
            raise ObanError(where, f"and object '{found[index].name}' are both on bone '{obj.parent_bone}': a part "
                                   f"has one mesh; join them (Object > Join)")
        found[index] = obj
    return dict(sorted(found.items())), skinned, unheld


def _on_what(obj) -> str:
    """What of its armature an object is parented to: its bone, or the armature."""
    return f"bone '{obj.parent_bone}'" if obj.parent_type == "BONE" else "the armature"


def _deformed_by(obj, armature) -> bool:
    return obj.parent == armature and obj.parent_type == "ARMATURE" or any(
        modifier.type == "ARMATURE" and modifier.object == armature for modifier in obj.modifiers)


def _scene_part(obj, index, body: ArmatureBody, where, libraries):
    """(ScenePart of the object on part `index`'s bone, [what it shows that the part cannot hold:
    edits an M3GM cannot, constraints])."""
    mesh = obj.data
    bone = body.names[index]
    placement = _placement(obj, body, index)
    scale, axes = import_frame(mesh, f"{where} mesh '{mesh.name}'", body.scale, body.axes)
    as_imported = np.abs(placement - np.eye(4)).max() <= PLACED * max(1.0, np.abs(body.rest[index, :3, 3]).max()) \
        and scale == body.scale and np.array_equal(axes, body.axes)
    placed = ""
    if as_imported:
        parts, scene = scene_parts(obj, where, scale, axes, libraries)
    else:
        if flattens(placement):
            raise ObanError(where, f"its placement on bone '{bone}' is not finite or flattens it (a zero scale)")
        recorded = recorded_parts(mesh, f"{where} mesh '{mesh.name}'")
        placed = _placement_note(placement[:3, :3], placement[:3, 3], bone, scale != body.scale or
                                 not np.array_equal(axes, body.axes), bool(recorded))
        parts, scene = scene_parts(obj, where, body.scale, body.axes, libraries, frame=placement,
                                   placed="placed otherwise on its bone (baked)")
    if len(parts) != 1:
        raise ObanError(where, f"holds {len(parts)} M3GM parts; a body part is one mesh (join them, or put each "
                               f"on its own bone)")
    slots = slot_textures(mesh)
    recorded = recorded_parts(mesh, f"{where} mesh '{mesh.name}'")
    source = (recorded[0].file, recorded[0].instance) if recorded else ("", -1)
    name, image = slots[parts[0].slot]
    return ScenePart(obj, parts[0], name, image, source, placed), dropped_mesh_edits(obj, parts, scene, slots) + \
        _constraints(obj)


def _constraints(obj) -> list:
    """The dropped edit of a part's object its constraints move (not where its bone puts it), or []."""
    constraints = [constraint.name for constraint in obj.constraints if not constraint.mute]
    if not constraints:
        return []
    return [f"its constraints {listed(constraints)} are not applied (a part stands on its bone as its parent inverse "
            f"and transform place it)"]


def _textures_shown(obj, name, split, index, slots) -> list:
    """The dropped edit of a skinned mesh's part whose faces show several textures, or []."""
    shown = {(slots[s][0], slots[s][1].name if slots[s][1] else ""): None
             for s in np.unique(split.face_slots[split.face_parts == index]).tolist()}
    if len(shown) < 2:
        return []
    return [f"object '{obj.name}' part '{name}': its faces show {len(shown)} textures "
            f"({listed([texture or 'none' for texture, _ in shown])}); an M3GM shows one (written with "
            f"'{slots[split.parts[index].slot][0] or 'none'}', its most faces')"]


def _placement(obj, body: ArmatureBody, index) -> np.ndarray:
    """(4, 4) the object's mesh points -> armature space at rest, less the bone's head: the
    bone's rest matrix, then its tail (where Blender puts a bone's child), the parent inverse,
    the object's own transform. The identity where the import placed it."""
    bone = body.armature.data.bones[body.names[index]]
    tail = np.eye(4)
    tail[1, 3] = bone.length
    placement = body.rest[index] @ tail @ np.array(obj.matrix_parent_inverse, np.float64) \
        @ np.array(obj.matrix_basis, np.float64)
    placement[:3, 3] -= body.rest[index, :3, 3]
    return placement


def _placement_note(linear, offset, bone, other_frame, imported) -> str:
    """What a placement other than the import's does to the part's points: its rotation and
    scale (any part's), its offset (an imported part's: a new part's offset is how it is
    placed); '' for nothing to say."""
    u, scales, vt = np.linalg.svd(linear)
    found = (("rotation", np.abs(u @ vt - np.eye(3)).max() > PLACED), ("scale", np.abs(scales - 1.0).max() > PLACED),
             ("offset", imported and np.abs(offset).max() > 0.0),
             ("mesh's import scale and axes", other_frame))
    what = [word for word, present in found if present]
    return f"its {' and '.join(what)} relative to bone '{bone}' baked into its points" if what else ""
