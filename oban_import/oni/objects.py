"""A level's placed objects (docs/objects.md): what the readers of OBOA, M3GA/M3GM and
TXMP give the Blender side. The data classes here are the contract between the two.

INTERFACE (filled in by the object readers):
    read_objects(path: str) -> Level
        `path` a level .dat (with its .raw beside it) or an OBOA .oni (its links found
        among the loose .oni files of its folder); ObanError on bad input.
    read_mesh_file(path: str) -> Mesh        a loose M3GM .oni (its texture resolved)
    read_texture_file(path: str) -> Texture  a loose TXMP .oni
"""

from dataclasses import dataclass, field

import numpy as np

from .oban import Animation


@dataclass
class Texture:
    name: str                 # the TXMP's name without 'TXMP'
    width: int
    height: int
    format: int               # docs/objects.md, textures: 0, 1, 2, 7, 8, 9
    flags: int                # TXMP flags as stored (0x04 NoUWrap, 0x08 NoVWrap, 0x200 HasEnvMap, 0x400 Additive)
    pixels: np.ndarray        # (height, width, 4) float32 RGBA in 0..1, top row first
    has_alpha: bool           # the format carries alpha


@dataclass
class Mesh:
    name: str                 # the M3GM's name without 'M3GM'
    points: np.ndarray        # (n, 3) float32, Oni axes, the object's frame
    normals: np.ndarray       # (n, 3) float32 vertex normals
    uvs: np.ndarray           # (n, 2) float32 as stored (Direct3D: v = 0 is the top row)
    triangles: np.ndarray     # (t, 3) int32 vertex indices, each facing the way its face normal says
    texture: Texture | None   # None: none, or a placeholder not found (then texture_name says which)
    texture_name: str = ""    # the TXMP's name without 'TXMP', also when it was not found


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


@dataclass
class Level:
    objects: list             # [PlacedObject], in OBOA order
    animations: list          # [Animation]: every OBAN of the file, those no object uses included
    warnings: list = field(default_factory=list)
