"""Blender -> Oni (docs/engine.md 4, in reverse; to_blender.py is the way in), all at once, in
float64: points, directions and matrices with the change of basis A (Oni -> Blender axes, a
rotation or reflection: A^-1 = A^T) and the scale s (Blender units per Oni unit) undone."""

import numpy as np


def oni_points(points, axes, scale: float) -> np.ndarray:
    """(..., 3) Blender points (or offsets) -> Oni's axes and units: A^T x / s."""
    return np.asarray(points, np.float64) @ np.asarray(axes, np.float64) / scale


def oni_directions(vectors, axes) -> np.ndarray:
    """(..., 3) Blender directions (normals) -> Oni's axes: A^T v, their lengths kept."""
    return np.asarray(vectors, np.float64) @ np.asarray(axes, np.float64)


def oni_matrices(world, axes, scale: float) -> np.ndarray:
    """(..., 4, 4) Blender matrices of objects -> the engine's: [sA]^-1 . W . [sA], what
    to_blender.blender_matrices turns back."""
    axes = np.asarray(axes, np.float64)
    world = np.asarray(world, np.float64)
    out = np.zeros(world.shape)
    out[..., :3, :3] = axes.T @ world[..., :3, :3] @ axes
    out[..., :3, 3] = oni_points(world[..., :3, 3], axes, scale)
    out[..., 3, 3] = 1.0
    return out


def oni_camera_matrices(world, axes, scale: float) -> np.ndarray:
    """(..., 4, 4) Blender matrices of cameras -> the engine's [L | t]: L = A^T R, t = A^T x / s,
    what to_blender.camera_matrices turns back (both look down their local -Z with +Y up)."""
    axes = np.asarray(axes, np.float64)
    world = np.asarray(world, np.float64)
    out = np.zeros(world.shape)
    out[..., :3, :3] = axes.T @ world[..., :3, :3]
    out[..., :3, 3] = oni_points(world[..., :3, 3], axes, scale)
    out[..., 3, 3] = 1.0
    return out
