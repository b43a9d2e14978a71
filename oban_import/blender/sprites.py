"""Outpost 2 sprite animations in Blender (docs/outpost2.md 4): per animation an Empty
`anim_<index>` and, under it, one textured plane per distinct (bitmap, offset), each visible
on exactly the frames that use it. All or nothing: a failure removes what was made."""

import heapq
import operator
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..errors import ObanError
from ..outpost2.bmp import ArtBitmaps, find_bmp
from ..options import SpriteSettings
from ..png import png_bytes
from ..outpost2.properties import animation_properties, plane_properties
from ..outpost2.prt import read_prt
from . import compat
from .datablocks import Snapshot, select_only

SPRITE_FPS = 100            # one frame a game tick, ~100 ticks a second at normal speed (docs/outpost2.md 3)
LAYER_STEP = 0.1            # pixels towards the viewer (-Y) per layer (docs/outpost2.md 4)
READING_SHARE = 0.3         # of the progress bar


@dataclass
class SpriteResult:
    empties: list = field(default_factory=list)     # (animation index, Empty), in import order
    objects: list = field(default_factory=list)     # every object made: Empties and planes
    images: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    errors: list = field(default_factory=list)


def import_sprites(context, prt_path: str, settings: SpriteSettings, progress=None) -> SpriteResult:
    """Import the chosen animations of `prt_path`; bad input (an ObanError) or any failure
    adds nothing and is reported in `errors`. `progress(fraction)` is called as work goes on."""
    report = progress or (lambda fraction: None)
    result = SpriteResult()
    try:
        plan = _plan(prt_path, settings, result.warnings)
    except ObanError as error:
        result.errors.append(str(error))
        return result
    report(READING_SHARE)
    made = Snapshot()
    try:
        _build(context, plan, settings, result,
               lambda share: report(READING_SHARE + (1 - READING_SHARE) * share))
    except Exception as error:  # a bug or no memory: nothing of this file stays
        made.remove()
        result.empties, result.objects, result.images = [], [], []
        result.errors.append(f"{prt_path}: could not be imported: {error!r}")
        return result
    report(1.0)
    if result.empties:
        _update_scene(context.scene, plan, settings)
        select_only(context, [empty for _, empty in result.empties])
    return result


# ---- reading and planning (no Blender data made) -------------------------------------------

@dataclass
class _Plan:
    prt: object
    indices: list
    layers: dict        # animation index -> (planes [(bitmap, x, y)], visible (planes, frames) bool)
    pixels: dict        # bitmap index -> RGBA (h, w, 4) uint8, top row first


def _plan(prt_path, settings, warnings):
    prt = read_prt(prt_path)
    bmp_path = settings.bmp_path or find_bmp(prt_path)
    indices = list(range(len(prt.animations))) if settings.animations is None else list(settings.animations)
    for i, index in enumerate(indices):
        try:
            indices[i] = operator.index(index)
        except TypeError:
            raise ObanError(prt_path, f"animation index {index!r} is not an integer") from None
        if not 0 <= indices[i] < len(prt.animations):
            raise ObanError(prt_path, f"animation index {index} is out of range ({len(prt.animations)} animations)")
    layers, pixels = {}, {}
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        for index in indices:
            planes, visible = plane_layers(prt.animations[index].frames)
            for bitmap, _, _ in planes:
                if bitmap not in pixels:
                    pixels[bitmap] = bitmaps.rgba(bitmap)     # checked against the .bmp here
            empty = [p for p in planes if 0 in pixels[p[0]].shape[:2]]
            for bitmap in sorted({p[0] for p in empty}):
                warnings.append(f"{prt_path}: animation {index}: bitmap {bitmap} has no pixels; not drawn")
            keep = [i for i, p in enumerate(planes) if p not in empty]
            layers[index] = ([planes[i] for i in keep], visible[keep])
    return _Plan(prt, indices, layers, pixels)


