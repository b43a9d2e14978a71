"""A level's environment, object lists and classes (docs/level.md): what the readers of AKEV,
BINACJBO, DOOR, OFGA and ONLV (read.py) give the Blender side and the listing. The data
classes here are the contract between the two; every number is as stored (Oni axes, float32,
flags bit for bit), the readers having checked it.
"""

from dataclasses import dataclass, field

import numpy as np

from ..oban.record import Animation
from ..objects.model import Mesh

# Quad flags (docs/level.md 5), by OniSplit's names where it has one.
QUAD_FLAGS = {
    "DoorFrame": 0x1, "Ghost": 0x2, "StairsUp": 0x4, "StairsDown": 0x8, "Stairs": 0x10, "Jello": 0x20,
    "Triangle": 0x40, "Transparent": 0x80, "TwoSided": 0x200, "NoCollision": 0x800, "Invisible": 0x2000,
    "NoObjectCollision": 0x4000, "NoCharacterCollision": 0x8000, "NoOcclusion": 0x10000, "Danger": 0x20000,
    "BrokenGlass": 0x40000, "Horizontal": 0x80000, "Vertical": 0x100000, "GridIgnore": 0x400000,
    "NoDecals": 0x800000, "Furniture": 0x1000000, "ProjectionBit0": 0x2000000, "ProjectionBit1": 0x4000000,
    "SoundTransparent": 0x8000000, "Impassable": 0x10000000,
}
TRIANGLE = QUAD_FLAGS["Triangle"]
NOT_DRAWN = 0x1 | 0x2 | 0x4 | 0x8 | 0x2000 | 0x40000    # door frame, ghost, stairs up/down, invisible, broken
TWO_SIDED = 0x200 | 0x80 | 0x20                       # TwoSided, Transparent, Jello: both faces drawn
OBJECT_TAG_TYPES = {3: "door", 5: "furniture", 13: "trigger", 14: "turret", 15: "console"}
# Door flags (docs/level.md 1), OniSplit's names.
DOOR_FLAGS = {"InitialLocked": 0x1, "InDoorFrame": 0x4, "Manual": 0x10, "DoubleDoor": 0x80, "Mirror": 0x100,
              "OneWay": 0x200, "Reverse": 0x400, "Jammed": 0x800, "InitialOpen": 0x1000}
DOUBLE_DOOR = DOOR_FLAGS["DoubleDoor"]
SECOND_LEAF = 0x1000   # leaf 1 of door id d is the OBOA setup of door id d | 0x1000 (docs/level.md 3)
EVENT_TYPES = ("None", "Script", "ActivateTurret", "DeactivateTurret", "ActivateConsole", "DeactivateConsole",
               "ActivateAlarm", "DeactivateAlarm", "ActivateTrigger", "DeactivateTrigger", "LockDoor",
               "UnlockDoor")                  # object events: the stored u16 is the index
ONISPLIT_SPELLING = {"DeactivateAlarm": "DeactivateAlaram"}   # where OniSplit's XML names an event otherwise


