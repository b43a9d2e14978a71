"""`env_show` in Blender (docs/cutscenes.md 4.5): the environment's quads of a script id hidden
and shown in step, without touching its mesh: each environment object gets a face attribute
of each quad's script id and, per id the cutscene toggles, a Geometry Nodes modifier deleting
that id's faces, on (the quads hidden) where the script hides them."""

import bpy
import numpy as np

from ....blender import compat
from ...io.level.properties import ENVIRONMENT, QUAD_ATTRIBUTE

SCRIPT_ID_ATTRIBUTE = "oni_script_id"   # INT face: the script id env_show knows the quad by (-1: none)


def hide_quads(objects, quads: dict, shown: dict, frame_start: int) -> list:
    """On the environment `objects` (those of one level), for each script id of `shown` (id ->
    (T,) bool): its quads (`quads`: id -> quad indices) hidden where it is False. The ids the
    environment has no quads of, listed."""
    environments = [obj for obj in objects if ENVIRONMENT in obj and obj.type == "MESH"]
    missing = [script_id for script_id in shown if not len(quads.get(script_id, ()))]
    named = [np.asarray(quads.get(script_id, ()), np.int64) for script_id in shown]
    every_quad = np.concatenate(named) if named else np.zeros(0, np.int64)
    if not len(every_quad):
        return missing
    every_id = np.repeat(np.fromiter(shown, np.int64, len(shown)), [len(q) for q in named])
    # a quad two ids name goes with the later one: the first of each in reverse order
    lookup_quads, first = np.unique(every_quad[::-1], return_index=True)
    lookup_ids = every_id[::-1][first]
    for obj in environments:
        mesh = obj.data
        attribute = mesh.attributes.get(QUAD_ATTRIBUTE)
        if attribute is None:
            continue
        face_quads = np.empty(len(mesh.polygons), np.int32)
        attribute.data.foreach_get("value", face_quads)
        at = np.clip(np.searchsorted(lookup_quads, face_quads), 0, len(lookup_quads) - 1)
        ids = np.where(lookup_quads[at] == face_quads, lookup_ids[at], -1).astype(np.int32)
        if not (ids >= 0).any():
            continue
        target = mesh.attributes.get(SCRIPT_ID_ATTRIBUTE) or mesh.attributes.new(SCRIPT_ID_ATTRIBUTE, "INT", "FACE")
        target.data.foreach_set("value", ids)
        for script_id in np.unique(ids[ids >= 0]).tolist():
            modifier = obj.modifiers.new(f"hide script id {script_id}", "NODES")
            modifier.node_group = _deleting(script_id)
            _key_switch(obj, modifier, shown[script_id], frame_start)
    return missing


def _deleting(script_id):
    """A node group deleting the faces whose script id attribute is `script_id` (made once)."""
    name = f"Oni hide script id {script_id}"
    group = bpy.data.node_groups.get(name)
    if group is not None:
        return group
    group, start, end = compat.new_geometry_nodes(name)
    attribute = group.nodes.new("GeometryNodeInputNamedAttribute")
    attribute.data_type = "INT"
    attribute.inputs["Name"].default_value = SCRIPT_ID_ATTRIBUTE
    compare = group.nodes.new("FunctionNodeCompare")
    compare.data_type, compare.operation = "INT", "EQUAL"
    integers = [socket for socket in compare.inputs if socket.enabled and socket.type == "INT"]
    group.links.new(next(s for s in attribute.outputs if s.enabled and s.type == "INT"), integers[0])
    integers[1].default_value = script_id
    delete = group.nodes.new("GeometryNodeDeleteGeometry")
    delete.domain = "FACE"
    group.links.new(start.outputs[0], delete.inputs["Geometry"])
    group.links.new(compare.outputs[0], delete.inputs["Selection"])
    group.links.new(delete.outputs[0], end.inputs[0])
    return group


def _key_switch(obj, modifier, shown, frame_start):
    """The modifier on (its quads deleted) where `shown` is False, keyed where it changes."""
    ticks = np.concatenate([[0], np.flatnonzero(np.diff(shown.astype(np.int8))) + 1])
    for tick in ticks.tolist():
        modifier.show_viewport = modifier.show_render = not bool(shown[tick])
        for path in ("show_viewport", "show_render"):
            modifier.keyframe_insert(path, frame=frame_start + tick)
