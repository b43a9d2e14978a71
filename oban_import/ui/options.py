"""The import and export options, in one table each: every option's name, label, default,
command line flag and help stand here once. The operators' properties, the dialogs'
groups, the command line's flags and the settings objects the work reads all come from
these tables (no bpy: the command line's listing runs without Blender)."""

import functools
from dataclasses import dataclass, fields, make_dataclass, replace

from ..oni.engine.fit_keys import TOLERANCE
from ..oni.engine.to_blender import EULER_AXES, axes_matrix

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")
ORIENTATION = ("axis_forward", "axis_up")   # made by Blender's orientation helper in the dialogs


@dataclass(frozen=True)
class Option:
    name: str                 # operator property, command line dest, Settings field
    label: str
    description: str
    default: object
    group: str                # the dialog's group
    flag: str = ""            # command line flag ("" for none); a bool's --no-... flag turns it off, any
                              # other bool flag comes with its --no- twin
    off: str = ""             # a --no-... flag's help: what it leaves as it is
    items: tuple = ()         # enum: (id, label, description)
    cli_items: tuple = ()     # enum ids the command line offers (default: all)
    minimum: float | None = None
    maximum: float | None = None
    precision: int = 3        # digits a float shows
    cli_lower: bool = False   # the command line spells the enum ids in lower case with hyphens
    subtype: str = ""         # a string's kind in the dialog: DIR_PATH for a folder

    @property
    def kind(self) -> str:
        return "enum" if self.items else type(self.default).__name__


ROTATION_MODES = (("QUATERNION", "Quaternion", "Quaternion rotation, continuous in sign"),) + tuple(
    (order, f"Euler {order}", f"Euler angles in {order} order, continuous between frames") for order in EULER_AXES)
TARGETS = (("EMPTY", "New Empty", "Each animation makes a new Empty"),
           ("CAMERA", "New Camera", "Each animation makes a new Camera that looks where the Oni camera looked"),
           ("SELECTED", "Selected Objects", "Animate the selected objects (matched by name when a file holds "
            "several animations); Localized animations play relative to where the object stands"))
PLAYBACKS = (
    ("FRAMES", "Frames", "Keys for frames 0 .. frames - 1, then the last frame holds"),
    ("ENGINE", "As the Engine Plays", "Loop and PingPong animations repeat forever as in the game"),
)
KEYS = (
    ("EVERY_FRAME", "Every Frame", "A key on every frame, as the engine computes it"),
    ("FILE", "File Keys", "The file's own keys, LINEAR: exact at every frame too, fewer and editable (where they "
                          "cannot be exact, the animation is baked and a note says why)"),
)
CHARACTER_ANIMATIONS = (
    ("ALL", "All", "Every animation of the character's collection, one action each"),
    ("MATCHING", "Matching the Filter", "Those whose name matches the Name Filter"),
    ("NONE", "None", "The character alone"),
)
LEVEL_PATCH_FORMAT = "level-patch"   # the command line's export of levels' shading in place
LEVEL_REBUILD_FORMAT = "level"       # ... and of levels as OniSplit's rebuild source
MESH_FORMAT = "mesh"                 # ... and of mesh objects as M3GM and TXMP files
BODY_FORMAT = "body"                 # ... and of character armatures as their body's files
CUTSCENE_FORMAT = "cutscene"         # ... and of the scene's timeline as a cutscene's files
EXPORT_FORMATS = (
    ("oni", "OniSplit .oni", "OBANName.oni, as OniSplit writes it (VR32)"),
    ("xml", "OniSplit XML", "OBANName.xml"),
    ("raw", "Raw instance", "NNNNN-Name.OBAN"),
)
ONI_FPS = 60       # the engine's ticks a second: one frame each (docs/engine.md 3)
SPRITE_FPS = 100   # Outpost 2: a frame a game tick, about 100 a second at normal speed (docs/outpost2.md 3)
SCALE = Option("global_scale", "Scale", "Blender units per Oni unit: 0.1 gives metres (an Oni unit is 10 cm); 1.0 "
                                        "lines up with OniSplit's OBJ exports", 0.1, "Transform",
               flag="--scale", minimum=1e-6, maximum=1e6)
EXPORT_SCALE = Option("global_scale", "Scale", "Blender units per Oni unit, where an object does not say (one "
                                            "imported by this add-on keeps its own)", 0.1, "Transform",
                      flag="--scale", minimum=1e-6, maximum=1e6)
