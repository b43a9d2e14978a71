"""Import Oni object animations (OBAN) into Blender, exactly as the engine plays them.

The format and math modules (animation, binary, reader, engine, axes) never import
bpy; everything Blender-side lives in the `blender` subpackage, loaded on register.
"""

bl_info = {  # for Blender 3.4-4.1, which load this folder as a legacy add-on
    "name": "Oni Object Animation (OBAN) Importer",
    "author": "oban_import developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > Oni Object Animation",
    "description": "Import Oni OBAN animations (raw, .oni, level .dat, OniSplit .xml) as animated empties",
    "category": "Import-Export",
}


def register():
    from .blender import operators
    operators.register()


def unregister():
    from .blender import operators
    operators.unregister()
