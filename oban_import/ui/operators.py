"""File > Import and File > Export, drag and drop, and registration. The options come from
options.py; the work from each game's Blender layer, whose report is shown here."""

import functools
import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..blender import compat
from ..core.errors import ObanError
from ..oni.blender.cutscene.build import import_cutscene
from ..oni.blender.importer import import_files
from ..oni.cutscene import functions, scripts_folder
from ..oni.blender.shared.legacy import upgrade_loaded
from ..oni.plan import EXTENSIONS
from ..outpost2.blender.sprites import import_sprites
from . import cli, panel
from .exports import EXPORTS
from .options import (CUTSCENE, ONI_IMPORT, ORIENTATION, SPRITE_IMPORT, OniImportSettings, SpriteImportSettings, groups,
                      parse_ranges)


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
    return StringProperty(subtype=option.subtype or "NONE", **common)


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
        if settings.cutscene:
            if len(paths) != 1:
                self.report({"ERROR"}, f"a cutscene plays in one level: {len(paths)} files are selected")
                return {"CANCELLED"}
            return show(self, with_progress(context, lambda progress: import_cutscene(
                context, paths[0], settings.cutscene, settings, settings.scripts or None,
                {"": settings.character_class}, progress)),
                "Imported")
        return show(self, with_progress(context, lambda progress: import_files(context, paths, settings, progress)),
                    "Imported")


def _functions_found(operator, context, edit_text):
    """The Function field's choices: the functions of Scripts, else of the selected level's."""
    level = _selected_file(operator, context)
    try:
        folder = operator.scripts or (scripts_folder(level) if os.path.isfile(level) else "")
        found = _function_names(folder) if folder else ()
    except (ObanError, OSError):
        return []
    return [name for name in found if edit_text.lower() in name.lower()]


def _function_names(folder) -> tuple:
    """The functions of the scripts in `folder` (or one .bsl), read again only when one of them
    changes (the field asks on every keystroke)."""
    if os.path.isdir(folder):
        stamp = tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(folder)
                             if e.name.lower().endswith(".bsl")))
    else:
        stamp = (os.stat(folder).st_mtime_ns, os.stat(folder).st_size)
    return _names_read(folder, stamp)


@functools.lru_cache(maxsize=8)
def _names_read(folder, stamp) -> tuple:
    return tuple(f.name for f in functions(folder))


def _selected_file(operator, context):
    """The file selected in the open file browser, else the operator's."""
    params = getattr(getattr(context, "space_data", None), "params", None)
    if params is not None and getattr(params, "filename", ""):
        directory = params.directory
        return os.path.join(directory.decode() if isinstance(directory, bytes) else directory, params.filename)
    return operator.filepath


ImportOBAN.__annotations__["cutscene"] = StringProperty(
    name=CUTSCENE.label, description=CUTSCENE.description, default=CUTSCENE.default, search=_functions_found)


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
    """What every export dialog shares: a folder to write into, presets, and the report with a
    line per file written."""
    bl_options = {"REGISTER", "PRESET"}

    directory: StringProperty(subtype="DIR_PATH")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        export = self.export
        candidates = context.selected_objects if self.use_selection else context.scene.objects
        chosen = export.function("chooser")(candidates)
        if not chosen:
            self.report({"ERROR"}, f"No {export.what} to export")
            return {"CANCELLED"}
        report = export.run(context, chosen, bpy.path.abspath(self.directory), export.settings.from_options(self))
        for m in report.made:
            self.report({"INFO"}, f"{m.path}: {export.describe(m)}"
                                  + (f", worst error {m.error:.2g}" if export.measured else "")
                                  + (f" ({m.note})" if m.note else ""))
        return show(self, report, "Exported")


def _export_operator(export):
    """The operator of an export (EXPORTS): its dialog's id, button, options and tooltip."""
    dialog = export.dialog
    cls = type("Export" + dialog.idname.split(".")[1].title().replace("_", ""), (bpy.types.Operator, _ExportDialog),
               {"__doc__": dialog.tooltip, "bl_idname": dialog.idname, "bl_label": dialog.button, "export": export,
                "__annotations__": {}})
    if {option.name for option in dialog.options} >= set(ORIENTATION):
        cls = orientation_helper(axis_forward="-Z", axis_up="Y")(cls)
    return with_options(dialog.options)(cls)


EXPORT_OPERATORS = [_export_operator(export) for export in EXPORTS]


def _menu_entry(operator, dialog):
    """A File menu's entry for an operator (`dialog` on it, for the tests to find)."""
    def draw(self, context):
        self.layout.operator(operator.bl_idname, text=dialog.menu)
    draw.dialog = dialog
    return draw


MENUS = (("TOPBAR_MT_file_import", _menu_entry(ImportOBAN, ONI_IMPORT)),
         ("TOPBAR_MT_file_import", _menu_entry(ImportOP2Sprites, SPRITE_IMPORT)),
         *(("TOPBAR_MT_file_export", _menu_entry(operator, operator.export.dialog)) for operator in EXPORT_OPERATORS))


def _file_handler(idname, label, operator, extensions):
    """Drag and drop of these files onto Blender runs `operator` (4.1+)."""
    return type(idname, (bpy.types.FileHandler,), {
        "bl_idname": idname, "bl_label": label, "bl_import_operator": operator.bl_idname,
        "bl_file_extensions": extensions, "poll_drop": classmethod(lambda cls, context: compat.poll_drop(context))})


classes = [ImportOBAN, ImportOP2Sprites, *EXPORT_OPERATORS]
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
    bpy.app.handlers.load_post.append(upgrade_loaded)
    _cli_handle = compat.register_cli_command("oban_import", cli.main)


def unregister():
    global _cli_handle
    compat.unregister_cli_command(_cli_handle)
    _cli_handle = None
    if upgrade_loaded in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(upgrade_loaded)
    panel.unregister()
    for menu, entry in reversed(MENUS):
        getattr(bpy.types, menu).remove(entry)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