# The orientation pair: drawn by Blender's orientation helper in the dialogs.
FORWARD = Option("axis_forward", "Forward", "Oni axis that points forward", "-Z", "Transform", flag="--forward",
                 items=tuple((a, a, "") for a in AXES))
UP = Option("axis_up", "Up", "Oni axis that points up", "Y", "Transform", flag="--up",
            items=tuple((a, a, "") for a in AXES))

CUTSCENE = Option("cutscene", "Function", "A function of the level's scripts played on the scene's timeline as "
                  "the engine schedules it: camera, characters and objects in step (empty: none)", "", "Cutscene",
                  flag="--cutscene")
IMPORT_OPTIONS = (
    SCALE, FORWARD, UP,
    Option("frame_start", "Start Frame", "Scene frame of the animation's frame 0", 1, "Animation",
           flag="--frame-start"),
    Option("rotation_mode", "Rotation", "How rotations are keyed", "QUATERNION", "Animation",
           flag="--rotation-mode", items=ROTATION_MODES),
    Option("playback", "Playback", "Which frames are keyed", "FRAMES", "Animation", flag="--playback",
           items=PLAYBACKS),
    Option("keys", "Keys", "Which keys are written", "EVERY_FRAME", "Keys", flag="--keys", items=KEYS,
           cli_lower=True),
    Option("use_random_start", "Random Start", "With Engine playback, RandomStart animations start at a seeded frame",
           False, "Animation", flag="--random-start"),
    Option("random_seed", "Seed", "Seed of the random start frames", 0, "Animation", flag="--seed", minimum=0),
    Option("update_scene_fps", f"Scene at {ONI_FPS} fps", f"Oni plays one frame per tick, {ONI_FPS} per second",
           True, "Scene", flag="--no-scene-fps", off="leave the scene's frame rate as it is"),
    Option("update_scene_duration", "Extend Range",
           "Extend (never shorten) the scene's frame range to the animations", True, "Scene", flag="--no-scene-duration",
           off="leave the scene's frame range as it is"),
    Option("target", "Target", "What each animation moves", "EMPTY", "Target", flag="--target", items=TARGETS,
           cli_items=("EMPTY", "CAMERA")),
    Option("name_filter", "Name Filter", "Only instances whose name matches this pattern, e.g. *door* (empty: all)",
           "", "Target", flag="--filter"),
    Option("objects", "Placed Objects", "A level's (or OBOA file's) objects with their meshes and textures, moved by "
                                        "their OBANs; loose M3GM and TXMP files as a mesh and an image", True,
           "Objects", flag="--objects"),
    Option("side_by_side", "Side by Side", "Characters and loose meshes of one import apart along X (else each "
                                           "stands at the origin)", True, "Objects", flag="--no-side-by-side",
           off="leave characters and loose meshes at the origin"),
    Option("environment", "Environment", "A level's walls, floors and windows (AKEV), textured and shaded as the "
                                          "game draws them; the quads it does not draw in hidden collections", True,
           "Level", flag="--no-environment", off="leave a level's environment out"),
    Option("object_lists", "Object Lists", "Every object of a level's lists (BINACJBO) as an Empty, a collection "
                                           "per type; a door's Empty holds its leaves", True, "Level",
           flag="--no-object-lists", off="leave a level's object lists out"),
    Option("character_animations", "Animations", "A character's animation collection (TRAC, with its parents')",
           "ALL", "Characters", flag="--character-animations", items=CHARACTER_ANIMATIONS, cli_lower=True),
    CUTSCENE,
    Option("scripts", "Scripts", "The folder of the level's scripts (.bsl) (empty: the level's own folder, else IGMD/<its "
                                  "name> beside it, as the game keeps them)", "",
           "Cutscene", flag="--scripts", subtype="DIR_PATH"),
    Option("character_class", "Character Class", "The class (ONCC name, e.g. konoko_generic) of a character the "
                                                 "level gives none (empty: an Empty stands for it, said)", "",
           "Cutscene", flag="--character-class"),
)
REPLACE_SOURCES = Option("replace_sources", "Replace Sources", "Write over (or into a folder holding) the files "
                         "what is exported was read from (off: such a file is refused, naming it)", False, "File",
                         flag="--replace-sources")
TOLERANCE_OPTION = Option("tolerance", "Tolerance", "Largest relative error allowed on any frame's matrix", TOLERANCE,
                          "Keys", flag="--tolerance", minimum=1e-9, maximum=0.1, precision=6)
