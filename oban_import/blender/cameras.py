"""Cameras: a new Camera with Oni's lens (docs/engine.md 4, cameras)."""

import math

import bpy

CAMERA_FOV_Y = math.radians(45.0)  # Oni's vertical field of view
CLIP = (1.0, 20000.0)              # Oni units


def new_camera(collection, name, scale):
    camera = bpy.data.cameras.new(name)
    camera.sensor_fit = "VERTICAL"
    camera.angle_y = CAMERA_FOV_Y
    camera.clip_start, camera.clip_end = (clip * scale for clip in CLIP)
    obj = bpy.data.objects.new(name, camera)
    collection.objects.link(obj)
    return obj
