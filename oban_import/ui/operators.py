"""File > Import and File > Export, drag and drop, and registration. The options come from
options.py; the work from each game's Blender layer, whose report is shown here."""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..blender import compat
from ..oni.export.bodies.export import export_bodies
from ..oni.export.trams.export import character_armatures, export_characters
from ..oni.blender.importer import import_files
from ..oni.export.level.patch import environment_objects, export_level_patches
from ..oni.export.level.rebuild import export_level_rebuilds, level_objects
from ..oni.export.oban import animated_objects, export_objects
from ..oni.export.meshes import export_meshes, mesh_objects
from ..oni.plan import EXTENSIONS
from ..outpost2.blender.sprites import import_sprites
from . import cli, panel
from .listing import body_file_contents, mesh_file_contents
from .options import (BODY_EXPORT, CHARACTER_EXPORT, LEVEL_PATCH, LEVEL_REBUILD, MESH_EXPORT, ONI_EXPORT, ONI_IMPORT,
                      ORIENTATION, SPRITE_IMPORT, BodyExportSettings, CharacterExportSettings, LevelPatchSettings,
                      LevelRebuildSettings, MeshExportSettings, OniExportSettings, OniImportSettings,
                      SpriteImportSettings, groups, parse_ranges)


def _property(option):
    common = dict(name=option.label, description=option.description, default=option.default)
    if option.items:
        return EnumProperty(items=list(option.items), **common)
    limits = {k: v for k, v in (("min", option.minimum), ("max", option.maximum)) if v is not None}
    if option.kind == "float":
        return FloatProperty(precision=option.precision, **limits, **common)
    if option.kind == "int":
        return IntProperty(**limits, **common)
    if option.kind == "bool":
        return BoolProperty(**common)
    return StringProperty(**common)


def with_options(options):
    """Class decorator: one operator property per option (the orientation pair is the
    orientation helper's), and a dialog that draws them in their groups."""
    def decorate(cls):
        for option in options:
            if option.name not in ORIENTATION:
                cls.__annotations__[option.name] = _property(option)
        grouped = groups(options)

        def draw(self, context):
            self.layout.use_property_split = True
            self.layout.use_property_decorate = False
            for group, names in grouped.items():
                body = compat.option_group(self.layout, f"{cls.__name__}_{group}", group)
                if body is not None:
                    for name in names:
                        body.prop(self, name)
        cls.draw = draw
        return cls
    return decorate


def with_progress(context, work):
    """work(progress) with the window manager's progress bar (progress: a share, 0 to 1)."""
    wm = context.window_manager
    wm.progress_begin(0, 100)
    try:
        return work(lambda fraction: wm.progress_update(100 * fraction))
    finally:
        wm.progress_end()


def show(operator, report, verb):
    """The report's notes, warnings and errors, then its summary: FINISHED when something
    was made, else CANCELLED."""
    for level, text in report.messages():
        operator.report({level}, text)
    if not report.made:
        return {"CANCELLED"}
    operator.report({"INFO"}, report.summary(verb))
    return {"FINISHED"}


class _ImportDialog(ImportHelper):
    """What both import dialogs share: undo, presets, drag and drop."""
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    def invoke(self, context, event):
        return compat.invoke_import(self, context, event)


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(ONI_IMPORT.options)
class ImportOBAN(bpy.types.Operator, _ImportDialog):
    """Import Oni object animations (OBAN) as animated empties or cameras, or onto the selected objects, and a
    level's placed objects with their meshes and textures"""
    bl_idname = ONI_IMPORT.idname
    bl_label = ONI_IMPORT.button

    filename_ext = ".oban"
    filter_glob: StringProperty(default=";".join(f"*{e}" for e in EXTENSIONS), options={"HIDDEN"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})

    def paths(self):
        directory = self.directory   # each look-up goes through RNA: once, not once a file
        names = [f.name for f in self.files]
        if names and directory:
            return [os.path.join(directory, name) for name in names if name]
        return [self.filepath]

    def execute(self, context):
        paths = self.paths()
        settings = OniImportSettings.from_options(self)
        return show(self, with_progress(context, lambda progress: import_files(context, paths, settings, progress)),
                    "Imported")


