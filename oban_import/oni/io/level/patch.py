"""A level's shades, flags and texture indices rewritten where they stand (docs/level.md 11):
the files that hold the environment's quads (AGQG), their textures (AGQR) and the pixels of a
texture repainted in its own size and format, every other byte as read, and what such a patch
cannot carry."""

import numpy as np

from ....core.errors import ObanError
from ....core.files import read_bytes
from .model import QUAD_FLAGS, TRIANGLE, Environment

QUAD_SIZE, SHADES_AT, FLAGS_AT = 56, 0x20, 0x30     # an AGQG quad's bytes, its shades' and flags' place in it
TEXTURE_SIZE = 4                                    # an AGQR element: u16 TXMA index, u16 run-time alpha
TRANSPARENT = QUAD_FLAGS["Transparent"]
# Baked into the rooms' pathfinding grids when the level was built (a change there goes stale).
GRID_FLAGS = {name: QUAD_FLAGS[name] for name in ("Stairs", "NoCollision", "NoCharacterCollision", "Danger",
                                                   "GridIgnore", "Impassable")}


def refusals(environment: Environment, flags, textures) -> list:
    """(quad, why) of each quad whose new `flags` (q,) uint32 or `textures` (q,) TXMA indices
    (-1: a texture the level does not list) a patch cannot carry."""
    old = environment.flags.astype(np.int64)
    new = np.asarray(flags, np.int64)
    found = []
    for quad in np.flatnonzero(new & ~old & TRANSPARENT).tolist():
        found.append((quad, "made Transparent: the game draws Transparent quads only through the alpha BSP built "
                            "with the level"))
    for quad in np.flatnonzero((new ^ old) & TRIANGLE).tolist():
        found.append((quad, "a triangle made a quad or a quad a triangle: its corners are stored with the points"))
    grid = sum(GRID_FLAGS.values())
    for quad in np.flatnonzero((new ^ old) & grid).tolist():
        changed = [name for name, bit in GRID_FLAGS.items() if (new[quad] ^ old[quad]) & bit]
        found.append((quad, f"{', '.join(changed)} changed: the rooms' pathfinding grids were built from it"))
    for quad in np.flatnonzero(np.asarray(textures) < 0).tolist():
        found.append((quad, "a texture the level's texture list (TXMA) does not hold"))
    return sorted(found)


def patched_files(environment: Environment, shades, flags, textures, pixels=()) -> dict:
    """{file path: its bytes} of the files holding the quads and their textures, with the
    new `shades` (q, 4) uint32 0xAARRGGBB, `flags` (q,) uint32 and `textures` (q,) TXMA indices
    written at their records, and each (Texture, bytes) of `pixels` written where the texture's
    pixels are stored (every level, in its own format: as long as those it replaces), every
    other byte as read (ObanError if a file cannot be read)."""
    quads, count = environment.quads_at, len(environment.flags)
    files = {path: bytearray(read_bytes(path)) for path in {quads[0], environment.quad_textures_at[0],
                                                            *(texture.pixels_at[0] for texture, _ in pixels)}}
    for texture, data in pixels:
        path, offset = texture.pixels_at
        if offset < 0 or offset + len(data) > len(files[path]):
            raise ObanError(path, f"texture '{texture.name}': its {len(data)} bytes of pixels at {offset} lie past "
                                  f"the file's end: the file has changed since it was imported")
        files[path][offset:offset + len(data)] = data
    records = _records(files[quads[0]], quads, count, QUAD_SIZE)
    records[:, SHADES_AT:SHADES_AT + 16] = np.ascontiguousarray(shades, "<u4").view(np.uint8).reshape(count, 16)
    records[:, FLAGS_AT:FLAGS_AT + 4] = np.ascontiguousarray(flags, "<u4").view(np.uint8).reshape(count, 4)
    elements = _records(files[environment.quad_textures_at[0]], environment.quad_textures_at, count, TEXTURE_SIZE)
    elements[:, :2] = np.ascontiguousarray(textures, "<u2").view(np.uint8).reshape(count, 2)
    return {path: bytes(data) for path, data in files.items()}


def _records(data: bytearray, at, count, size) -> np.ndarray:
    """(count, size) uint8 view of the records stored from at[1] in `data` (the file at[0])."""
    path, offset = at
    if offset < 0 or offset + count * size > len(data):
        raise ObanError(path, f"its {count} records of {size} bytes at {offset} lie past its end: the file has "
                              f"changed since it was imported")
    return np.frombuffer(memoryview(data), np.uint8, count * size, offset).reshape(count, size)
