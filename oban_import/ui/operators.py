"""File > Import and File > Export, drag and drop, and registration. The options come from
options.py; the work from each game's Blender layer, whose report is shown here."""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..blender import compat
from ..oni.blender.export import animated_objects, export_objects
from ..oni.blender.importer import import_files
from ..oni.io.reader import EXTENSIONS
from ..outpost2.blender.sprites import import_sprites
from . import cli, panel
from .options import (ONI_EXPORT, ONI_IMPORT, ORIENTATION, SPRITE_IMPORT, OniExportSettings, OniImportSettings,
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
    bl_idname = "import_anim.oban"
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
    bl_idname = "import_anim.op2_sprites"
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


@orientation_helper(axis_forward="-Z", axis_up="Y")
@with_options(ONI_EXPORT.options)
class ExportOBAN(bpy.types.Operator):
    """Export animated objects as Oni object animations (OBAN), one file each, with the
    fewest keys the engine turns back into every frame"""
    bl_idname = "export_anim.oban"
    bl_label = ONI_EXPORT.button
    bl_options = {"REGISTER", "PRESET"}

    directory: StringProperty(subtype="DIR_PATH")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        candidates = context.selected_objects if self.use_selection else context.scene.objects
        objects = animated_objects(candidates)
        if not objects:
            self.report({"ERROR"}, "No animated object to export")
            return {"CANCELLED"}
        report = export_objects(context, objects, bpy.path.abspath(self.directory),
                                OniExportSettings.from_options(self))
        for m in report.made:
            self.report({"INFO"}, f"{m.path}: {m.item.frames} frames, {len(m.item.keys)} keys, worst error "
                                  f"{m.error:.2g}" + (f" ({m.note})" if m.note else ""))
        return show(self, report, "Exported")


def menu_import(self, context):
    self.layout.operator(ImportOBAN.bl_idname, text=ONI_IMPORT.menu)


def menu_import_sprites(self, context):
    self.layout.operator(ImportOP2Sprites.bl_idname, text=SPRITE_IMPORT.menu)


def menu_export(self, context):
    self.layout.operator(ExportOBAN.bl_idname, text=ONI_EXPORT.menu)


classes = [ImportOBAN, ImportOP2Sprites, ExportOBAN]
if compat.HAS_FILE_HANDLER:
    class OBAN_FH_import(bpy.types.FileHandler):
        bl_idname = "OBAN_FH_import"
        bl_label = "Oni files"
        bl_import_operator = ImportOBAN.bl_idname
        bl_file_extensions = ";".join(EXTENSIONS)

        @classmethod
        def poll_drop(cls, context):
            return compat.poll_drop(context)

    class OP2_FH_import(bpy.types.FileHandler):
        bl_idname = "OP2_FH_import"
        bl_label = "Outpost 2 sprite animations"
        bl_import_operator = ImportOP2Sprites.bl_idname
        bl_file_extensions = ".prt"

        @classmethod
        def poll_drop(cls, context):
            return compat.poll_drop(context)

    classes += [OBAN_FH_import, OP2_FH_import]

_cli_handle = None


def register():
    global _cli_handle
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_import.append(menu_import_sprites)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)
    panel.register()
    _cli_handle = compat.register_cli_command("oban_import", cli.main)


def unregister():
    global _cli_handle
    compat.unregister_cli_command(_cli_handle)
    _cli_handle = None
    panel.unregister()
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import_sprites)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
