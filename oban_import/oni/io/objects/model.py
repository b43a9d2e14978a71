"""A level's placed objects (docs/objects.md): what the readers of OBOA, M3GA/M3GM and
TXMP (read.py) give the Blender side. The data classes here are the contract between the two.
"""

from dataclasses import dataclass, field

import numpy as np

from ....core.id_properties import signed_crc32
from ..oban.record import IDENTITY, Animation
from .textures import decode, to_bytes


@dataclass
class Texture:
    name: str                 # the TXMP's name without 'TXMP'
    width: int
    height: int
    format: int               # docs/objects.md 5: 0, 1, 2, 7, 8, 9
    flags: int                # TXMP flags as stored (0x04 NoUWrap, 0x08 NoVWrap, 0x200 HasEnvMap, 0x400 Additive)
    has_alpha: bool           # the format carries alpha
    raw: bytes = field(default=b"", repr=False)   # the first level's bytes, checked to be all there
    decoded: np.ndarray | None = field(default=None, repr=False)
    source: str = ""          # the file holding the TXMP's data (absolute), "" for none
    instance: int = -1        # its descriptor index in that file
    pixels_at: tuple = ("", -1)   # (file, byte) where the first level's bytes are stored: where a patch rewrites them

    @property
    def pixels(self) -> np.ndarray:
        """(height, width, 4) float32 RGBA in 0..1, top row first: `raw` decoded the first
        time they are asked for (the reader has checked all it can fail on)."""
        if self.decoded is None:
            self.decoded = decode(self.raw, self.width, self.height, self.format)
        return self.decoded

    @property
    def rgba8(self) -> np.ndarray:
        """(height, width, 4) uint8, round(255 x) of the pixels: decoded straight from `raw`
        where there is one (a fraction of the time)."""
        if self.raw:
            return decode(self.raw, self.width, self.height, self.format, as_bytes=True)
        return to_bytes(self.pixels)


@dataclass
class Mesh:
    name: str                 # the M3GM's name without 'M3GM'
    points: np.ndarray        # (n, 3) float32, Oni axes, the object's frame
    normals: np.ndarray       # (n, 3) float32 vertex normals
    uvs: np.ndarray           # (n, 2) float32 as stored (Direct3D: v = 0 is the top row)
    triangles: np.ndarray     # (t, 3) int32 vertex indices, each facing the way its face normal says
    texture: Texture | None   # None: none, or a placeholder not found (then texture_name says which)
    texture_name: str = ""    # the TXMP's name without 'TXMP', also when it was not found
    strips: np.ndarray | None = field(default=None, repr=False)                # int32, as stored
    face_normals: np.ndarray | None = field(default=None, repr=False)          # (f, 3) float32, as stored
    face_normal_indices: np.ndarray | None = field(default=None, repr=False)   # int32, as stored
    source: str = ""          # the file holding the M3GM's data (absolute), "" for none
    instance: int = -1        # its descriptor index in that file

    def stored_fingerprint(self) -> int:
        """A signed CRC-32 of the six arrays as stored: what an export checks its source still
        holds before it writes them back (docs/objects.md 10)."""
        return signed_crc32(*(values if values is not None else () for values in (
            self.points, self.normals, self.uvs, self.strips, self.face_normals, self.face_normal_indices)))


@dataclass
class PlacedObject:
    name: str                 # OBOA object name
    flags: int
    physics: int
    script_id: int
    door_gunk_id: int
    door_id: int
    position: np.ndarray      # (3,) float32
    rotation: np.ndarray      # (4,) float32, stored x y z w (engine convention)
    scale: float
    origin: np.ndarray        # 12 float32, 3x4 by columns: W for a static object
    meshes: list              # [Mesh], in M3GA order
    animation: Animation | None
    warnings: list = field(default_factory=list)   # e.g. a placeholder not found
    setup: int = -1           # its index in its OBOA (a door's leaves name theirs), -1 for none
    leaf: int = -1            # a door's leaf 0 or 1 (door_id: then its door's id, the list's), -1 for none


def at_origin(mesh: Mesh) -> PlacedObject:
    """A loose mesh as an object of its own name, standing at the origin."""
    return placed(mesh.name, [mesh], IDENTITY.copy())


def placed(name: str, meshes: list, origin: np.ndarray, position=(0.0, 0.0, 0.0), door_id: int = 0) -> PlacedObject:
    """An object of no object setup: `meshes` at `origin` (12 float32, stored columns), not
    moved, scaled or animated, no flags."""
    return PlacedObject(name=name, flags=0, physics=0, script_id=0, door_gunk_id=0, door_id=door_id,
                        position=np.asarray(position, np.float32), rotation=np.array([0, 0, 0, 1], np.float32),
                        scale=1.0, origin=origin, meshes=meshes, animation=None)


@dataclass
class Level:
    objects: list             # [PlacedObject], in OBOA order
    animations: list          # [Animation]: every OBAN of the file, those no object uses included
    warnings: list = field(default_factory=list)

    def unused(self) -> list:
        """The animations no object uses (the same one, or one of the same name)."""
        used = [o.animation for o in self.objects if o.animation is not None]
        ids, names = {id(a) for a in used}, {a.name for a in used}
        return [a for a in self.animations if id(a) not in ids and a.name not in names]
