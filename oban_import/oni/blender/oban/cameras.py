"""Cameras: a new Camera with Oni's lens (docs/engine.md 4, cameras)."""

import math

import bpy

CAMERA_FOV_Y = math.radians(45.0)  # Oni's vertical field of view
CLIP = (1.0, 20000.0)              # Oni units


def new_camera(name, scale):
    """A new Camera object and its camera, in no collection yet."""
    camera = bpy.data.cameras.new(name)
    camera.sensor_fit = "VERTICAL"
    camera.angle_y = CAMERA_FOV_Y
    camera.clip_start, camera.clip_end = (clip * scale for clip in CLIP)
    return bpy.data.objects.new(name, camera)
