"""Every difference between the supported Blender versions (3.4 .. 5.0) lives here."""

import functools

import bpy
import numpy as np

# From 4.4 an Action keeps its F-curves in channelbags, one per slot, inside
# layers/strips; 5.0 removes the legacy Action.fcurves. (4.3 has the slot API
# only behind an experimental flag, so test the version, not the attributes.)
SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)

HAS_FILE_HANDLER = hasattr(bpy.types, "FileHandler")  # 4.1+


def _has_parameter(struct, function, parameter):
    functions = struct.bl_rna.functions
    return function in functions and parameter in functions[function].parameters


# 5.0: one call makes an F-curve with its slot, layer, strip, channelbag and group
ENSURE_FCURVE_IN_GROUP = SLOTTED_ACTIONS and _has_parameter(bpy.types.Action, "fcurve_ensure_for_datablock",
                                                            "group_name")
# 4.5 (4.4 where it has it): the same without the group. It names the object's slot without
# what ActionSlots.new does when it names one, a walk over every data block of the file
# (benchmarks/fcurve_setup.py measures both); a 4.4 without it makes the slot with
# ActionSlots.new
ENSURE_FCURVE = SLOTTED_ACTIONS and _has_parameter(bpy.types.Action, "fcurve_ensure_for_datablock", "datablock")


def new_object_action(obj, name, channels, action=None):
    """Create a new action called `name` (or take `action`, a new one made beforehand),
    assign it to `obj` (creating animation_data, and on 4.4+ a slot for the object,
    assigned as obj.animation_data.action_slot), and create one F-curve per (data_path,
    array_index, group_name) tuple in `channels` (at least one), in that order; an empty
    group_name leaves the F-curve ungrouped. Returns (action, [fcurves]). Works 3.4 .. 5.0.
    No channels: an action without keys, still the object's (4.4+: its slot made)."""
    action = action if action is not None else bpy.data.actions.new(name)
    animation_data = obj.animation_data or obj.animation_data_create()
    animation_data.action = action
    if SLOTTED_ACTIONS and not channels:
        animation_data.action_slot = action.slots.new(id_type='OBJECT', name=obj.name)
        return action, []
    if ENSURE_FCURVE_IN_GROUP:
        return action, [action.fcurve_ensure_for_datablock(obj, data_path, index=array_index, group_name=group_name)
                        for data_path, array_index, group_name in channels]
    if not SLOTTED_ACTIONS:
        new = action.fcurves.new
        return action, [new(data_path, index=array_index, action_group=group_name)
                        for data_path, array_index, group_name in channels]
    if ENSURE_FCURVE:   # the first F-curve makes the slot, layer, strip and channelbag
        (data_path, array_index, _), *rest = channels
        fcurves = [action.fcurve_ensure_for_datablock(obj, data_path, index=array_index)]
        channelbag = action.layers[0].strips[0].channelbags[0]
    else:
        slot = action.slots.new(id_type='OBJECT', name=obj.name)
        animation_data.action_slot = slot
        channelbag = action.layers.new("Layer").strips.new(type='KEYFRAME').channelbag(slot, ensure=True)
        fcurves, rest = [], channels
    new = channelbag.fcurves.new
    fcurves += [new(data_path, index=array_index) for data_path, array_index, _ in rest]
    groups = {}
    for fcurve, (_, _, group_name) in zip(fcurves, channels):
        if group_name:
            if group_name not in groups:
                groups[group_name] = channelbag.groups.new(group_name)
            fcurve.group = groups[group_name]
    return action, fcurves


def copy_object_action(obj, template, name):
    """A copy of `template` (an action new_object_action made for `obj`) called `name`, its
    F-curves, keys and groups copied by Blender in one call, assigned to `obj` (4.4+: with
    its slot). Returns (action, [fcurves]) in the order they are stored (stored_fcurves)."""
    action = template.copy()
    action.name = name
    share_object_action(obj, action)
    return action, stored_fcurves(action)


