"""The custom properties that describe a placed object (docs/objects.md 3, the OBOA object)
on its Blender object, a texture (5) on its material and image, and where a mesh's M3GM
parts and an image's TXMP came from, for the mesh export (10). Plain mappings, no bpy."""

import numpy as np

from ....core.id_properties import signed32
from .textures import ADDITIVE, HAS_ENV_MAP

OBJECT_NAME = "oni_object_name"
SETUP_FLAGS = "oni_setup_flags"
OBJECT_PHYSICS = "oni_physics"
OBJECT_SCRIPT_ID = "oni_script_id"
OBJECT_DOOR_GUNK_ID = "oni_door_gunk_id"
OBJECT_DOOR_ID = "oni_door_id"
SETUP_POSITION = "oni_setup_position"        # as stored, Oni axes
SETUP_ROTATION = "oni_setup_rotation"        # x y z w as stored
OBJECT_SCALE = "oni_scale"
OBJECT_ORIGIN = "oni_origin"              # 12 floats, 3x4 by columns
OBJECT_DOOR_LEAF = "oni_door_leaf"        # a door's leaf 0 or 1 (oni_door_id then its door's id)
OBJECT_SETUP = "oni_setup"                # its index in its OBOA (a level rebuild writes the setups in this order)
TEXTURE_FLAGS = "oni_texture_flags"       # on the material
TEXTURE_ADDITIVE = "oni_additive"         # 0x400 AdditiveBlend
TEXTURE_ENVMAP = "oni_envmap"             # 0x200 HasEnvMap
TEXTURE_FORMAT = "oni_texture_format"
TEXTURE_NAME = "oni_texture_name"
MESH_FINGERPRINT = "oni_mesh_fingerprint"       # on a mesh an import made: a CRC-32 of it as made
PIXELS_FINGERPRINT = "oni_pixels_fingerprint"   # on an image an import made: a CRC-32 of its pixels as read
# On a mesh an import made, a list with an item per M3GM part it holds, in order:
MESH_PARTS = "oni_mesh_parts"                   # the part's M3GM name without 'M3GM'
PART_FILES = "oni_part_files"                   # the file holding its data (absolute)
PART_INSTANCES = "oni_part_instances"           # its descriptor index there
PART_STORED = "oni_part_stored"                 # a CRC-32 of its arrays as stored (model.Mesh.stored_fingerprint)
PART_SHAPES = "oni_part_shapes"                 # a CRC-32 of its faces as made, but their normals (fingerprints.part_shapes)
PART_FINGERPRINTS = "oni_part_fingerprints"     # the last release's: normals as drawn included (read, no more written)
PART_ATTRIBUTE = "oni_part"                     # INT face attribute: the part each face belongs to
TEXTURE_FILE = "oni_texture_file"               # on an image an import made: the file holding its TXMP
TEXTURE_INSTANCE = "oni_texture_instance"       # ... and the TXMP's descriptor index there
# What the last release wrote where these are now (each of those keys meant another thing on
# another kind of object): {today's key: the last release's}, on a placed object (one with
# OBJECT_NAME) and on a mesh an import made.
LEGACY_OBJECT_KEYS = {SETUP_FLAGS: "oni_flags", SETUP_POSITION: "oni_position", SETUP_ROTATION: "oni_rotation"}
LEGACY_MESH_KEYS = {MESH_PARTS: "oni_parts"}


def object_properties(placed) -> dict:
    """What describes a PlacedObject (model.py) on its Blender object."""
    return {
        OBJECT_NAME: placed.name,
        SETUP_FLAGS: signed32(placed.flags),
        OBJECT_PHYSICS: signed32(placed.physics),
        OBJECT_SCRIPT_ID: signed32(placed.script_id & 0xFFFFFFFF),
        OBJECT_DOOR_GUNK_ID: signed32(placed.door_gunk_id & 0xFFFFFFFF),
        OBJECT_DOOR_ID: signed32(placed.door_id & 0xFFFFFFFF),
        SETUP_POSITION: np.asarray(placed.position, np.float64).tolist(),
        SETUP_ROTATION: np.asarray(placed.rotation, np.float64).tolist(),
        OBJECT_SCALE: float(placed.scale),
        OBJECT_ORIGIN: np.asarray(placed.origin, np.float64).tolist(),
    } | ({OBJECT_DOOR_LEAF: placed.leaf} if placed.leaf >= 0 else {}) | (
        {OBJECT_SETUP: placed.setup} if placed.setup >= 0 else {})


def texture_properties(texture, name: str) -> dict:
    """What describes a texture (or, None, the missing one called `name`) on its material."""
    flags = texture.flags if texture is not None else 0
    described = {TEXTURE_NAME: name, TEXTURE_FLAGS: signed32(flags),
                 TEXTURE_ADDITIVE: bool(flags & ADDITIVE), TEXTURE_ENVMAP: bool(flags & HAS_ENV_MAP)}
    if texture is not None:
        described[TEXTURE_FORMAT] = int(texture.format)
    return described


def part_properties(parts) -> dict:
    """Where each of a mesh's M3GM parts (model.Mesh) came from, as stored (PART_FINGERPRINTS
    is made of the Blender mesh, apart)."""
    return {MESH_PARTS: [part.name for part in parts], PART_FILES: [part.source for part in parts],
            PART_INSTANCES: [part.instance for part in parts],
            PART_STORED: [part.stored_fingerprint() for part in parts]}


def texture_source(texture) -> dict:
    """Where a texture's TXMP came from, for its image."""
    return {TEXTURE_FILE: texture.source, TEXTURE_INSTANCE: texture.instance}
