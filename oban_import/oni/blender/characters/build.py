"""Oni's characters in Blender (docs/characters.md, "In Blender"): a body as an armature whose
bones are its parts, each part's mesh rigidly parented to its bone, and each TRAM as an action
on it whose bones give every part the engine's matrix at every frame (engine/bones.py).

All of a character or nothing: a failure removes what was made."""

import os
from collections import Counter

import bpy
import numpy as np
from mathutils import Matrix

from ....blender import compat
from ....core.errors import ObanError
from ....core.report import Made, Report, listed
from ....core.runs import bounded_runs
from ...engine import bones
from ...io.characters.properties import (BODY, BODY_FILE, BODY_INSTANCE, CHARACTER, CHARACTER_FILE, CHARACTER_INSTANCE,
                                         PARENTS, PARTS, TRANSLATIONS)
from ...io.characters.read import also_listed, body_file, listers, read_character
from ...io.import_frame import SOURCE_FILE, import_properties
from ...io.trams.properties import tram_markers, tram_properties
from ...io.trams.read import MAX_SQUARE
from ...io.trams.tram import OVERLAY, PART_NAMES
from ..shared.blocks import SharedBlocks
from .armature_body import armature_body, record_actions

CHUNK_KEYS = 1 << 18                # part-frames of TRAMs worked out together: what bounds the arrays
ROTATION, LOCATION = "rotation_quaternion", "location"
TEMPLATE = "oni template"           # the name of a template action while it lasts (_Actions)
NAMED_IN_A_NOTE = 5                 # TRAMs a note names before it counts the rest


def import_character(context, character, path, settings, collection=None, shared=None, chosen=None) -> Report:
    """`character` (oni.io.characters.Character) as an armature in `collection`, its parts'
    meshes on its bones, and its animations (`chosen`: which of them, default all) as actions;
    the first one assigned, all kept (a fake user each). Made(path, character, armature)."""
    collection = collection or context.collection
    shared = shared or SharedBlocks(settings)
    with shared.all_or_nothing():
        armature = _armature(context, character, collection, settings, path)
        _part_meshes(character, armature, collection, shared)
        shared.pack_images()
        result = animate(armature, character.animations if chosen is None else chosen, settings, path)
    result.made.insert(0, Made(path, character, armature))
    result.warnings += [f"{path}: '{character.name}': {w}" for w in character.warnings]
    return result


def onto_armature(context, trams, path, armatures, settings, collection, shared, beside) -> Report:
    """TRAMs of no character of their file, each onto its body (docs/characters.md, "In
    Blender"): the body whose animation collection lists it (by name: one of `armatures`, the
    selected ones then the batch's characters, whose character is an ONCC….oni of the file's
    folder that lists it; else that ONCC, imported for it); where none lists it, the first of
    `armatures` whose bones are its parts, else the body beside the file (its first ONCC….oni,
    else TRBS….oni; `beside`: read.characters_beside's). A note says which body each went onto
    and why; ObanError saying what to select where there is none."""
    result = Report(last_frame=settings.frame_start)
    result.warnings += [f"{path}: a character beside it cannot be read, so whose animations it lists is not "
                        f"known: {error}" for error in beside.unread]
    chosen, imported = {}, {}    # (the body: an armature, or a character file to import; why) -> its TRAMs
    armatures = list(dict.fromkeys(armatures))
    for tram in trams:
        chosen.setdefault(_body_of(tram, armatures, beside, path), []).append(tram)
    for (body, why), group in chosen.items():
        if isinstance(body, str):
            if body not in imported:
                made = import_character(context, read_character(body), body, settings, collection, shared, chosen=[])
                result.add(made)
                imported[body] = made.made[0].block
            body = imported[body]
        result.add(animate(body, group, settings, path))
        result.notes.append(f"{path}: {listed([tram.name for tram in group], NAMED_IN_A_NOTE)} onto "
                            f"'{body.name}': {why}")
    return result


