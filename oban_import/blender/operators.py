"""File > Import and File > Export > Oni Object Animation, drag and drop, and registration."""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..axes import EULER_AXES
from ..reader import EXTENSIONS
from . import cli, compat, panel
from .export import ExportSettings, animated_objects, export_objects
from .scene import Settings, axes_matrix, import_files

ROTATION_MODES = [("QUATERNION", "Quaternion", "Quaternion rotation, continuous in sign")] + [
    (order, f"Euler {order}", f"Euler angles in {order} order, continuous between frames")
    for order in EULER_AXES]

TARGETS = [
    ("EMPTY", "New Empty", "Each animation makes a new Empty"),
    ("CAMERA", "New Camera", "Each animation makes a new Camera that looks where the Oni camera looked"),
    ("SELECTED", "Selected Objects", "Animate the selected objects (matched by name when a file holds several "
                                     "animations); Localized animations play relative to where the object stands"),
]
PLAYBACKS = [
    ("FRAMES", "Frames", "Keys for frames 0 .. frames - 1, then the last frame holds"),
    ("ENGINE", "As the Engine Plays", "Loop and PingPong animations repeat forever as in the game"),
]


@orientation_helper(axis_forward="-Z", axis_up="Y")
class ImportOBAN(bpy.types.Operator, ImportHelper):
    """Import Oni object animations (OBAN) as animated empties or cameras, or onto the selected objects"""
    bl_idname = "import_anim.oban"
    bl_label = "Import OBAN"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".oban"
    filter_glob: StringProperty(default=";".join(f"*{e}" for e in EXTENSIONS), options={"HIDDEN"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})

    global_scale: FloatProperty(name="Scale", description="Blender units per Oni unit (0.1 gives metres)",
                                default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0)
    frame_start: IntProperty(name="Start Frame", description="Scene frame of the animation's frame 0",
                             default=1)
    rotation_mode: EnumProperty(name="Rotation", items=ROTATION_MODES, default="QUATERNION")
    update_scene_fps: BoolProperty(name="Set Scene to 60 fps", default=True,
                                   description="Oni plays one frame per tick, 60 per second")
    update_scene_duration: BoolProperty(name="Extend Scene Frame Range", default=True,
                                        description="Extend (never shorten) the scene range to the animations")
    target: EnumProperty(name="Target", items=TARGETS, default="EMPTY")
    playback: EnumProperty(name="Playback", items=PLAYBACKS, default="FRAMES")
    use_random_start: BoolProperty(name="Random Start", default=False,
                                   description="With Engine playback, RandomStart animations start at a seeded frame")
    random_seed: IntProperty(name="Seed", default=0, min=0, description="Seed of the random start frames")
    name_filter: StringProperty(name="Name Filter", default="",
                                description="Only instances whose name matches this pattern, e.g. *door* (empty: all)")

    def invoke(self, context, event):
        return compat.invoke_import(self, context, event)

    def paths(self):
        if self.files and self.directory:
            return [os.path.join(self.directory, f.name) for f in self.files if f.name]
        return [self.filepath]

    def settings(self):
        return Settings(
            global_scale=self.global_scale,
            axes=axes_matrix(self.axis_forward, self.axis_up),
            frame_start=self.frame_start,
            rotation_mode=self.rotation_mode,
            update_scene_fps=self.update_scene_fps,
            update_scene_duration=self.update_scene_duration,
            name_glob=self.name_filter,
            target=self.target,
            playback=self.playback,
            random_start_seed=self.random_seed if self.use_random_start else -1,
        )

    def execute(self, context):
        paths = self.paths()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        try:
            result = import_files(context, paths, self.settings(),
                                  progress=lambda fraction: wm.progress_update(100 * fraction))
        finally:
            wm.progress_end()
        for message in result.warnings:
            self.report({"WARNING"}, message)
        for message in result.errors:
            self.report({"ERROR"}, message)
        if not result.objects:
            return {"CANCELLED"}
        self.report({"INFO"}, f"Imported {len(result.objects)} animation(s) from "
                              f"{len(paths) - len(result.errors)} of {len(paths)} file(s)")
        return {"FINISHED"}


FORMATS = [("oni", "OniSplit .oni", "OBANName.oni, as OniSplit writes it (VR32)"),
           ("xml", "OniSplit XML", "OBANName.xml"),
           ("raw", "Raw instance", "NNNNN-Name.OBAN")]


@orientation_helper(axis_forward="-Z", axis_up="Y")
class ExportOBAN(bpy.types.Operator):
    """Export animated objects as Oni object animations (OBAN), one file each, with the
    fewest keys the engine turns back into every frame"""
    bl_idname = "export_anim.oban"
    bl_label = "Export OBAN"
    bl_options = {"REGISTER", "PRESET"}

    directory: StringProperty(subtype="DIR_PATH")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})
    file_format: EnumProperty(name="Format", items=FORMATS, default="oni")
    use_selection: BoolProperty(name="Selected Only", default=True,
                                description="Export the selected objects (else every animated object)")
    tolerance: FloatProperty(name="Tolerance", default=1e-4, min=1e-9, max=0.1, precision=6,
                             description="Largest relative error allowed on any frame's matrix")
    global_scale: FloatProperty(name="Scale", description="Blender units per Oni unit, as imported",
                                default=1.0, min=1e-6, max=1e6)

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        candidates = context.selected_objects if self.use_selection else context.scene.objects
        objects = animated_objects(candidates)
        if not objects:
            self.report({"ERROR"}, "No animated object to export")
            return {"CANCELLED"}
        settings = ExportSettings(global_scale=self.global_scale, axes=axes_matrix(self.axis_forward, self.axis_up),
                                  format=self.file_format, tolerance=self.tolerance)
        written, errors = export_objects(context, objects, bpy.path.abspath(self.directory), settings)
        for w in written:
            self.report({"INFO"}, f"{w.path}: {w.frames} frames, {w.keys} keys, worst error {w.error:.2g}"
                                  + (" (unchanged import)" if w.unchanged else ""))
            for message in w.warnings:
                self.report({"WARNING"}, f"{w.path}: '{w.name}': {message}")
        for message in errors:
            self.report({"ERROR"}, message)
        return {"FINISHED"} if written else {"CANCELLED"}


def menu_import(self, context):
    self.layout.operator(ImportOBAN.bl_idname, text="Oni Object Animation (.oban, .oni, .dat, .xml)")


def menu_export(self, context):
    self.layout.operator(ExportOBAN.bl_idname, text="Oni Object Animation (.oni, .xml, .oban)")


classes = [ImportOBAN, ExportOBAN]
if compat.HAS_FILE_HANDLER:
    class OBAN_FH_import(bpy.types.FileHandler):
        bl_idname = "OBAN_FH_import"
        bl_label = "Oni object animation"
        bl_import_operator = ImportOBAN.bl_idname
        bl_file_extensions = ";".join(EXTENSIONS)

        @classmethod
        def poll_drop(cls, context):
            return compat.poll_drop(context)

    classes.append(OBAN_FH_import)

_cli_handle = None


def register():
    global _cli_handle
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)
    panel.register()
    _cli_handle = compat.register_cli_command("oban_import", cli.main)


def unregister():
    global _cli_handle
    compat.unregister_cli_command(_cli_handle)
    _cli_handle = None
    panel.unregister()
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
