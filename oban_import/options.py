"""The import and export options, in one table each: the operators' properties, the
command line's flags, the dialogs' groups and the Settings they fill all come from
here (no bpy: the command line's listing runs without Blender)."""

from dataclasses import dataclass, field, fields

import numpy as np

from .engine.axes import DEFAULT_AXES, EULER_AXES, axes_matrix

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
    items: tuple = ()         # enum: (id, label, description)
    cli_items: tuple = ()     # enum ids the command line offers (default: all)
    minimum: float | None = None
    maximum: float | None = None
    precision: int = 3        # digits a float shows
    cli_lower: bool = False   # the command line spells the enum ids in lower case with hyphens

    @property
    def kind(self) -> str:
        return "enum" if self.items else type(self.default).__name__


ROTATION_MODES = (("QUATERNION", "Quaternion", "Quaternion rotation, continuous in sign"),) + tuple(
    (order, f"Euler {order}", f"Euler angles in {order} order, continuous between frames") for order in EULER_AXES)
TARGETS = (
    ("EMPTY", "New Empty", "Each animation makes a new Empty"),
    ("CAMERA", "New Camera", "Each animation makes a new Camera that looks where the Oni camera looked"),
    ("SELECTED", "Selected Objects", "Animate the selected objects (matched by name when a file holds several "
                                     "animations); Localized animations play relative to where the object stands"),
)
PLAYBACKS = (
    ("FRAMES", "Frames", "Keys for frames 0 .. frames - 1, then the last frame holds"),
    ("ENGINE", "As the Engine Plays", "Loop and PingPong animations repeat forever as in the game"),
)
KEYS = (
    ("EVERY_FRAME", "Every Frame", "A key on every frame, as the engine computes it"),
    ("FILE", "File Keys", "The file's own keys, LINEAR: exact at every frame too, fewer and editable (where they "
                          "cannot be exact, the animation is baked and a note says why)"),
)
EXPORT_FORMATS = (
    ("oni", "OniSplit .oni", "OBANName.oni, as OniSplit writes it (VR32)"),
    ("xml", "OniSplit XML", "OBANName.xml"),
    ("raw", "Raw instance", "NNNNN-Name.OBAN"),
)
SCALE = Option("global_scale", "Scale", "Blender units per Oni unit (0.1 gives metres)", 1.0, "Transform",
               flag="--scale", minimum=1e-6, maximum=1e6)
# The orientation pair: drawn by Blender's orientation helper in the dialogs.
FORWARD = Option("axis_forward", "Forward", "Oni axis that points forward", "-Z", "Transform", flag="--forward",
                 items=tuple((a, a, "") for a in AXES))
UP = Option("axis_up", "Up", "Oni axis that points up", "Y", "Transform", flag="--up",
            items=tuple((a, a, "") for a in AXES))

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
           False, "Animation"),
    Option("random_seed", "Seed", "Seed of the random start frames", 0, "Animation", minimum=0),
    Option("update_scene_fps", "Set Scene to 60 fps", "Oni plays one frame per tick, 60 per second", True,
           "Scene", flag="--no-scene-fps"),
    Option("update_scene_duration", "Extend Scene Frame Range",
           "Extend (never shorten) the scene range to the animations", True, "Scene", flag="--no-scene-duration"),
    Option("target", "Target", "What each animation moves", "EMPTY", "Target", flag="--target", items=TARGETS,
           cli_items=("EMPTY", "CAMERA")),
    Option("name_filter", "Name Filter", "Only instances whose name matches this pattern, e.g. *door* (empty: all)",
           "", "Target", flag="--filter"),
    Option("objects", "Placed Objects", "A level's (or OBOA file's) objects with their meshes and textures, moved by "
                                        "their OBANs; loose M3GM and TXMP files as a mesh and an image", True,
           "Objects", flag="--objects"),
)
EXPORT_OPTIONS = (
    Option("file_format", "Format", "The kind of file written", "oni", "File", flag="--format", items=EXPORT_FORMATS),
    Option("use_selection", "Selected Only", "Export the selected objects (else every animated object)", True,
           "File"),
    Option("tolerance", "Tolerance", "Largest relative error allowed on any frame's matrix", 1e-4, "Keys",
           flag="--tolerance", minimum=1e-9, maximum=0.1, precision=6),
    Option("global_scale", "Scale", "Blender units per Oni unit, as imported", 1.0, "Transform", flag="--scale",
           minimum=1e-6, maximum=1e6),
    FORWARD, UP,
)