def _body_of(tram, armatures, beside, path):
    """(the armature, or the character file to import, `tram` goes onto; why) by onto_armature's rule."""
    found = listers(tram.name, beside)
    for listing in found:
        for armature in armatures:
            if armature.get(CHARACTER) == listing.character:
                return armature, f"the collection of its character, {os.path.basename(listing.path)}, lists it" \
                                 f"{also_listed(found)}"
    if not found:
        for armature in armatures:
            if _bones_are_parts(armature, tram.parts):
                return armature, "no character beside it lists it in its collection; the first selected armature " \
                                 "(or character of this import) whose bones are its parts"
    body, why = body_file(tram.name, beside)
    if body is None:
        raise ObanError(path, f"no character for '{tram.name}': select an armature whose bones are its parts "
                              f"(a character imported by this add-on), or import it with its character, or put "
                              f"the character's ONCC….oni (or its body's TRBS….oni) beside it")
    return body, f"{why}, imported for it"


def _bones_are_parts(armature, parts):
    """Whether the armature's bones are named after `parts` parts (its own part names, else the engine's)."""
    names = armature.get(PARTS, PART_NAMES[:parts])
    return isinstance(names, list | tuple) and len(names) == parts and \
        all(isinstance(name, str) and name in armature.data.bones for name in names)


def animate(armature, trams, settings, path=None) -> Report:
    """Each TRAM as an action on `armature` (its bones the parts by name: a character's, or
    any armature so named), the first assigned; Made(path, tram, action) each, in order."""
    result = Report(last_frame=settings.frame_start)
    try:
        body = armature_body(armature, settings.global_scale, settings.axes, max((tram.parts for tram in trams), default=len(PART_NAMES)))
    except ObanError as error:
        raise ObanError(path, str(error)) from None
    parts = body.names
    for tram in trams:
        if tram.parts != len(parts):
            raise ObanError(path, f"'{tram.name}' moves {tram.parts} parts; '{armature.name}' has {len(parts)}")
    actions = _Actions(armature, parts, trams, settings.frame_start)
    try:
        for run in bounded_runs([tram.frames * len(parts) for tram in trams], CHUNK_KEYS):   # a run at a time
            chunk = trams[run]
            every = bones.bone_keys(chunk, body.rest[:, :3, :3], body.axes, body.scale, settings.keys != "FILE",
                                    settings.frame_start)
            for tram, keys in zip(chunk, every):
                result.made.append(Made(path, tram, actions.new(tram, keys)))
                result.last_frame = max(result.last_frame, settings.frame_start + tram.frames - 1)
                if not len(keys.parts):
                    result.notes.append(f"{path}: '{tram.name}': an overlay of no parts (its used and replaced "
                                        f"parts 0): an action without keys")
    finally:
        actions.remove_templates()
    record_actions(armature, [made.block for made in result.made])
    if result.made:
        compat.share_object_action(armature, result.made[0].block)
    return result


def _armature(context, character, collection, settings, path):
    """The armature object, its bones resting at the parts' rest positions (edit mode, the
    one way Blender makes bones); ObanError where, at the import's scale, a bone would stand
    further out than a length float32 can square (docs/characters.md 8)."""
    body = character.body
    heads = bones.rest_heads(body.parents, body.translations, settings.axes, settings.global_scale)
    tails = bones.rest_tails(body.parents, heads, (0.0, 0.0, settings.global_scale))
    reach = np.sqrt(np.square(np.concatenate([heads, tails])).sum(axis=1)).max()
    if not np.square(reach) <= MAX_SQUARE:
        raise ObanError(path, f"'{character.name}': at scale {settings.global_scale:g} its bones reach {reach:.3g} "
                              f"Blender units from its root, a length whose square leaves float32's range")
    data = bpy.data.armatures.new(body.name)
    armature = bpy.data.objects.new(character.name, data)
    collection.objects.link(armature)
    armature.id_properties_ensure().update({
        CHARACTER: character.name, BODY: body.name, PARTS: [part.name for part in body.parts],
        TRANSLATIONS: body.translations.ravel().tolist(), PARENTS: np.asarray(body.parents).tolist(),
        BODY_FILE: body.source, BODY_INSTANCE: body.instance, CHARACTER_FILE: character.source,
        CHARACTER_INSTANCE: character.instance}
        | import_properties(settings.global_scale, settings.axes, settings.frame_start))
    view_layer = context.view_layer
    active = view_layer.objects.active
    view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        made = []
        for part, head, tail in zip(body.parts, heads.tolist(), tails.tolist()):
            bone = data.edit_bones.new(part.name)
            bone.head, bone.tail = head, tail
            bone.parent = made[part.parent] if part.parent >= 0 else None
            made.append(bone)
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = active
    return armature


