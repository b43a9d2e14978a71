"""Materials of placed objects (docs/objects.md 5): Principled BSDF fed by an Image Texture,
one per texture and shared; a missing texture gives an untextured material of its name. And
of environment quads (docs/level.md, "In Blender"): the texture times each corner's shade, as
the game modulates it, blended or culled as the quad's flags say. The image node an import
makes is TEXTURE_NODE (the exports read the image a slot shows there first)."""

import bpy

from ....blender import compat
from ...io.level.properties import SHADE_ATTRIBUTE
from ...io.objects.model import Texture
from ...io.objects.properties import texture_properties
from ...io.objects.textures import NO_U_WRAP, NO_V_WRAP

CLAMPED = "EXTEND"       # Direct3D's clamp: the edge texel goes on (CLIP would show black)
TEXTURE_NODE = "texture"   # an environment material's image node
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
    named = "" if texture is None and name == UNTEXTURED else name    # the untextured material names none
    material.id_properties_ensure().update(texture_properties(texture, named))
    return material


def environment_template(textured: bool, transparent: bool, two_sided: bool) -> "bpy.types.Material":
    """A material of environment quads, its texture left to set (set_environment_texture):
    the texture (`textured`; else none) times the corner colour SHADE_ATTRIBUTE into the base
    colour, as the game modulates them; alpha blended (texture alpha times shade alpha) for
    Transparent quads, opaque for the others whatever their shade's alpha; the back faces
    culled unless the quads are two-sided. The materials of one import are copies of these."""
    material = bpy.data.materials.new("environment template")
    tree = compat.material_nodes(material)
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    bsdf.inputs["Roughness"].default_value = 1.0
    x, y = bsdf.location.x, bsdf.location.y
    corner = tree.nodes.new("ShaderNodeVertexColor")
    corner.layer_name, corner.location = SHADE_ATTRIBUTE, (x - 520, y - 300)
    colour, alpha = corner.outputs["Color"], corner.outputs["Alpha"]
    if textured:
        node = tree.nodes.new("ShaderNodeTexImage")
        node.name, node.location = TEXTURE_NODE, (x - 520, y)
        colour = _product(tree, "ShaderNodeVectorMath", node.outputs["Color"], colour, (x - 220, y))
        alpha = _product(tree, "ShaderNodeMath", node.outputs["Alpha"], alpha, (x - 220, y - 200))
    tree.links.new(colour, bsdf.inputs["Base Color"])
    if transparent:
        tree.links.new(alpha, bsdf.inputs["Alpha"])
        compat.set_alpha_blended(material)
    material.use_backface_culling = not two_sided
    return material


def environment_material(template, kind: tuple, name: str, texture: Texture | None, image) -> "bpy.types.Material":
    """A copy of `template` (environment_template(*kind)) named after the texture and the way
    it draws, showing `image` (of `texture`; None: untextured)."""
    material = template.copy()
    _, transparent, two_sided = kind
    material.name = name + " shaded" + (" transparent" if transparent else " two-sided" if two_sided else "")
    if image is not None:
        node = compat.material_nodes(material).nodes[TEXTURE_NODE]
        node.image = image
        if texture.flags & (NO_U_WRAP | NO_V_WRAP):   # the template's repeats (each change updates the tree)
            node.extension = CLAMPED
    material.id_properties_ensure().update(texture_properties(texture, name))
    return material


def _product(tree, kind, a, b, location):
    """The output of a Multiply node (`kind`: vector or scalar math) of a and b."""
    node = tree.nodes.new(kind)
    node.operation, node.location = "MULTIPLY", location
    tree.links.new(a, node.inputs[0])
    tree.links.new(b, node.inputs[1])
    return node.outputs[0]
