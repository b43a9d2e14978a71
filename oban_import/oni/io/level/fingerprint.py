"""What an import keeps of a level's environment to tell, at an export, that the file still
holds what was imported (docs/level.md, "In Blender")."""

from ....core.id_properties import signed_crc32
from .model import Environment


def fingerprint(environment: Environment) -> int:
    """A signed CRC-32 of the environment's quads as read (points, corners, shades, flags,
    tags, textures): an import keeps it, an export checks the file still holds what was
    imported."""
    return signed_crc32(environment.points, environment.texture_coordinates, environment.quad_points,
                        environment.quad_uvs, environment.shades, environment.flags, environment.object_tags,
                        environment.quad_textures)