EXPORT_OPTIONS = (
    Option("file_format", "Format", "The kind of file written", "oni", "File", flag="--format", items=EXPORT_FORMATS,
           cli_items=(*(item[0] for item in EXPORT_FORMATS), LEVEL_PATCH_FORMAT, LEVEL_REBUILD_FORMAT, MESH_FORMAT,
                      BODY_FORMAT, CUTSCENE_FORMAT)),
    Option("use_selection", "Selected Only", "Export the selected objects (else every animated object)", True,
           "File"),
    REPLACE_SOURCES,
    TOLERANCE_OPTION,
    EXPORT_SCALE,
    FORWARD, UP,
)

TRAM_FORMATS = (
    ("oni", "OniSplit .oni", "TRAMName.oni, as OniSplit writes it (VR32)"),
    ("xml", "OniSplit XML", "TRAMName.xml, which OniSplit -create turns into the game's file"),
)
CHARACTER_ACTIONS = (
    ("ALL", "All", "Each armature's own actions: those its import made, assigned to it or in its NLA tracks"),
    ("ASSIGNED", "Assigned", "Each armature's assigned action"),
    ("SHOWN", "As Shown", "Each armature's motion as the scene shows it (a control rig's constraints and drivers "
                          "included) over the scene's frame range, named by the armature's tram_name"),
)
CHARACTER_EXPORT_OPTIONS = (
    Option("character_format", "Format", "The kind of file written", "oni", "File", items=TRAM_FORMATS),
    Option("use_selection", "Selected Only", "Export the selected armatures (else every character armature)", True,
           "File"),
    Option("character_actions", "Actions", "Which actions of each armature", "ALL", "File", flag="--actions",
           items=CHARACTER_ACTIONS, cli_lower=True),
    REPLACE_SOURCES,
    Option("character_tolerance", "Tolerance", "Largest relative error allowed on any part's matrix at any frame",
           1e-3, "Keys", flag="--character-tolerance", minimum=1e-6, maximum=0.1, precision=6),
    Option("global_scale", "Scale", "Blender units per Oni unit, where an armature does not say (one imported by "
                                    "this add-on keeps its own)", 0.1, "Transform", flag="--scale",
           minimum=1e-6, maximum=1e6),
    FORWARD, UP,
)


DESPITE_EDITS = Option("despite_edits", "Despite Edits", "Write a level even where the scene holds an edit "
                       "this export cannot carry, each named in the report (off: such a level is refused)", False,
                       "File", flag="--despite-edits")
LEVEL_PATCH_OPTIONS = (
    Option("use_selection", "Selected Only", "Write the levels of the selected environment objects (else of every "
                                             "imported environment)", True, "File"),
    DESPITE_EDITS,
    REPLACE_SOURCES,
)
LEVEL_REBUILD_OPTIONS = (
    Option("use_selection", "Selected Only", "Write the levels of the selected environment objects (else of every "
                                             "environment, imported or made in Blender)", True, "File"),
    DESPITE_EDITS,
    REPLACE_SOURCES,
    replace(TOLERANCE_OPTION, description="Largest relative error allowed on any frame's matrix of a door leaf's or "
                                          "placed object's edited motion"),
    EXPORT_SCALE,
    FORWARD, UP,
)


def _files_export(selected: str, despite: str, scale: str) -> tuple:
    """The options of an export of files that carries edits: what Selected Only writes, what
    Despite Edits writes, what Scale is for."""
    return (Option("use_selection", "Selected Only", selected, True, "File"),
            replace(DESPITE_EDITS, description=despite), REPLACE_SOURCES,
            replace(EXPORT_SCALE, description=f"Blender units per Oni unit, {scale}"), FORWARD, UP)


MESH_EXPORT_OPTIONS = _files_export(
    "Write the selected mesh objects (else every mesh object but a level's environment and rooms)",
    "Write an object even where it holds an edit an M3GM cannot carry, each named in the report (off: such an object "
    "is refused)",
    "where a mesh does not say (one imported by this add-on keeps its own)")
BODY_EXPORT_OPTIONS = _files_export(
    "Write the bodies of the selected armatures (else of every character armature)",
    "Write a body even where a part's mesh object holds an edit an M3GM cannot carry, each named in the report (off: "
    "such a body is refused)",
    "where an armature does not say (one imported by this add-on keeps its own)")
