"""Outpost 2 sprite animations in Blender (docs/outpost2.md 4): per animation an Empty
`anim_<index>` and, under it, one textured plane per distinct (bitmap, offset), each visible
on exactly the frames that use it; the animations side by side (or stacked at the origin),
in a new collection named after the file. All or nothing: a failure removes what was made."""

import bpy
import numpy as np

from ...blender import compat
from ...blender.datablocks import Snapshot, block_counts, new_collection, select_only
from ...blender.scene import update_scene
from ...core.errors import ObanError
from ...core.png import png_bytes
from ...core.report import Made, Report
from ..engine.draw import animation_boxes
from ..engine.planes import plan_sprites
from ..io.op2_properties import animation_properties, plane_properties

LAYER_STEP = 0.1            # pixels towards the viewer (-Y) per layer (docs/outpost2.md 4)
SPACING = 16                # pixels between two animations laid out side by side
READING_SHARE = 0.3         # of the progress bar


def import_sprites(context, prt_path: str, settings, progress=None) -> Report:
    """Import the chosen animations of `prt_path` (Made(prt_path, animation index, its
    Empty), in order); bad input (an ObanError) or any failure adds nothing and is reported
    in `errors`. `progress(fraction)` is called as work goes on."""
    report = progress or (lambda fraction: None)
    result = Report(files=1)
    before = block_counts()
    try:
        plan = plan_sprites(prt_path, settings, result.warnings)
    except ObanError as error:
        result.errors.append(str(error))
        return result
    report(READING_SHARE)
    made, collection = Snapshot(), new_collection(context.scene, [prt_path])
    try:
        _build(collection, prt_path, plan, settings, result,
               lambda share: report(READING_SHARE + (1 - READING_SHARE) * share))
    except Exception as error:  # a bug or no memory: nothing of this file stays
        made.remove()    # the collection too: it was made after the snapshot
        result.made = []
        result.errors.append(f"{prt_path}: could not be imported: {error!r}")
        return result
    report(1.0)
    result.counts = block_counts(since=before)
    if result.made:
        longest = max(len(plan.prt.animations[i].frames) for i in plan.indices)
        update_scene(context.scene, settings, settings.frame_start + max(longest, 1) - 1)
        if settings.update_view_transform:
            context.scene.view_settings.view_transform = "Standard"
        select_only(context, result.blocks())
    return result


def _build(collection, prt_path, plan, settings, result, progress):
    shared = {}     # bitmap index -> (mesh, material), made once
    template = []   # one material made with nodes; the others are copies (much faster)
    patterns = {}   # visibility keys -> action, shared by planes keyed alike
    scale = settings.global_scale
    places = _places(plan, settings)
    for done, index in enumerate(plan.indices):
        if done % 16 == 0:
            progress(done / len(plan.indices))
        animation = plan.prt.animations[index]
        empty = bpy.data.objects.new(f"anim_{index}", None)
        empty.empty_display_type = "PLAIN_AXES"
        empty.empty_display_size = 16 * scale
        empty.location = (places[done], 0.0, 0.0)
        collection.objects.link(empty)
        empty.id_properties_ensure().update(animation_properties(index, animation))
        result.made.append(Made(prt_path, index, empty))
        planes, visible = plan.layers[index]
        for layer, (bitmap, x, y) in enumerate(planes):
            if bitmap not in shared:
                shared[bitmap] = _bitmap_data(bitmap, plan.pixels[bitmap], scale, template)
            mesh, material = shared[bitmap]
            plane = bpy.data.objects.new(f"anim_{index}_b{bitmap}_{x}_{y}", mesh)
            collection.objects.link(plane)
            plane.parent = empty
            plane.location = (x * scale, -layer * LAYER_STEP * scale, -y * scale)
            plane.id_properties_ensure().update(plane_properties(bitmap, x, y))
            _key_visibility(plane, visible[layer], settings.frame_start, patterns)
    progress(1.0)