def stored_fcurves(action):
    """The F-curves of an action new_object_action made, in the order it keeps them (a group's
    together: not always the order they were made in)."""
    if SLOTTED_ACTIONS:   # through strip.channelbag(slot), not strip.channelbags[0]: each key's
        # pointer then carries a shorter chain of owners, and keys are written twice as fast
        if not action.layers:   # made without channels
            return []
        return list(action.layers[0].strips[0].channelbag(action.slots[0]).fcurves)
    return list(action.fcurves)


def action_fcurves(action, obj=None):
    """All F-curves of `action`, any version. When slotted and `obj` is given
    (an object animated by `action`), only the F-curves of obj's slot."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)
    slot = obj.animation_data.action_slot if obj is not None else None
    if slot is not None:   # through strip.channelbag(slot): its keys read four times as fast (stored_fcurves)
        return [fcurve for layer in action.layers for strip in layer.strips
                if (channelbag := strip.channelbag(slot)) is not None for fcurve in channelbag.fcurves]
    return [fcurve for layer in action.layers for strip in layer.strips for channelbag in strip.channelbags
            for fcurve in channelbag.fcurves]


def played_fcurves(obj):
    """The F-curves of `obj`'s active action Blender plays on it (`obj` has animation_data): none
    without one; all of the action's before 4.4; from 4.4 those of its slot, None while it has
    no slot (it then plays nothing, which the caller is not to rely on)."""
    data = obj.animation_data
    if data.action is None:
        return []
    if SLOTTED_ACTIONS and data.action_slot is None:
        return None
    return action_fcurves(data.action, obj)


def fill_fcurves(fcurves, frames, columns, interpolation='LINEAR'):
    """Bulk-write keys into F-curves that have none yet: curve i gets (frames, columns[:, i]).

    The keys are written through co_ui, which moves a key's handles with it: from where
    keyframe_points.add leaves a new key and both its handles, (0, 0), onto the key. So
    the curves are well-formed without fcurve.update() (a sort and a handle recalculation),
    in one call where co, handle_left and handle_right take three (and twice the time).
    Never keyframe_insert."""
    count = len(frames)
    points = np.empty((len(fcurves), count, 2), np.float32)  # per curve, interleaved (frame, value)
    points[:, :, 0] = frames
    points[:, :, 1] = np.asarray(columns).T
    # one byte per key: an enum's buffer fast path (numpy int arrays take a slow path)
    modes = _interpolation_byte(interpolation) * count
    for fcurve, co in zip(fcurves, points.reshape(len(fcurves), -1)):
        keyframes = fcurve.keyframe_points
        keyframes.add(count)
        keyframes.foreach_set('co_ui', co)
        keyframes.foreach_set('interpolation', modes)


# foreach_set takes a memoryview from 4.2 (not on 3.4): slicing one costs less than slicing an
# array, which a character's 50,000 F-curves feel (fill_fcurve_runs: 15 % of its time)
MEMORYVIEW_KEYS = bpy.app.version >= (4, 2, 0)


def fill_fcurve_runs(fcurves, rows, counts, interpolation='LINEAR'):
    """Bulk-write keys into F-curves that have none yet: curve i gets the next counts[i]
    (frame, value) rows of `rows` ((K, 2) float32, C-contiguous), as fill_fcurves does."""
    flat = memoryview(rows.reshape(-1)) if MEMORYVIEW_KEYS else rows.reshape(-1)
    byte, modes = _interpolation_byte(interpolation), {}   # bytes (3.4 takes no memoryview), one per length
    at = 0
    for fcurve, count in zip(fcurves, counts):
        keyframes = fcurve.keyframe_points
        keyframes.add(count)
        keyframes.foreach_set('co_ui', flat[at:at + 2 * count])
        keyframes.foreach_set('interpolation', modes.get(count) or modes.setdefault(count, byte * count))
        at += 2 * count


@functools.cache
def _interpolation_byte(interpolation):
    return bytes([bpy.types.Keyframe.bl_rna.properties['interpolation'].enum_items[interpolation].value])


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


HAS_LAYOUT_PANELS = hasattr(bpy.types.UILayout, "panel")  # 4.2+


def option_group(layout, idname, label):
    """A group of a dialog's options: a collapsible layout panel (4.2+), else a labelled
    box. Returns the layout to draw into, or None while the panel is closed."""
    if HAS_LAYOUT_PANELS:
        header, body = layout.panel(idname, default_closed=False)
        header.label(text=label)
        return body
    box = layout.box()
    box.label(text=label)
    return box


# Meshes and materials of placed objects (oni/blender/shared/meshes.py, materials.py).
HAS_AUTO_SMOOTH = bpy.app.version < (4, 1, 0)          # custom normals need use_auto_smooth before 4.1
HAS_RENDER_METHOD = bpy.app.version >= (4, 2, 0)       # EEVEE Next: surface_render_method
HAS_FREE_NORMALS = bpy.app.version >= (4, 5, 0)        # a float3 'custom_normal' attribute is used as is
# How far a custom normal may be drawn from the one set: exact from 4.5; before, Blender encodes
# it in its corner's normal space (16-bit angles), up to about 1e-3 off (0.0009 on level9's meshes).
CUSTOM_NORMAL_ERROR = 0.0 if HAS_FREE_NORMALS else 4e-3
MATERIAL_INDEX = "material_index"                      # the face attribute of material slots (3.4+)


def set_polygons(mesh, points, corners, sizes, uvs, uv_name):
    """A new mesh's geometry: (n, 3) float32 points, the int32 point of each corner, (p,) int32
    corners of each polygon, in order, and float32 UVs per corner. From 3.6 points, corners and
    UVs are written as the attributes they are stored in, in bulk, rather than through
    vertices, loops and uv_layers (which take the slow, item by item path)."""
    mesh.vertices.add(len(points))
    mesh.loops.add(len(corners))
    mesh.polygons.add(len(sizes))
    corner_points = mesh.attributes.get(".corner_vert")   # 3.6+
    if corner_points is not None:
        mesh.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(points).ravel())
        corner_points.data.foreach_set("value", corners)
        mesh.attributes.new(uv_name, "FLOAT2", "CORNER").data.foreach_set("vector", np.ascontiguousarray(uvs).ravel())
    else:
        mesh.vertices.foreach_set("co", np.ascontiguousarray(points).ravel())
        mesh.loops.foreach_set("vertex_index", corners)
        mesh.uv_layers.new(name=uv_name).data.foreach_set("uv", np.ascontiguousarray(uvs).ravel())
    sizes = np.asarray(sizes, np.int32)
    mesh.polygons.foreach_set("loop_start", (np.cumsum(sizes) - sizes).astype(np.int32))
    if not bpy.types.MeshPolygon.bl_rna.properties["loop_total"].is_readonly:   # read-only from 3.6
        mesh.polygons.foreach_set("loop_total", sizes)


def set_material_indices(mesh, slots):
    """Each face's material slot, written as the INT face attribute MATERIAL_INDEX Blender keeps
    them in (3.4+), in bulk (MeshPolygon.material_index takes the item by item path)."""
    attribute = mesh.attributes.get(MATERIAL_INDEX) or mesh.attributes.new(MATERIAL_INDEX, "INT", "FACE")
    attribute.data.foreach_set("value", np.ascontiguousarray(slots, np.int32))


def set_byte_colors(mesh, name, rgba):
    """(corners, 4) uint8 RGBA as a new corner byte colour attribute, the bytes exactly (as
    sRGB floats b / 255), made the mesh's active and rendered colours."""
    attribute = mesh.color_attributes.new(name, "BYTE_COLOR", "CORNER")
    attribute.data.foreach_set("color_srgb", (np.asarray(rgba, np.float32) / 255.0).ravel())
    colors = mesh.color_attributes
    colors.active_color = attribute
    colors.render_color_index = colors.active_color_index