@dataclass
class Environment:
    """An AKEV: every wall and floor of a level, with the closed doors and the furniture baked
    in as gunk (quads tagged with their object)."""
    name: str                      # the AKEV's name without 'AKEV'
    points: np.ndarray             # (p, 3) float32 (PNTA), Oni axes
    texture_coordinates: np.ndarray   # (t, 2) float32 (TXCA) as stored: v = 0 is the image's top row
    quad_points: np.ndarray        # (q, 4) int32 indices into points (AGQG); a Triangle repeats its third
    quad_uvs: np.ndarray           # (q, 4) int32 indices into texture_coordinates
    shades: np.ndarray             # (q, 4) uint32 0xAARRGGBB, one per corner
    flags: np.ndarray              # (q,) uint32 quad flags (QUAD_FLAGS)
    object_tags: np.ndarray        # (q,) int32: -1, or type << 24 | object id (OBJECT_TAG_TYPES)
    quad_textures: np.ndarray      # (q,) uint16 indices into textures (AGQR)
    collision_planes: np.ndarray   # (q,) int32 (AGQC): index into planes, top bit set = negated; (0,) without
    collision_boxes: np.ndarray    # (q, 6) float32 min xyz, max xyz; (0, 6) without
    planes: np.ndarray             # (n, 4) float32 a b c d: a x + b y + c z + d = 0 (PLEA)
    textures: list                 # [Texture | None] in TXMA order; None: link 0 or a placeholder not found
    texture_names: list            # [str] the TXMPs' names without 'TXMP' ('' for link 0), also when not found
    rooms: np.ndarray              # (r,) ROOM_DTYPE (AKVA): box (6 f32), flags (u32), floor (4 f32), height (f32)
    room_floors: np.ndarray        # (k, 3) float32: the rooms' floor polygons' corners, room after room (AKBP)
    room_floor_counts: np.ndarray  # (r,) int32 corners of each room's floor (0: the level has no room BSP)
    door_frames: np.ndarray        # (d,) DOOR_FRAME_DTYPE (AKDA): quad, box, position, facing, width, height
    bounding_box: np.ndarray       # (6,) float32 min xyz, max xyz as stored
    zero_area: np.ndarray          # (q,) bool: quads of no area (warned; not to be made)
    quads_at: tuple = ("", -1)     # (file, byte) of the first AGQG quad as stored: where a patch rewrites them
    quad_textures_at: tuple = ("", -1)   # (file, byte) of the first AGQR element

    def corner_counts(self, quads=slice(None)) -> np.ndarray:
        """(n,) of `quads` (indices; default all): 3 for a Triangle quad, else 4."""
        return np.where(self.flags[quads] & TRIANGLE, 3, 4).astype(np.int32)

    @property
    def object_types(self) -> np.ndarray:
        """(q,) int32: tag >> 24, -1 for a quad of no object."""
        return self.object_tags >> 24

    @property
    def object_ids(self) -> np.ndarray:
        """(q,) int32: tag & 0xFFFFFF, -1 for a quad of no object."""
        return np.where(self.object_tags == -1, -1, self.object_tags & 0xFFFFFF)

    def quads(self, quads=slice(None)) -> "Quads":
        """The quads `quads` (indices; default all) each with its own corners."""
        return Quads(points=self.points[self.quad_points[quads]], texture_coordinates=self.texture_coordinates[
            self.quad_uvs[quads]], shades=self.shades[quads], flags=self.flags[quads],
            textures=self.quad_textures[quads].astype(np.int32), texture_names=list(self.texture_names))

    def shade_bytes(self, quads=slice(None)) -> np.ndarray:
        """(n, 4, 4) uint8 RGBA of each corner's shade, of `quads` (indices; default all)."""
        return shade_rgba(self.shades[quads])


def shade_rgba(shades) -> np.ndarray:
    """(..., 4) uint8 R, G, B, A of 0xAARRGGBB shades (...)."""
    return np.ascontiguousarray(np.asarray(shades).astype("<u4")).view(np.uint8).reshape(*np.shape(shades), 4)[
        ..., [2, 1, 0, 3]]


def packed_shades(rgba) -> np.ndarray:
    """(...) uint32 0xAARRGGBB of (..., 4) R, G, B, A bytes: shade_rgba undone."""
    rgba = np.asarray(rgba, np.uint32)
    return rgba[..., 3] << 24 | rgba[..., 0] << 16 | rgba[..., 1] << 8 | rgba[..., 2]


@dataclass
class Quads:
    """Quads as a rebuild writes them (docs/level.md 11): each with its own corners, in order."""
    points: np.ndarray             # (n, 4, 3) float32, Oni axes; a Triangle's fourth repeats its third
    texture_coordinates: np.ndarray   # (n, 4, 2) float32 as stored: v = 0 is the image's top row
    shades: np.ndarray             # (n, 4) uint32 0xAARRGGBB
    flags: np.ndarray              # (n,) uint32 QUAD_FLAGS
    textures: np.ndarray           # (n,) int32 indices into texture_names
    texture_names: list            # [str] TXMP names without 'TXMP'

    @property
    def corner_counts(self) -> np.ndarray:
        return corner_counts(self.flags)


def corner_counts(flags) -> np.ndarray:
    """(n,) int32 the corners of quads of `flags`: 3 for a Triangle, else 4."""
    return np.where(flags & TRIANGLE, 3, 4).astype(np.int32)


@dataclass
class GeometryElement:
    flags: int                     # gunk flags (QUAD_FLAGS) its quads take in the environment
    mesh: Mesh | None              # None: a placeholder not found (warned)
    mesh_name: str                 # the M3GM's name without 'M3GM', also when not found


@dataclass
class FurnitureGeometry:
    """An OFGA: the meshes of a furniture class or of a door leaf."""
    name: str                      # without 'OFGA'
    elements: list                 # [GeometryElement]

    @property
    def meshes(self) -> list:
        """The elements' meshes, those found."""
        return [element.mesh for element in self.elements if element.mesh is not None]