def _part_meshes(character, armature, collection, shared):
    """Each part's mesh as an object rigidly on its bone: at the part's frame (the bone's pose
    turned back by its rest rotation; Blender puts a bone's child at its tail)."""
    for part in character.body.parts:
        if part.mesh is None:
            continue
        name = f"{character.name} {part.name}"
        obj = bpy.data.objects.new(name, shared.mesh([part.mesh], unnamed=name))
        collection.objects.link(obj)
        bone = armature.data.bones[part.name]
        obj.parent, obj.parent_type, obj.parent_bone = armature, "BONE", part.name
        inverse = np.eye(4)
        inverse[:3, :3] = np.array(bone.matrix_local)[:3, :3].T
        inverse[1, 3] = -bone.length        # (T(0, length, 0) . R_b)^-1 = R_b^T . T(0, -length, 0)
        obj.matrix_parent_inverse = Matrix(inverse.tolist())


class _Channels:
    """The F-curves' (data path, index, group) of each bone's rotation and of the root's
    location, named once for all the actions of an armature."""

    def __init__(self, parts):
        self.parts = parts
        paths = [f'pose.bones["{bpy.utils.escape_identifier(name)}"].' for name in parts]
        self.rotation = [[(path + ROTATION, i, name) for i in range(4)] for path, name in zip(paths, parts)]
        self.root = [(paths[0] + LOCATION, i, parts[0]) for i in range(3)]

    def of(self, keys):
        """In the order of the keys' rows (bones.BoneKeys): every keyed bone's w, then x, y, z,
        then the root's location (a group keeps its own F-curves together whatever the order)."""
        parts = keys.parts.tolist()
        rotations = [self.rotation[p][i] for i in range(4) for p in parts]
        return rotations + self.root if keys.root_location is not None else rotations


class _Actions:
    """A new action per TRAM on `armature`, named after it: LINEAR quaternion keys per bone
    (bone groups), the root's location on every frame, its description and markers; a fake
    user keeps it. TRAMs that key the same bones are copies of one template action of their
    F-curves, without keys (Blender copies an action in one call, where making its F-curves
    takes one each); the templates go at the end."""

    def __init__(self, armature, parts, trams, frame_start):
        self.armature, self.frame_start = armature, frame_start
        self.channels = _Channels(parts)
        shapes = Counter(self._shape(tram, bones.keyed_parts(tram)) for tram in trams)
        self.shared = {shape for shape, count in shapes.items() if count > 1}
        self.templates = {}

    @staticmethod
    def _shape(tram, parts):
        return tram.has(OVERLAY), parts.tobytes()

    def new(self, tram, keys):
        shape = self._shape(tram, keys.parts)
        if shape not in self.shared:
            action, fcurves = compat.new_object_action(self.armature, tram.name, self.channels.of(keys))
        else:
            if shape not in self.templates:
                self.templates[shape] = self._template(self.channels.of(keys))
            template, order = self.templates[shape]
            action, stored = compat.copy_object_action(self.armature, template, tram.name)
            fcurves = [stored[i] for i in order]
        compat.fill_fcurve_runs(fcurves, keys.rotations, keys.counts)   # the rotations: the first 4n
        if keys.root_location is not None:
            compat.fill_fcurve_runs(fcurves[-3:], keys.root_location, [tram.frames] * 3)
        action.id_properties_ensure().update(tram_properties(tram))
        if tram.source:
            action[SOURCE_FILE] = os.path.abspath(tram.source)
        for name, frame in tram_markers(tram, self.channels.parts):
            action.pose_markers.new(name).frame = self.frame_start + frame
        action.use_fake_user = True
        return action

    def _template(self, channels):
        """A new action of these F-curves, and where its copies keep each of them."""
        template, made = compat.new_object_action(self.armature, TEMPLATE, channels)
        where = {fcurve.as_pointer(): i for i, fcurve in enumerate(compat.stored_fcurves(template))}
        return template, [where[fcurve.as_pointer()] for fcurve in made]

    def remove_templates(self):
        """Each template, which its copies have left without a user: freed as it is (unlinking
        it first would walk every other data block). One a failure left on the armature is
        unlinked, all of them in one walk."""
        used = []
        for template, _ in self.templates.values():
            if template.users:
                used.append(template)
            else:
                bpy.data.actions.remove(template, do_unlink=False)
        bpy.data.batch_remove(used)
        self.templates.clear()