def hide_in_view_layers(collection):
    """Hide a collection (linked already) in every view layer's viewport: its objects are not
    visible (Object.visible_get()) until its eye is turned on."""
    for scene in bpy.data.scenes:
        for view_layer in scene.view_layers:
            found = _layer_collection(view_layer.layer_collection, collection)
            if found is not None:
                found.hide_viewport = True


def _layer_collection(layer, collection):
    if layer.collection == collection:
        return layer
    return next((found for child in layer.children
                 if (found := _layer_collection(child, collection)) is not None), None)


def set_smooth(mesh):
    """Every face smooth shaded (mesh.shade_smooth from 3.6)."""
    if hasattr(mesh, "shade_smooth"):
        mesh.shade_smooth()
    else:
        mesh.polygons.foreach_set("use_smooth", np.ones(len(mesh.polygons), bool))


def set_custom_normals(mesh, normals):
    """(n, 3) float32 custom normals per vertex: from 4.5 written in bulk, exactly, as a
    'free' normal attribute (the encoded ones are set item by item)."""
    if HAS_FREE_NORMALS:
        attribute = mesh.attributes.new("custom_normal", "FLOAT_VECTOR", "POINT")
        attribute.data.foreach_set("vector", np.ascontiguousarray(normals, np.float32).ravel())
        return
    if HAS_AUTO_SMOOTH:
        mesh.use_auto_smooth = True
    mesh.normals_split_custom_set_from_vertices(np.asarray(normals).tolist())   # lists convert faster