@dataclass
class DoorClass:
    """A DOOR: a door's leaves, its animation and its sounds."""
    name: str                      # without 'DOOR'
    geometries: list               # [FurnitureGeometry | None] x 2: the leaf's, the second leaf's (None: none)
    geometry_names: list           # [str] x 2: the OFGAs' names without 'OFGA' ('' for link 0)
    animation: Animation | None    # the OBAN that opens it; None: none (warned) or not found
    animation_name: str            # the OBAN's name without 'OBAN' ('' for link 0)
    sound_attenuation: float
    sounds_allowed: int            # 0 all, 1 combat, 2 gunfire, 3 none
    sound_type: int                # -1 none, 0 unimportant, 1 interesting, 2 danger, 3 melee, 4 gunfire
    sound_radius: float
    open_sound: str
    close_sound: str


@dataclass
class DoorEvent:
    type: int                      # EVENT_TYPES index
    script: str = ""               # Script: the function's name
    target: int = 0                # the others but None: the id of what it acts on

    @property
    def name(self) -> str:
        return EVENT_TYPES[self.type]


@dataclass
class Door:
    """A DOOR object of a BINACJBO list."""
    id: int                        # object id (an environment quad's tag is 3 << 24 | id)
    flags: int                     # object flags (8 Gunk)
    position: np.ndarray           # (3,) float32: the bottom centre of its opening
    rotation: np.ndarray           # (3,) float32 degrees x y z: R = Rz(z) Ry(y) Rx(x)
    class_name: str                # the DOOR class, without 'DOOR'
    door_id: int
    key_id: int
    door_flags: int                # DOOR_FLAGS as stored
    frame_position: np.ndarray     # (3,) float32: where the engine looks for its door frame (OniSplit's Center)
    activation_radius_squared: float
    texture_names: tuple           # (Texture1, Texture2) as stored ('' none)
    textures: tuple                # (Texture | None, Texture | None): TXMP<name> found, else None
    events: list                   # [DoorEvent]
    door_class: DoorClass | None   # None: not found (warned; the engine draws nothing of it)
    setups: tuple = (None, None)   # OBOA object indices of leaf 0 and leaf 1 (None: none, or a single door)

    @property
    def leaf_count(self) -> int:
        return 2 if self.door_flags & DOUBLE_DOOR else 1


@dataclass
class Furniture:
    """A FURN object of a BINACJBO list."""
    id: int                        # object id (an environment quad's tag is 5 << 24 | id)
    flags: int
    position: np.ndarray           # (3,) float32
    rotation: np.ndarray           # (3,) float32 degrees, as a door's
    class_name: str                # the OFGA, without 'OFGA'
    particle: str
    geometry: FurnitureGeometry | None   # None: not found (warned)


@dataclass
class ObjectList:
    """A BINACJBO list: every object of a known type, in stored order, and its doors and
    furniture read whole."""
    name: str                      # the BINA's name without 'BINACJBO' ('Door', 'Patrol_Path')
    types: np.ndarray              # (n,) '<U4' type letters ('DOOR', 'FURN', 'CHAR', ...)
    ids: np.ndarray                # (n,) uint32 object ids
    flags: np.ndarray              # (n,) uint32 object flags
    positions: np.ndarray          # (n, 3) float32
    rotations: np.ndarray          # (n, 3) float32 degrees x y z
    payloads: list = field(default_factory=list)    # [bytes] each object's own data (its OSD: past the header)
    doors: list = field(default_factory=list)       # [Door], in list order
    furniture: list = field(default_factory=list)   # [Furniture], in list order


@dataclass
class LevelContents:
    """What a level .dat, a loose ONLV, AKEV, BINACJBO, DOOR or OFGA .oni holds beside its
    placed objects (objects/read.py reads those)."""
    name: str                      # the ONLV's (or else the file's first part's) name without its tag
    environment: Environment | None = None
    object_lists: list = field(default_factory=list)        # [ObjectList] in file (or file name) order
    door_classes: dict = field(default_factory=dict)        # name: DoorClass, each found once
    furniture_classes: dict = field(default_factory=dict)   # name: FurnitureGeometry
    object_quads: dict = field(default_factory=dict)        # ONOA: object tag: (k,) int32 quad indices
    sky: str = ""                  # the ONSK's name without 'ONSK' ('' none)
    warnings: list = field(default_factory=list)

    @property
    def doors(self) -> list:
        return [door for objects in self.object_lists for door in objects.doors]

    @property
    def furniture(self) -> list:
        return [piece for objects in self.object_lists for piece in objects.furniture]
