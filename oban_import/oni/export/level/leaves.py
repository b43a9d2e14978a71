"""The door class geometry a level rebuild (rebuild.py, docs/level.md 11) writes from re-modelled
door leaves. OniSplit's -create:level makes every leaf of a door (and its closed gunk) of the
meshes of its class's first geometry (OFGA), an M3GM an element; the import made a leaf's
mesh of exactly those M3GMs, its parts in the elements' order, in the leaf's own frame (its
flip is in its animation). An edited part is written as that M3GM's class file
(oni/export/shared/parts.py: the part as the scene holds it, what was not moved as read), linking the
texture the class's M3GM links; every leaf showing an M3GM must show it alike."""

import dataclasses

import numpy as np

from ....core.errors import ObanError
from ....core.report import listed
from ...blender.shared.fingerprints import mesh_edited
from ...io.container.library import Libraries
from ...io.import_frame import import_frame
from ...io.level.properties import door_fields
from ...io.level_rebuild.class_files import class_file_name
from ...io.objects.read import stored_mesh
from ..shared.parts import recorded_parts, scene_parts
from ..shared.textures import slot_textures
from .scene import leaves_of


@dataclasses.dataclass
class _Shown:
    """An M3GM of a door class's geometry as one leaf shows it."""
    leaf: str               # the leaf object's name
    door_class: str
    mesh: str               # the M3GM's name without 'M3GM'
    data: bytes | None      # its class file as the leaf has it; None: as read


def remodelled_classes(doors, door_classes, furniture_classes, classes, frame):
    """({class file: bytes} of each M3GM of a door class's first geometry whose leaves show it
    edited, [notes: what was written from which leaf], [refusals], {names of the leaves whose
    edits these carry}, [edits dropped: a re-modelled leaf's part showing another texture]). `doors`: the level's door Empties (their leaves their children);
    `door_classes`, `furniture_classes`: the level's, by name (io/level/model.py); `classes`:
    the class files the rebuild writes; `frame`: (scale, axes) where a mesh does not say.
    A door whose fields are wrong, or whose class is not the level's, is refused elsewhere
    (rebuild_objects.scene_objects)."""
    shown, refused, dropped = {}, [], []
    with Libraries() as libraries:
        for door in doors:
            try:
                door_class = door_classes.get(door_fields(door, f"object '{door.name}'", (0, 0, 0))["class_name"])
            except ObanError:
                continue
            for leaf in leaves_of([door]) if door_class is not None else []:
                try:
                    meshes, retextured = _leaf_meshes(leaf, door_class, classes, frame, libraries)
                    for shown_mesh in meshes:
                        shown.setdefault(class_file_name("M3GM" + shown_mesh.mesh), []).append(shown_mesh)
                    dropped += retextured
                except ObanError as error:
                    refused.append(str(error))
    furniture = {element.mesh_name: name for name, geometry in furniture_classes.items()
                 for element in geometry.elements if element.mesh_name}
    files, notes, carried = {}, [], set()
    for file, seen in shown.items():
        edited = next((one for one in seen if one.data is not None), None)
        if edited is None:
            continue
        other = next((one for one in seen if one.data != edited.data), None)
        where = f"M3GM '{edited.mesh}' of door class '{edited.door_class}'"
        if other is not None:
            refused.append(f"object '{edited.leaf}' and object '{other.leaf}' show {where} otherwise "
                           f"({'both re-modelled' if other.data is not None else 'the second as read'}): OniSplit's "
                           f"rebuild makes every leaf of a door class of one geometry: re-model them alike")
        elif edited.mesh in furniture:
            refused.append(f"object '{edited.leaf}': {where} is also furniture class '{furniture[edited.mesh]}''s: "
                           f"re-modelled, it would re-model that furniture too")
        else:
            files[file] = edited.data
            carried.update(one.leaf for one in seen)
            notes.append(f"{where} written from object '{edited.leaf}' (re-modelled)")
    return files, notes, refused, carried, dropped


def _leaf_meshes(leaf, door_class, classes, frame, libraries) -> list:
    """([_Shown] of each named M3GM of the class's first geometry as `leaf` shows it, [its parts
    showing a texture other than the one imported: the door's Texture1 or Texture2, or the
    class M3GM's, which the rebuild keeps]); ObanError where it was edited and what it shows
    cannot be written as that geometry."""
    label = f"object '{leaf.name}'"
    geometry = door_class.geometries[0]
    elements = geometry.elements if geometry is not None else []
    if not mesh_edited(leaf.data):
        return [_Shown(leaf.name, door_class.name, e.mesh_name, None) for e in elements if e.mesh_name], []
    mesh = leaf.data
    recorded = recorded_parts(mesh, f"{label} mesh '{mesh.name}'")

    def cannot(why):
        return ObanError(label, f"its mesh was edited, but it cannot be written as door class '{door_class.name}''s "
                                f"geometry: {why}")

    if not elements or len(recorded) != len(elements):
        raise cannot(f"the class has {len(elements)} meshes there, the leaf {len(recorded)} parts")
    textures = []
    for k, (record, element) in enumerate(zip(recorded, elements)):
        if element.mesh is None or not element.mesh_name or class_file_name("M3GM" + element.mesh_name) not in classes:
            raise cannot(f"its mesh {k} is {'unnamed' if not element.mesh_name else 'not found'} (the rebuild writes "
                         f"a class's meshes as named M3GM files)")
        try:
            stored = stored_mesh(record.file, record.instance, record.name, libraries.get(record.file))
        except ObanError as error:
            raise cannot(f"the leaf's part {k} as read is gone ({error})") from None
        if not np.array_equal(stored.points, element.mesh.points):
            raise cannot(f"the leaf's part {k} was not its M3GM '{element.mesh_name}' (other points), which "
                         f"OniSplit makes every leaf of")
        textures.append(stored.texture_name)
    scale, axes = import_frame(mesh, f"{label} mesh '{mesh.name}'", *frame)
    parts, scene = scene_parts(leaf, label, scale, axes, libraries, as_read=[element.mesh for element in elements])
    names = [name for name, _ in slot_textures(mesh)]
    retextured = []
    for k, texture in enumerate(textures):
        shown = sorted({names[slot] for slot in np.unique(scene.slots[scene.faces_of(k)]).tolist()} - {texture})
        if shown:
            retextured.append(f"{label}: part {k} shows texture {listed(shown)}, not '{texture}' as imported; a leaf "
                              f"shows its door's Texture1 or Texture2 (oni_texture1, oni_texture2), else its class's")
    return [_Shown(leaf.name, door_class.name, element.mesh_name,
                   dataclasses.replace(part, name=element.mesh_name).file_bytes(element.mesh.texture_name)
                   if part.edited else None)
            for part, element in zip(parts, elements)], retextured