def corner_normals(mesh):
    """(loops, 3) normals as drawn (custom normals included)."""
    out = np.empty(len(mesh.loops) * 3, np.float32)
    if hasattr(mesh, "corner_normals"):
        mesh.corner_normals.foreach_get("vector", out)
    else:
        mesh.calc_normals_split()
        mesh.loops.foreach_get("normal", out)
    return out.reshape(-1, 3)


# Geometry Nodes (blender/vertex_weights.py): a node group's sockets are declared through its
# interface from 4.0 (tree.inputs / tree.outputs before); a node's inputs for each data type are
# separate sockets on 3.4 (the unused ones disabled), one socket that changes type from 4.1.
HAS_NODE_INTERFACE = "interface" in bpy.types.NodeTree.bl_rna.properties


def new_geometry_nodes(name):
    """A new Geometry Nodes group called `name` with a Geometry input and output, and its
    Group Input and Group Output nodes. Returns (group, input node, output node)."""
    group = bpy.data.node_groups.new(name, "GeometryNodeTree")
    if HAS_NODE_INTERFACE:
        for in_out in ("INPUT", "OUTPUT"):
            group.interface.new_socket("Geometry", in_out=in_out, socket_type="NodeSocketGeometry")
    else:
        group.inputs.new("NodeSocketGeometry", "Geometry")
        group.outputs.new("NodeSocketGeometry", "Geometry")
    return group, group.nodes.new("NodeGroupInput"), group.nodes.new("NodeGroupOutput")


def float_socket(sockets):
    """The socket of `sockets` (a node's inputs or outputs) that carries its float value."""
    return next(socket for socket in sockets if socket.enabled and socket.type == "VALUE")


def material_nodes(material):
    """The material's node tree, made when it has none (use_nodes is deprecated in 5.0)."""
    if material.node_tree is None:
        material.use_nodes = True
    return material.node_tree


def set_alpha_blended(material):
    """Alpha blending in the viewport and EEVEE."""
    if HAS_RENDER_METHOD:
        material.surface_render_method = "BLENDED"
    else:
        material.blend_method = "BLEND"
        material.shadow_method = "HASHED"


def share_object_action(obj, action):
    """Give `obj` an action made by new_object_action for another object (4.4+: its first
    slot too, so both objects play the same F-curves; an action without a slot, none)."""
    animation_data = obj.animation_data or obj.animation_data_create()
    animation_data.action = action
    if SLOTTED_ACTIONS and action.slots:
        animation_data.action_slot = action.slots[0]


def png_file_image(image, name):
    """Make a new `image` the image file `name` beside the .blend, its pixels to come with
    pack_png. Before anything uses it: a change of source walks every user of the image."""
    image.source = "FILE"
    image.filepath_raw = "//" + name


def pack_png(image, png, name=None):
    """Make `image` the PNG file `png` (bytes), packed into the .blend (under `name`, unless
    png_file_image named it); the same on every version: Blender reads the pixels from it."""
    image.pack(data=png, data_len=len(png))
    if name is not None:
        png_file_image(image, name)
