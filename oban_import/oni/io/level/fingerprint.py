"""What an import keeps of a level's environment to tell, at an export, that the file still
holds what was imported (docs/level.md, "In Blender")."""

import zlib

import numpy as np

from .model import Environment


def fingerprint(environment: Environment) -> int:
    """A CRC-32 of the environment's quads as read (points, corners, shades, flags, tags,
    textures): an import keeps it, a patch checks the file still holds what was imported."""
    crc = 0
    for values in (environment.points, environment.texture_coordinates, environment.quad_points,
                   environment.quad_uvs, environment.shades, environment.flags, environment.object_tags,
                   environment.quad_textures):
        crc = zlib.crc32(np.ascontiguousarray(values).tobytes(), crc)
    return crc