def plane_layers(frames) -> tuple:
    """([(bitmap, x, y)] in drawing order, (planes, frames) bool visibility).

    One plane per distinct (bitmap, x, y), ordered so that every frame's subframe order holds
    (a topological order, ties by first use). If no such order exists (a cycle, or a pair
    used twice in one frame), planes are split by subframe position too, which always holds."""
    used = [[(int(b), int(x), int(y)) for b, _, _, x, y in f.subframes.tolist()] for f in frames]
    order = _topological(used)
    if order is None:
        used = [[key + (position,) for position, key in enumerate(keys)] for keys in used]
        first = {}
        for keys in used:
            for key in keys:
                first.setdefault(key, len(first))
        order = sorted(first, key=lambda key: (key[3], first[key]))
    slot = {key: i for i, key in enumerate(order)}
    visible = np.zeros((len(order), len(frames)), bool)
    for f, keys in enumerate(used):
        visible[[slot[key] for key in keys], f] = True
    return [key[:3] for key in order], visible


def _topological(used):
    first, after, before = {}, {}, {}
    for keys in used:
        if len(set(keys)) != len(keys):
            return None
        for key in keys:
            if key not in first:
                first[key] = len(first)
                after[key], before[key] = set(), 0
        for a, b in zip(keys, keys[1:]):
            if b not in after[a]:
                after[a].add(b)
                before[b] += 1
    ready = [(first[k], k) for k in first if before[k] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, key = heapq.heappop(ready)
        order.append(key)
        for b in after[key]:
            before[b] -= 1
            if before[b] == 0:
                heapq.heappush(ready, (first[b], b))
    return order if len(order) == len(first) else None


# ---- building ---------------------------------------------------------------------------

def _build(context, plan, settings, result, progress):
    shared = {}     # bitmap index -> (mesh, material), made once
    template = []   # one material made with nodes; the others are copies (much faster)
    patterns = {}   # visibility keys -> action, shared by planes keyed alike
    for done, index in enumerate(plan.indices):
        if done % 16 == 0:
            progress(done / len(plan.indices))
        animation = plan.prt.animations[index]
        empty = bpy.data.objects.new(f"anim_{index}", None)
        empty.empty_display_type = "PLAIN_AXES"
        empty.empty_display_size = 16 * settings.scale
        context.collection.objects.link(empty)
        empty.id_properties_ensure().update(animation_properties(index, animation))
        result.empties.append((index, empty))
        result.objects.append(empty)
        planes, visible = plan.layers[index]
        for layer, (bitmap, x, y) in enumerate(planes):
            if bitmap not in shared:
                shared[bitmap] = _bitmap_data(bitmap, plan.pixels[bitmap], settings.scale, result, template)
            mesh, material = shared[bitmap]
            plane = bpy.data.objects.new(f"anim_{index}_b{bitmap}_{x}_{y}", mesh)
            context.collection.objects.link(plane)
            plane.parent = empty
            plane.location = (x * settings.scale, -layer * LAYER_STEP * settings.scale, -y * settings.scale)
            plane.id_properties_ensure().update(plane_properties(bitmap, x, y))
            _key_visibility(plane, visible[layer], settings.frame_start, patterns)
            result.objects.append(plane)
    progress(1.0)


def _bitmap_data(index, rgba, scale, result, template):
    """A plane mesh (top-left at its origin, facing -Y) with a material showing bitmap `index`."""
    height, width = rgba.shape[:2]
    image = bpy.data.images.new(f"op2_bitmap_{index}", width, height, alpha=True)
    compat.pack_png(image, png_bytes(rgba), f"op2_bitmap_{index}.png")
    image.colorspace_settings.name = "sRGB"
    image.alpha_mode = "STRAIGHT"
    result.images.append(image)
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


def _update_scene(scene, plan, settings):
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = SPRITE_FPS, 1.0
    if settings.update_scene_duration:
        longest = max(len(plan.prt.animations[i].frames) for i in plan.indices)
        scene.frame_start = min(scene.frame_start, settings.frame_start)
        scene.frame_end = max(scene.frame_end, settings.frame_start + max(longest, 1) - 1)
    if settings.update_view_transform:
        scene.view_settings.view_transform = "Standard"
