"""Old games' animations in Blender, exactly as the games play them: Oni's object animations
(OBAN), levels and their placed objects, characters and their animations (TRAM), and Outpost
2's sprite animations; and Oni's animations, meshes, bodies and levels back out. A wing per game
(`oni/`, `outpost2/`), layers inside each (io, engine, blender, and Oni's way back, export), the
shared `core/` and `blender/`, the front ends in `ui/` (oban_import/README.md).
"""

bl_info = {  # for Blender 3.4-4.1, which load this folder as a legacy add-on
    "name": "Oni Levels, Characters and Animations, Outpost 2 Sprites",
    "author": "oban_import developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import and File > Export",
    "description": "Oni's object animations, levels, placed objects and characters in and out; Outpost 2 sprites",
    "category": "Import-Export",
}


def register():
    from .ui import operators
    operators.register()


def unregister():
    from .ui import operators
    operators.unregister()