@with_options(SPRITE_IMPORT.options)
class ImportOP2Sprites(bpy.types.Operator, _ImportDialog):
    """Import Outpost 2 sprite animations (op2_art.prt with its op2_art.bmp) as layered,
    timed, textured planes, exact to the pixel"""
    bl_idname = SPRITE_IMPORT.idname
    bl_label = SPRITE_IMPORT.button

    filename_ext = ".prt"
    filter_glob: StringProperty(default="*.prt", options={"HIDDEN"})

    def execute(self, context):
        settings = SpriteImportSettings.from_options(self)
        try:
            parse_ranges(settings.animations)
        except ValueError as error:
            self.report({"ERROR"}, f"Animations: {error}")
            return {"CANCELLED"}
        return show(self, with_progress(context, lambda progress: import_sprites(context, self.filepath, settings,
                                                                                 progress)), "Imported")


class _ExportDialog:
    """What both export dialogs share: a folder to write into, presets, and the report with a
    line per file written."""
    bl_options = {"REGISTER", "PRESET"}

    directory: StringProperty(subtype="DIR_PATH")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def export(self, context, candidates, what, export, settings, describe, measured=True):
        """`describe(item)` of each file written, with its worst error where `measured`."""
        if not candidates:
            self.report({"ERROR"}, f"No {what} to export")
            return {"CANCELLED"}
        report = export(context, candidates, bpy.path.abspath(self.directory), settings)
        for m in report.made:
            self.report({"INFO"}, f"{m.path}: {describe(m.item)}" + (f", worst error {m.error:.2g}" if measured else "")
                                  + (f" ({m.note})" if m.note else ""))
        return show(self, report, "Exported")

    def candidates(self, context):
        return context.selected_objects if self.use_selection else context.scene.objects


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(ONI_EXPORT.options)
class ExportOBAN(bpy.types.Operator, _ExportDialog):
    """Export animated objects as Oni object animations (OBAN), one file each, with the
    fewest keys the engine turns back into every frame"""
    bl_idname = ONI_EXPORT.idname
    bl_label = ONI_EXPORT.button

    def execute(self, context):
        return self.export(context, animated_objects(self.candidates(context)), "animated object", export_objects,
                           OniExportSettings.from_options(self),
                           lambda oban: f"{oban.frames} frames, {len(oban.keys)} keys")


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(CHARACTER_EXPORT.options)
class ExportTRAM(bpy.types.Operator, _ExportDialog):
    """Export the actions of character armatures as Oni character animations (TRAM), one file
    each: an unchanged import as it was read, any other motion fitted as keys"""
    bl_idname = CHARACTER_EXPORT.idname
    bl_label = CHARACTER_EXPORT.button

    def execute(self, context):
        return self.export(context, character_armatures(self.candidates(context)), "character armature",
                           export_characters, CharacterExportSettings.from_options(self),
                           lambda tram: f"{tram.frames} frames, {sum(len(t.frames) for t in tram.tracks)} keys")