CUTSCENE_EXPORT_OPTIONS = (
    Option("cutscene", "Function", "The name of the script function the cutscene is written as (its NAME.bsl, and "
                                   "the start of its OBANs' names)", "cutscene", "File", flag="--cutscene"),
    Option("use_selection", "Selected Only", "Write the cameras, character armatures and placed objects selected "
                                             "(else every one the scene holds)", False, "File"),
    REPLACE_SOURCES,
    TOLERANCE_OPTION,
    EXPORT_SCALE,
    FORWARD, UP,
)
# The command line's --despite-edits serves every export that has it.
CLI_DESPITE_EDITS = replace(DESPITE_EDITS, description="Write a level (--format level, level-patch), a mesh "
                            "object (--format mesh) or a body (--format body) even where it holds an edit the export "
                            "cannot carry, each named in the report (off: it is refused)")


SPRITE_OPTIONS = (
    Option("bmp_path", "Bitmap File", "op2_art.bmp (empty: the one beside the .prt, any case)", "", "Files",
           flag="--bmp"),
    Option("animations", "Animations", "Which animations, e.g. 0-40,500 (empty: all)", "", "Files",
           flag="--animations"),
    Option("global_scale", "Scale", "Blender units per pixel (1/32: a 32-pixel tile is one unit)", 1 / 32,
           "Transform", flag="--scale", minimum=1e-6, maximum=1e6, precision=5),
    Option("side_by_side", "Side by Side", "Lay the animations out side by side, apart (else each stands at the "
                                           "origin)", True, "Transform", flag="--no-side-by-side",
           off="stack the animations at the origin"),
    Option("frame_start", "Start Frame", "Scene frame of each animation's frame 0", 1, "Animation",
           flag="--frame-start"),
    Option("update_scene_fps", f"Scene at {SPRITE_FPS} fps",
           f"Outpost 2 shows a frame a game tick, about {SPRITE_FPS} a second", True, "Scene", flag="--no-scene-fps",
           off="leave the scene's frame rate as it is"),
    Option("update_scene_duration", "Extend Range",
           "Extend (never shorten) the scene's frame range to the animations", True, "Scene", flag="--no-scene-duration",
           off="leave the scene's frame range as it is"),
    Option("update_view_transform", "Standard View",
           "Set the scene's view transform to Standard, so rendered colours are the palette's", True, "Scene",
           flag="--no-view-transform", off="leave the scene's view transform as it is"),
)


@dataclass(frozen=True)
class Dialog:
    """An operator: its id, its File menu entry, its dialog's button, the options it shows, and
    its tooltip (an import's is its class's docstring)."""
    idname: str
    menu: str
    button: str
    options: tuple
    tooltip: str = ""


ONI_IMPORT = Dialog("import_anim.oban", "Oni Objects, Characters and Animations (.oni, .dat, .oban, .xml)",
                    "Import Oni", IMPORT_OPTIONS)
SPRITE_IMPORT = Dialog("import_anim.op2_sprites", "Outpost 2 Sprite Animations (.prt)", "Import Outpost 2 Sprites",
                       SPRITE_OPTIONS)
ONI_EXPORT = Dialog("export_anim.oban", "Oni Object Animation (.oni, .xml, .oban)", "Export OBAN", EXPORT_OPTIONS,
                    "Export animated objects as Oni object animations (OBAN), one file each, with the fewest keys "
                    "the engine turns back into every frame")
CHARACTER_EXPORT = Dialog("export_anim.tram", "Oni Character Animation (.oni, .xml)", "Export TRAM",
                          CHARACTER_EXPORT_OPTIONS, "Export the actions of character armatures as Oni character "
                          "animations (TRAM), one file each: an unchanged import as it was read, any other motion "
                          "fitted as keys")
LEVEL_PATCH = Dialog("export_anim.oni_level_shading", "Oni Level Shading (.dat, .oni)", "Export Level Shading",
                     LEVEL_PATCH_OPTIONS, "Write a copy of each imported level with its environment's shades, "
                     "flags and textures as the scene has them, rewritten in place (every other byte as read); what "
                     "cannot change in place is refused, naming the face")
LEVEL_REBUILD = Dialog("export_anim.oni_level", "Oni Level for OniSplit (.dae, .xml)", "Export Level",
                       LEVEL_REBUILD_OPTIONS, "Write each imported level, or one made in Blender, as the files "
                       "OniSplit builds it from (environment and rooms Colladas, master XML, object lists, classes, "
                       "new textures), a folder per level, as the scene has it; what OniSplit cannot build is "
                       "refused, naming it")
MESH_EXPORT = Dialog("export_anim.oni_mesh", "Oni Mesh (.oni)", "Export Mesh", MESH_EXPORT_OPTIONS,
                     "Write each mesh object's M3GM parts and the textures they show as Oni .oni files: an "
                     "unchanged import as it was read, bit for bit, an edited or new one as Blender holds it; an "
                     "edit an M3GM cannot carry refuses the object, naming it")
