"""The exports, in one table: each one's name, dialog (its operator, menu entry and options),
settings, driver (`oni/export/`), what it chooses to write among objects, and how its report
names a file. The operators and the command line are made from it. No bpy: a driver is named
here and imported where a scene is built."""

import importlib
import os
from dataclasses import dataclass

from .listing import body_file_contents, format_table, mesh_file_contents
from .options import (BODY_EXPORT, BODY_FORMAT, CHARACTER_EXPORT, CUTSCENE_EXPORT, CUTSCENE_FORMAT, LEVEL_PATCH,
                      LEVEL_PATCH_FORMAT, LEVEL_REBUILD, LEVEL_REBUILD_FORMAT, MESH_EXPORT, MESH_FORMAT, ONI_EXPORT,
                      BodyExportSettings, CharacterExportSettings, CutsceneExportSettings, LevelPatchSettings,
                      LevelRebuildSettings, MeshExportSettings, OniExportSettings)


@dataclass(frozen=True)
class Export:
    name: str            # the command line's --format ('' for the OBAN and TRAM exports, which go by file format)
    dialog: object       # options.Dialog
    settings: type       # what the driver reads
    driver: str          # 'module:function' under oni/: function(context, objects, directory, settings) -> Report
    chooser: str         # 'module:function' under oni/: the objects it writes among some
    what: str            # what it writes, as messages name one
    describe: object     # describe(Made) -> what a written file holds
    measured: bool       # whether a file's worst error is worth saying

    def run(self, context, objects, directory, settings):
        """The driver's report of writing `objects` (the chooser's) into `directory`, the scene's
        properties of the last release read as today's first (imports bpy)."""
        importlib.import_module("..oni.blender.shared.legacy", __package__).upgrade()
        return self.function()(context, objects, directory, settings)

    def function(self, which="driver"):
        """The driver (or the chooser) itself (imports bpy)."""
        module, name = getattr(self, which).split(":")
        return getattr(importlib.import_module(f"..oni.{module}", __package__), name)

    def table(self, made) -> str:
        """The command line's table of the files written (Made each)."""
        measured = ("worst error",) if self.measured else ()
        return format_table(("file", "of", "holds", *measured, "note"),
                            [(os.path.basename(m.path), m.block.name, self.describe(m),
                              *((f"{m.error:.2g}",) if self.measured else ()), m.note) for m in made])


def _keys(made) -> str:
    item = made.item
    keys = len(item.keys) if hasattr(item, "keys") else sum(len(track.frames) for track in item.tracks)
    return f"{item.frames} frames, {keys} keys"


def _cutscene_file(made) -> str:
    """What a file of the cutscene export holds: an OBAN's frames and keys, a TRAM's, the script's ticks."""
    return made.note if isinstance(made.item, type(None)) or not hasattr(made.item, "frames") else _keys(made)


EXPORTS = (
    Export("", ONI_EXPORT, OniExportSettings, "export.oban:export_objects", "export.oban:animated_objects", "animated object",
           _keys, True),
    Export("", CHARACTER_EXPORT, CharacterExportSettings, "export.trams.export:export_characters",
           "blender.characters.armature_body:character_armatures", "character armature", _keys, True),
    Export(LEVEL_PATCH_FORMAT, LEVEL_PATCH, LevelPatchSettings, "export.level.patch:export_level_patches",
           "export.level.patch:environment_objects", "environment imported by this add-on", lambda m: f"{len(m.item.flags)} quads", False),
    Export(LEVEL_REBUILD_FORMAT, LEVEL_REBUILD, LevelRebuildSettings, "export.level.rebuild:export_level_rebuilds",
           "export.level.rebuild:level_objects",
           "environment imported by this add-on or made in Blender (or placed objects of a level)",
           lambda m: f"{m.item.quads} quads, {m.item.rooms} rooms, {m.item.objects} objects", False),
    Export(MESH_FORMAT, MESH_EXPORT, MeshExportSettings, "export.meshes:export_meshes", "export.meshes:mesh_objects",
           "mesh object", lambda m: mesh_file_contents(m.item), False),
    Export(BODY_FORMAT, BODY_EXPORT, BodyExportSettings, "export.bodies.export:export_bodies",
           "blender.characters.armature_body:character_armatures", "character armature", lambda m: body_file_contents(m.item), False),
    Export(CUTSCENE_FORMAT, CUTSCENE_EXPORT, CutsceneExportSettings, "export.cutscene.export:export_cutscenes",
           "export.cutscene.take:cutscene_objects", "camera, character armature or placed object", _cutscene_file, False),
)
BY_FORMAT = {export.name: export for export in EXPORTS if export.name}