@with_options(LEVEL_PATCH.options)
class ExportLevelShading(bpy.types.Operator, _ExportDialog):
    """Write a copy of each imported level with its environment's shades, flags and textures as
    the scene has them, rewritten in place (every other byte as read); what cannot change in
    place is refused, naming the face"""
    bl_idname = LEVEL_PATCH.idname
    bl_label = LEVEL_PATCH.button

    def execute(self, context):
        return self.export(context, environment_objects(self.candidates(context)), "imported environment",
                           export_level_patches, LevelPatchSettings.from_options(self),
                           lambda environment: f"{len(environment.flags)} quads")


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(LEVEL_REBUILD.options)
class ExportLevel(bpy.types.Operator, _ExportDialog):
    """Write each imported level, or one made in Blender, as the files OniSplit builds it from
    (environment and rooms Colladas, master XML, object lists, classes, new textures), a
    folder per level, as the scene has it; what OniSplit cannot build is refused, naming it"""
    bl_idname = LEVEL_REBUILD.idname
    bl_label = LEVEL_REBUILD.button

    def execute(self, context):
        return self.export(context, level_objects(self.candidates(context)), "level environment",
                           export_level_rebuilds, LevelRebuildSettings.from_options(self),
                           lambda level: f"{level.quads} quads, {level.rooms} rooms, {level.objects} objects")


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(MESH_EXPORT.options)
class ExportMesh(bpy.types.Operator, _ExportDialog):
    """Write each mesh object's M3GM parts and the textures they show as Oni .oni files: an
    unchanged import as it was read, bit for bit, an edited or new one as Blender holds it;
    an edit an M3GM cannot carry refuses the object, naming it"""
    bl_idname = MESH_EXPORT.idname
    bl_label = MESH_EXPORT.button

    def execute(self, context):
        return self.export(context, mesh_objects(self.candidates(context)), "mesh object", export_meshes,
                           MeshExportSettings.from_options(self), mesh_file_contents, measured=False)


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(BODY_EXPORT.options)
class ExportBody(bpy.types.Operator, _ExportDialog):
    """Write each character armature's body as Oni .oni files (TRBS with its five levels of detail,
    TRMA, TXMPs, and the ONCC it was imported from, linking them): an unchanged import as it was
    read, bit for bit, edited parts and moved bones as Blender holds them"""
    bl_idname = BODY_EXPORT.idname
    bl_label = BODY_EXPORT.button

    def execute(self, context):
        return self.export(context, character_armatures(self.candidates(context)), "character armature",
                           export_bodies, BodyExportSettings.from_options(self), body_file_contents, measured=False)


def _menu_entry(operator, dialog):
    """A File menu's entry for an operator (`dialog` on it, for the tests to find)."""
    def draw(self, context):
        self.layout.operator(operator.bl_idname, text=dialog.menu)
    draw.dialog = dialog
    return draw


MENUS = (("TOPBAR_MT_file_import", _menu_entry(ImportOBAN, ONI_IMPORT)),
         ("TOPBAR_MT_file_import", _menu_entry(ImportOP2Sprites, SPRITE_IMPORT)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportOBAN, ONI_EXPORT)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportTRAM, CHARACTER_EXPORT)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportLevelShading, LEVEL_PATCH)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportLevel, LEVEL_REBUILD)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportMesh, MESH_EXPORT)),
         ("TOPBAR_MT_file_export", _menu_entry(ExportBody, BODY_EXPORT)))


def _file_handler(idname, label, operator, extensions):
    """Drag and drop of these files onto Blender runs `operator` (4.1+)."""
    return type(idname, (bpy.types.FileHandler,), {
        "bl_idname": idname, "bl_label": label, "bl_import_operator": operator.bl_idname,
        "bl_file_extensions": extensions, "poll_drop": classmethod(lambda cls, context: compat.poll_drop(context))})


classes = [ImportOBAN, ImportOP2Sprites, ExportOBAN, ExportTRAM, ExportLevelShading, ExportLevel, ExportMesh,
           ExportBody]
if compat.HAS_FILE_HANDLER:
    classes += [_file_handler("OBAN_FH_import", "Oni files", ImportOBAN, ";".join(EXTENSIONS)),
                _file_handler("OP2_FH_import", "Outpost 2 sprite animations", ImportOP2Sprites, ".prt")]
_cli_handle = None


def register():
    global _cli_handle
    for cls in classes:
        bpy.utils.register_class(cls)
    for menu, entry in MENUS:
        getattr(bpy.types, menu).append(entry)
    panel.register()
    _cli_handle = compat.register_cli_command("oban_import", cli.main)


def unregister():
    global _cli_handle
    compat.unregister_cli_command(_cli_handle)
    _cli_handle = None
    panel.unregister()
    for menu, entry in reversed(MENUS):
        getattr(bpy.types, menu).remove(entry)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
