"""Levels of placed objects built from the oni.objects data classes (no reader needed):
static, animated and Localized objects of one and two meshes, textures shared between
meshes and objects, with and without alpha and wrapping, a texture not found."""

import numpy as np

from oban_import.engine.rotations import rotation_matrices
from oban_import.oni.oban import LOCALIZED, LOOP, stored_columns
from oban_import.oni.objects import Level, Mesh, PlacedObject, Texture

from generate import random_animation

NO_U_WRAP, NO_V_WRAP, ENVMAP, ADDITIVE = 0x04, 0x08, 0x200, 0x400


def texture(rng, name, width, height, flags=0, has_alpha=False, fmt=7):
    pixels = (rng.integers(0, 256, (height, width, 4)) / 255.0).astype(np.float32)
    if not has_alpha:
        pixels[..., 3] = 1.0
    return Texture(name=name, width=width, height=height, format=fmt, flags=flags, has_alpha=has_alpha,
                   decoded=pixels)


def mesh(rng, name, tex, vertices=12, triangles=10, texture_name=None):
    tris = np.array([rng.choice(vertices, 3, replace=False) for _ in range(triangles)], np.int32)
    normals = rng.normal(size=(vertices, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return Mesh(name=name, points=rng.normal(0, 5, (vertices, 3)).astype(np.float32),
                normals=normals.astype(np.float32), uvs=rng.uniform(-0.5, 1.5, (vertices, 2)).astype(np.float32),
                triangles=tris, texture=tex,
                texture_name=texture_name if texture_name is not None else (tex.name if tex else ""))


def origin_columns(position, rotation, scale):
    """T(position) . R(rotation) . S(scale), the engine's R (OBJECTS.md 5), as 12 stored floats."""
    m = np.eye(4)
    m[:3, :3] = rotation_matrices(np.asarray(rotation, np.float64)[None])[0] * scale
    m[:3, 3] = position
    return stored_columns(m)


def placed(rng, name, meshes, animation=None, scale=None):
    position = rng.normal(0, 50, 3).astype(np.float32)
    q = rng.normal(size=4)
    rotation = (q / np.linalg.norm(q)).astype(np.float32)
    scale = float(rng.uniform(0.5, 2.0)) if scale is None else scale
    return PlacedObject(name=name, flags=0x200, physics=3 if animation else 1, script_id=-1,
                        door_gunk_id=7, door_id=-3, position=position, rotation=rotation, scale=scale,
                        origin=origin_columns(position, rotation, scale), meshes=meshes, animation=animation)


def level(seed=0):
    """Six objects, four textures (one shared by three meshes), one texture missing, one
    OBAN no object uses."""
    rng = np.random.default_rng(seed)
    opaque = texture(rng, "tex_opaque", 8, 4, fmt=8)
    alpha = texture(rng, "tex_alpha", 4, 8, flags=NO_U_WRAP | ADDITIVE, has_alpha=True, fmt=0)
    clamped = texture(rng, "tex_clamped", 16, 16, flags=NO_V_WRAP | ENVMAP, fmt=9)
    plain = texture(rng, "tex_plain", 2, 2, flags=0, has_alpha=True, fmt=2)
    moving = random_animation(rng, name="moving", frames=40, flags=LOOP, base="rotated_uniform")
    door = random_animation(rng, name="door", frames=30, flags=LOCALIZED, base="uniform")
    door2 = random_animation(rng, name="door2", frames=25, flags=LOCALIZED | LOOP, base="rotated_diagonal")
    unused = random_animation(rng, name="unused", frames=10, flags=0, base="identity")
    shared = mesh(rng, "crate", opaque)
    objects = [
        placed(rng, "static_one", [shared]),
        placed(rng, "static_two", [mesh(rng, "truck_body", opaque), mesh(rng, "truck_glass", alpha, 6, 4)]),
        placed(rng, "static_shared", [shared]),
        placed(rng, "animated_one", [mesh(rng, "fan", clamped)], moving),
        placed(rng, "localized_two", [mesh(rng, "door_a", plain), mesh(rng, "door_b", None, 5, 3, "tex_missing")],
               door),
        placed(rng, "localized_one", [mesh(rng, "lift", opaque, 30, 40)], door2, scale=1.0),
    ]
    objects[4].warnings.append("texture 'TXMPtex_missing' not found")
    return Level(objects=objects, animations=[moving, unused, door, door2])
