"""Import Oni object animations (OBAN) into Blender, exactly as the engine plays them.

Folders show the layers (each has a README): `oni/` Oni's bytes, `engine/` the engine's
math and the change to Blender's axes, both without bpy; `blender/` everything that
builds scenes, loaded on register; `options.py` the options every front end shares.
"""

bl_info = {  # for Blender 3.4-4.1, which load this folder as a legacy add-on
    "name": "Oni Object Animation (OBAN) Importer",
    "author": "oban_import developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > Oni Object Animation",
    "description": "Import Oni object animations and levels (raw, .oni, .dat, OniSplit .xml) and Outpost 2 sprites",
    "category": "Import-Export",
}


def register():
    from .blender import operators
    operators.register()


def unregister():
    from .blender import operators
    operators.unregister()
