"""Every difference between the supported Blender versions (3.4 .. 5.0) lives here."""

import bpy
import numpy as np

# From 4.4 an Action keeps its F-curves in channelbags, one per slot, inside
# layers/strips; 5.0 removes the legacy Action.fcurves. (4.3 has the slot API
# only behind an experimental flag, so test the version, not the attributes.)
SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)

HAS_FILE_HANDLER = hasattr(bpy.types, "FileHandler")  # 4.1+


def new_object_action(obj, name, channels):
    """Create a new action called `name`, assign it to `obj` (creating animation_data,
    and on 4.4+ a slot for the object, assigned as obj.animation_data.action_slot),
    and create one F-curve per (data_path, array_index, group_name) tuple in `channels`,
    in that order; an empty group_name leaves the F-curve ungrouped.
    Returns (action, [fcurves]). Works 3.4 .. 5.0."""
    action = bpy.data.actions.new(name)
    animation_data = obj.animation_data or obj.animation_data_create()
    animation_data.action = action
    if SLOTTED_ACTIONS:
        slot = action.slots.new(id_type='OBJECT', name=obj.name)
        animation_data.action_slot = slot
        strip = action.layers.new("Layer").strips.new(type='KEYFRAME')
        channel_owner = strip.channelbag(slot, ensure=True)
    else:
        channel_owner = action
    groups = {}
    fcurves = []
    for data_path, array_index, group_name in channels:
        fcurve = channel_owner.fcurves.new(data_path, index=array_index)
        if group_name:
            if group_name not in groups:
                groups[group_name] = channel_owner.groups.new(group_name)
            fcurve.group = groups[group_name]
        fcurves.append(fcurve)
    return action, fcurves


def action_fcurves(action, obj=None):
    """All F-curves of `action`, any version. When slotted and `obj` is given
    (an object animated by `action`), only the F-curves of obj's slot."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)
    slot = obj.animation_data.action_slot if obj is not None else None
    return [
        fcurve
        for layer in action.layers
        for strip in layer.strips
        for channelbag in strip.channelbags
        if slot is None or channelbag.slot_handle == slot.handle
        for fcurve in channelbag.fcurves
    ]


def fill_fcurve(fcurve, frames, values, interpolation='LINEAR'):
    """Bulk-write keys (`frames` ascending) into an F-curve that has none yet.

    Both handles are put on the key itself, so the curve is well-formed without
    fcurve.update(), which only sorts and recomputes handles at about half the
    cost of the write."""
    points = np.empty((len(frames), 2), np.float32)  # interleaved (frame, value)
    points[:, 0], points[:, 1] = frames, values
    points = points.ravel()
    interpolation_value = bpy.types.Keyframe.bl_rna.properties['interpolation'].enum_items[interpolation].value
    keyframes = fcurve.keyframe_points
    keyframes.add(len(frames))
    keyframes.foreach_set('co', points)
    keyframes.foreach_set('handle_left', points)
    keyframes.foreach_set('handle_right', points)
    keyframes.foreach_set('interpolation', np.full(len(frames), interpolation_value, np.int32))


def register_cli_command(id, execute):
    """Register `blender --command id`; returns its handle, or None before 4.2."""
    if not hasattr(bpy.utils, "register_cli_command"):
        return None
    return bpy.utils.register_cli_command(id, execute)


def unregister_cli_command(handle):
    """Undo register_cli_command; no-op for None."""
    if handle is not None:
        bpy.utils.unregister_cli_command(handle)


def invoke_import(operator, context, event):
    """Drag and drop (4.1+) sets the file paths: confirm in a popup; otherwise the file browser."""
    if hasattr(operator, "invoke_popup"):
        return operator.invoke_popup(context)
    context.window_manager.fileselect_add(operator)
    return {"RUNNING_MODAL"}


def poll_drop(context):
    """Accept drops on the 3D Viewport and the Outliner."""
    return context.area is not None and context.area.type in {"VIEW_3D", "OUTLINER"}