SPRITE_OPTIONS = (
    Option("bmp_path", "Bitmap File", "op2_art.bmp (empty: the one beside the .prt, any case)", "", "Files",
           flag="--bmp"),
    Option("animation_ranges", "Animations", "Which animations, e.g. 0-40,500 (empty: all)", "", "Files",
           flag="--animations"),
    Option("pixel_scale", "Scale", "Blender units per pixel (1/32: a 32-pixel tile is one unit)", 1 / 32,
           "Transform", flag="--scale", minimum=1e-6, maximum=1e6, precision=5),
    Option("frame_start", "Start Frame", "Scene frame of each animation's frame 0", 1, "Animation",
           flag="--frame-start"),
    Option("update_scene_fps", "Set Scene to 100 fps", "Outpost 2 shows a frame a game tick, about 100 a second",
           True, "Scene", flag="--no-scene-fps"),
    Option("update_scene_duration", "Extend Scene Frame Range",
           "Extend (never shorten) the scene range to the animations", True, "Scene", flag="--no-scene-duration"),
    Option("update_view_transform", "Standard View Transform",
           "Set the scene's view transform to Standard, so rendered colours are the palette's", True, "Scene",
           flag="--no-view-transform"),
)


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


@dataclass
class Settings:
    """What an import does: filled from IMPORT_OPTIONS by `from_options`."""
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: DEFAULT_AXES)  # Oni -> Blender
    frame_start: int = 1
    rotation_mode: str = "QUATERNION"      # or an Euler order such as 'XYZ'
    update_scene_fps: bool = True
    update_scene_duration: bool = True
    name_glob: str = ""
    target: str = "EMPTY"                  # 'EMPTY', 'CAMERA' or 'SELECTED'
    playback: str = "FRAMES"               # 'FRAMES' (0 .. F-1) or 'ENGINE' (as the engine repeats it)
    random_start_seed: int = -1            # >= 0: RandomStart animations start at a seeded frame
    keys: str = "EVERY_FRAME"              # or 'FILE': the file's own keys where they are exact
    objects: bool = True                   # placed objects, loose meshes and textures

    @classmethod
    def from_options(cls, source) -> "Settings":
        """From anything with IMPORT_OPTIONS' names as attributes (the operator, the parsed
        command line)."""
        values = {name: getattr(source, name) for name in (f.name for f in fields(cls)) if hasattr(source, name)}
        return cls(**values, axes=axes_matrix(source.axis_forward, source.axis_up), name_glob=source.name_filter,
                   random_start_seed=source.random_seed if source.use_random_start else -1)


@dataclass
class SpriteSettings:
    """What an Outpost 2 import does: filled from SPRITE_OPTIONS by `from_options`."""
    bmp_path: str = ""                  # "" = op2_art.bmp beside the .prt, case ignored
    animations: list | None = None      # animation indices, None = all
    scale: float = 1 / 32               # Blender units per pixel: a 32-pixel tile is one unit
    frame_start: int = 1                # scene frame of each animation's frame 0
    update_scene_fps: bool = True       # scene to sprites.SPRITE_FPS
    update_scene_duration: bool = True  # extend the scene's frame range to the longest animation
    update_view_transform: bool = True  # 'Standard', so rendered colours are the palette's bytes

    @classmethod
    def from_options(cls, source) -> "SpriteSettings":
        """ValueError for animation ranges that do not parse."""
        return cls(bmp_path=source.bmp_path, animations=parse_ranges(source.animation_ranges),
                   scale=source.pixel_scale, frame_start=source.frame_start,
                   update_scene_fps=source.update_scene_fps, update_scene_duration=source.update_scene_duration,
                   update_view_transform=source.update_view_transform)


@dataclass
class ExportSettings:
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: DEFAULT_AXES)
    format: str = "oni"
    tolerance: float = 1e-4

    @classmethod
    def from_options(cls, source) -> "ExportSettings":
        return cls(global_scale=source.global_scale, axes=axes_matrix(source.axis_forward, source.axis_up),
                   format=source.file_format, tolerance=source.tolerance)
