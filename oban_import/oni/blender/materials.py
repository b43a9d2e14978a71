"""Materials of placed objects (docs/objects.md 5): Principled BSDF fed by an Image Texture,
one per texture and shared; a missing texture gives an untextured material of its name."""

import bpy

from ...blender import compat
from ..io.objects.model import Texture
from ..io.objects.properties import texture_properties
from ..io.objects.textures import NO_U_WRAP, NO_V_WRAP

CLAMPED = "EXTEND"       # Direct3D's clamp: the edge texel goes on (CLIP would show black)
UNTEXTURED = "untextured"  # the material of parts that name no texture at all


def new_material(name: str, texture: Texture | None, image=None) -> "bpy.types.Material":
    """A material named `name`: with `image` (of `texture`) as its colour, alpha blended when
    the texture has alpha, clamped when it does not wrap; without, plain grey."""
    material = bpy.data.materials.new(name)
    tree = compat.material_nodes(material)
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    bsdf.inputs["Roughness"].default_value = 1.0
    if image is not None:
        node = tree.nodes.new("ShaderNodeTexImage")
        node.image = image
        node.location = (bsdf.location.x - 340, bsdf.location.y)
        node.extension = CLAMPED if texture.flags & (NO_U_WRAP | NO_V_WRAP) else "REPEAT"
        tree.links.new(node.outputs["Color"], bsdf.inputs["Base Color"])
        if texture.has_alpha:
            tree.links.new(node.outputs["Alpha"], bsdf.inputs["Alpha"])
            compat.set_alpha_blended(material)
    material.id_properties_ensure().update(texture_properties(texture, name))
    return material