BODY_EXPORT = Dialog("export_anim.oni_body", "Oni Character Body (.oni)", "Export Body", BODY_EXPORT_OPTIONS,
                     "Write each character armature's body as Oni .oni files (TRBS with its five levels of "
                     "detail, TRMA, TXMPs, and the ONCC it was imported from, linking them): an unchanged import as "
                     "it was read, bit for bit, edited parts and moved bones as Blender holds them")
CUTSCENE_EXPORT = Dialog("export_anim.oni_cutscene", "Oni Cutscene (.bsl, .oni)", "Export Cutscene",
                         CUTSCENE_EXPORT_OPTIONS, "Write the scene's timeline as a cutscene: a camera OBAN a shot, "
                         "each character's base as a box OBAN and its NLA strips' TRAMs, each moving placed object's "
                         "OBAN, and the script function that plays them in step")
DIALOGS = (ONI_IMPORT, SPRITE_IMPORT, ONI_EXPORT, CHARACTER_EXPORT, LEVEL_PATCH, LEVEL_REBUILD, MESH_EXPORT,
           BODY_EXPORT, CUTSCENE_EXPORT)


def parse_ranges(text: str) -> list[int] | None:
    """'0-40,500' -> [0, 1, ..., 40, 500], in that order, each once; '' -> None (all).
    ValueError for anything else."""
    if not text.strip():
        return None
    chosen = {}
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"{part.strip()!r} is not an index or a range like 0-40")
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            raise ValueError(f"{part.strip()!r}: the range ends before it begins")
        if high - low > 1 << 20:
            raise ValueError(f"{part.strip()!r}: more than {1 << 20} animations")
        chosen.update(dict.fromkeys(range(low, high + 1)))
    return list(chosen)


def groups(options) -> dict:
    """{group: [option names]} in the order the options come."""
    grouped = {}
    for option in options:
        grouped.setdefault(option.group, []).append(option.name)
    return grouped


def _settings(name, options, fps=None, doc=""):
    """A dataclass with one field per option, its name and its default, nothing else (`fps`:
    the scene rate its import sets); with the orientation pair, `axes` too."""
    oriented = {o.name for o in options} >= set(ORIENTATION)
    cls = make_dataclass(name, [(o.name, type(o.default), o.default) for o in options],
                         bases=(_Oriented,) if oriented else (_FromOptions,))
    cls.__doc__, cls.fps = doc, fps
    return cls


class _FromOptions:
    @classmethod
    def from_options(cls, source):
        """From anything with the options' names as attributes (an operator, parsed arguments)."""
        return cls(**{f.name: getattr(source, f.name) for f in fields(cls)})


class _Oriented(_FromOptions):
    @functools.cached_property
    def axes(self):
        """The Oni -> Blender change of basis of the orientation pair (worked out once: it is
        read for every object an import makes)."""
        return axes_matrix(self.axis_forward, self.axis_up)


OniImportSettings = _settings("OniImportSettings", IMPORT_OPTIONS, ONI_FPS, "What an Oni import does.")
OniExportSettings = _settings("OniExportSettings", EXPORT_OPTIONS, doc="What an Oni export does.")
CharacterExportSettings = _settings("CharacterExportSettings", CHARACTER_EXPORT_OPTIONS,
                                    doc="What an export of character animations does.")
LevelPatchSettings = _settings("LevelPatchSettings", LEVEL_PATCH_OPTIONS, doc="What an export of levels' shading does.")
LevelRebuildSettings = _settings("LevelRebuildSettings", LEVEL_REBUILD_OPTIONS,
                                 doc="What an export of levels for OniSplit does.")
MeshExportSettings = _settings("MeshExportSettings", MESH_EXPORT_OPTIONS, doc="What an export of mesh objects does.")
BodyExportSettings = _settings("BodyExportSettings", BODY_EXPORT_OPTIONS, doc="What an export of character bodies does.")
CutsceneExportSettings = _settings("CutsceneExportSettings", CUTSCENE_EXPORT_OPTIONS,
                                   doc="What an export of a cutscene does.")


class SpriteImportSettings(_settings("_SpriteOptions", SPRITE_OPTIONS, SPRITE_FPS)):
    """What an Outpost 2 import does."""

    @property
    def animation_indices(self) -> list[int] | None:
        """The chosen animations (None: all); ValueError where `animations` does not parse."""
        return parse_ranges(self.animations)