def _places(plan, settings):
    """Each chosen animation's x: side by side in import order, SPACING pixels between the
    boxes of their frames (draw.animation_boxes), the first at the origin; or all at 0."""
    if not settings.side_by_side:
        return [0.0] * len(plan.indices)
    boxes = animation_boxes(plan.prt)[plan.indices]
    steps = boxes[:-1, 2] - boxes[1:, 0] + SPACING        # from one origin to the next
    return (settings.global_scale * np.concatenate([[0], np.cumsum(steps)])).tolist()


def _bitmap_data(index, rgba, scale, template):
    """A plane mesh (top-left at its origin, facing -Y) with a material showing bitmap `index`."""
    height, width = rgba.shape[:2]
    image = bpy.data.images.new(f"op2_bitmap_{index}", width, height, alpha=True)
    compat.pack_png(image, png_bytes(rgba), f"op2_bitmap_{index}.png")
    image.colorspace_settings.name = "sRGB"
    image.alpha_mode = "STRAIGHT"
    if template:
        material = template[0].copy()
        material.name = f"op2_bitmap_{index}"
        next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image = image
    else:
        material = bpy.data.materials.new(f"op2_bitmap_{index}")
        _emission_nodes(material, image)
        template.append(material)
    mesh = bpy.data.meshes.new(f"op2_bitmap_{index}")
    w, h = width * scale, height * scale
    mesh.from_pydata([(0, 0, 0), (0, 0, -h), (w, 0, -h), (w, 0, 0)], [], [(0, 1, 2, 3)])
    uv = mesh.uv_layers.new(name="UVMap")
    uv.data.foreach_set("uv", np.array([0, 1, 0, 0, 1, 0, 1, 1], np.float32))
    mesh.materials.append(material)
    return mesh, material


def _emission_nodes(material, image):
    """Unlit: the texture's colour emitted at strength 1, mixed with transparency by its alpha."""
    tree = compat.material_nodes(material)
    nodes, links = tree.nodes, tree.links
    nodes.clear()
    texture = nodes.new("ShaderNodeTexImage")
    texture.image, texture.interpolation, texture.extension = image, "Closest", "CLIP"
    emission = nodes.new("ShaderNodeEmission")
    emission.inputs["Strength"].default_value = 1.0
    transparent = nodes.new("ShaderNodeBsdfTransparent")
    mix = nodes.new("ShaderNodeMixShader")
    output = nodes.new("ShaderNodeOutputMaterial")
    links.new(texture.outputs["Color"], emission.inputs["Color"])
    links.new(texture.outputs["Alpha"], mix.inputs[0])
    links.new(transparent.outputs[0], mix.inputs[1])
    links.new(emission.outputs[0], mix.inputs[2])
    links.new(mix.outputs[0], output.inputs["Surface"])
    for i, node in enumerate((texture, emission, mix, output)):
        node.location = (300 * i - 600, 0)
    transparent.location = (0, 200)
    compat.set_alpha_blended(material)
    material.use_backface_culling = False


def _key_visibility(plane, visible, frame_start, patterns):
    """hide_viewport and hide_render keyed (constant) where visibility changes; planes with
    the same visibility share one action."""
    hidden = ~visible
    plane.hide_viewport = plane.hide_render = bool(hidden[0])
    changes = np.flatnonzero(np.r_[True, hidden[1:] != hidden[:-1]])
    pattern = (frame_start, bool(hidden[0]), changes.tobytes())      # the keys, in short
    if pattern in patterns:
        compat.share_object_action(plane, patterns[pattern])
        return
    action, fcurves = compat.new_object_action(plane, f"op2_visibility_{len(patterns)}",
                                               [("hide_viewport", 0, ""), ("hide_render", 0, "")])
    patterns[pattern] = action
    values = hidden[changes].astype(np.float32)
    compat.fill_fcurves(fcurves, frame_start + changes, np.stack([values, values], axis=1), "CONSTANT")
