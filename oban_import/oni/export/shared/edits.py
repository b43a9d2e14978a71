"""What an export cannot carry, named: an instance's name OniSplit cannot open (`named`); of a mesh object, what it shows that no M3GM holds
(modifiers, shape keys, colours), a part whose faces show several textures. Every export that
writes an object's M3GMs (meshes, bodies, a level's door leaves and placed objects) names
them, never drops them silently."""

import numpy as np

from ....core.errors import ObanError
from ....core.report import listed
from ...blender.shared.mesh_data import render_uv_map
from ...io.container.instance_file import instance_name


def dropped_mesh_edits(obj, parts, scene, slots) -> list:
    """What the object shows that its M3GMs cannot hold: unheld_edits', a part whose faces
    show several textures."""
    edits = unheld_edits(obj)
    for index, part in enumerate(parts):
        shown = {(slots[s][0], slots[s][1].name if slots[s][1] else ""): None
                 for s in np.unique(scene.slots[scene.faces_of(index)]).tolist()}
        if len(shown) > 1:
            edits.append(f"part '{part.name}': its faces show {len(shown)} textures "
                         f"({listed([name or 'none' for name, _ in shown])}); an M3GM shows one (written with "
                         f"'{slots[part.slot][0] or 'none'}', its most faces')")
    return edits


def unheld_edits(obj, besides=()) -> list:
    """What a mesh object shows that no M3GM holds: modifiers (but those `besides`), shape
    keys, colours (the level rebuild names them of a door leaf, the body export of a skinned
    mesh, too)."""
    mesh, edits = obj.data, []
    modifiers = [m.name for m in obj.modifiers if m.show_viewport and m not in besides]
    if modifiers:
        edits.append(f"its modifiers {listed(modifiers)} are not applied (an M3GM holds the mesh itself)")
    keys = [key.name for key in mesh.shape_keys.key_blocks[1:]] if mesh.shape_keys else []
    if keys:
        edits.append(f"its shape keys {listed(keys)} are not written (an M3GM holds one shape, the basis)")
    colours = [attribute.name for attribute in mesh.color_attributes]
    if colours:
        edits.append(f"its colour attributes {listed(colours)} are not written (an M3GM holds no colours)")
    return edits


def unwritten_uv_maps(mesh) -> list:
    """What a note says of a mesh's UV maps but the one Blender renders with, which the export
    writes: an M3GM holds one ([] for none other)."""
    written = render_uv_map(mesh)
    others = [layer.name for layer in mesh.uv_layers if written is None or layer.name != written.name]
    if not others:
        return []
    return [f"its UV maps {listed(others)} are not written (an M3GM holds one UV map: '{written.name}', the one "
            f"Blender renders with)"]


def named(tag: str, name: str, label: str) -> str:
    """The full name `tag` + `name` of an instance an export writes (io's instance_name: what
    OniSplit opens), or ObanError naming what it is written of (`label`) and why not."""
    try:
        return instance_name(tag, name)
    except ObanError as error:
        raise ObanError(label, f"{tag}{name}: {error.problem}; nothing written for it") from None
