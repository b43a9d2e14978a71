"""The scene as a cutscene export reads it (docs/cutscenes.md 11): each tick's shot, the world
matrices of the shots' cameras, the characters and the placed objects (in the engine's terms
too), what is hidden, which placed objects move as their level's import made them, and what no
statement carries."""

import numpy as np

from ....blender.compat import action_fcurves
from ....core.errors import ObanError
from ...cutscene import CUTSCENE, CUTSCENE_CHARACTER
from ...engine.rotations import split_rotation_scale
from ...engine.to_blender import camera_matrices
from ...engine.to_oni import oni_camera_matrices, oni_matrices
from ...io.characters.properties import CHARACTER
from ...io.import_frame import import_frame
from ...io.objects.properties import OBJECT_SCRIPT_ID
from ..shared.motion import animation_of, motions, world_matrices
from .scene import hidden, shots
from .script import marker_statement, word

CAMERA_FOV = np.pi / 4   # the game's camera's vertical field of view
LENS = {"lens", "angle", "angle_y", "sensor_width", "sensor_height"}   # a camera's keys that change its view's angle
TRANSFORMS = {"location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale", "delta_location",
              "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale"}


def character_key(armature) -> str:
    """The script's name of the character an armature is: the import's (CUTSCENE_CHARACTER), else its name."""
    return str(armature.get(CUTSCENE_CHARACTER) or word(armature.name))


def cutscene_objects(objects):
    """What a cutscene export writes of: the cameras, character armatures and placed objects."""
    return [obj for obj in objects if obj.type == "CAMERA" or CHARACTER in obj or OBJECT_SCRIPT_ID in obj]


class Take:
    """The scene as the export reads it: each tick's shot, the world matrices (engine space too)
    of the shots' cameras, the characters and the placed objects, what is hidden."""

    def __init__(self, context, objects, settings):
        scene = self.scene = context.scene
        self.settings, self.length = settings, scene.frame_end - scene.frame_start + 1
        self.frames = scene.frame_start + np.arange(self.length)
        self.shots = shots(scene, self.frames)
        self.cameras = list(dict.fromkeys(camera for camera, _, _ in self.shots))
        chosen = [obj for obj in cutscene_objects(objects) if obj.type != "CAMERA"]
        self.armatures = [obj for obj in chosen if obj.type == "ARMATURE"]
        self.placed = [obj for obj in chosen if obj.type != "ARMATURE"]
        everything = self.cameras + chosen
        worlds = world_matrices(context, everything, [self.frames] * len(everything))
        for world in worlds:
            if isinstance(world, ObanError):
                raise world
        self.world = dict(zip(everything, worlds))
        self.frame = {obj: import_frame(obj, _label(obj), settings.global_scale, settings.axes) for obj in everything}
        self.camera = np.empty((self.length, 4, 4))    # the engine's camera on each tick
        for camera, begin, end in self.shots:
            scale, axes = self.frame[camera]
            self.camera[begin:end] = oni_camera_matrices(self.world[camera][begin:end], axes, scale)
            _, size, _ = split_rotation_scale(self.world[camera][begin:end, :3, :3])
            if np.abs(size - 1.0).max() > 1e-4:
                raise ObanError(_label(camera), "a camera's scale the game's camera cannot have: set it to 1")
        self.hidden = {obj: hidden(obj, self.frames) for obj in chosen}
        self.as_level = _as_level(context, [obj for obj in self.placed if CUTSCENE not in obj], settings)

    def engine(self, obj):
        scale, axes = self.frame[obj]
        return oni_matrices(self.world[obj], axes, scale)

    def camera_blender(self, engine):
        """Engine camera matrices (T, 4, 4) in Blender's world, each shot's by its camera."""
        out = np.empty_like(engine)
        for camera, begin, end in self.shots:
            scale, axes = self.frame[camera]
            out[begin:end] = camera_matrices(engine[begin:end], axes, scale)
        return out

    def not_carried(self) -> list:
        """What the scene shows that no statement carries, each named (docs/cutscenes.md 11.8)."""
        said = []
        for camera in self.cameras:
            action = camera.data.animation_data.action if camera.data.animation_data else None
            lens = action is not None and any(c.data_path in LENS for c in action_fcurves(action))
            if lens or abs(camera.data.angle_y - CAMERA_FOV) > 1e-4:
                said.append(f"camera '{camera.name}': its field of view ({camera.data.angle_y * 180 / np.pi:.4g}° "
                            f"vertical{', keyed' if lens else ''}) is not carried: the game's camera has 45°")
        unplaced = [obj.name for obj in self.scene.objects if obj.type not in ("CAMERA", "ARMATURE")
                    and OBJECT_SCRIPT_ID not in obj and _keys_motion(obj)]
        if unplaced:
            said.append(f"{len(unplaced)} objects move but are not placed objects of the level (no script id), which "
                        f"no statement moves: not written ('{unplaced[0]}' ...)")
        markers = [m for m in self.scene.timeline_markers if m.camera is None and marker_statement(m.name) is None]
        if markers:
            said.append(f"scene '{self.scene.name}': {len(markers)} markers are not statements and are not written "
                        f"('{markers[0].name}' at frame {markers[0].frame} ...): a marker named as a call "
                        "(`fade_out 0 0 0 30`, the import's dialogue markers) is written")
        return said


def _keys_motion(obj) -> bool:
    """Whether the object's action keys where it is (not only its modifiers or other settings)."""
    action = obj.animation_data.action if obj.animation_data else None
    return action is not None and any(c.data_path.split(".")[-1] in TRANSFORMS for c in action_fcurves(action, obj))


def _as_level(context, objects, settings) -> set:
    """The placed objects still moved by the animation their level's import gave them, unchanged:
    the level plays it, no statement needed."""
    animated = [obj for obj in objects if obj.animation_data is not None and obj.animation_data.action is not None]
    found = set()
    for obj, motion in zip(animated, motions(context, [(obj, None) for obj in animated], settings.global_scale,
                                             settings.axes)):
        try:
            if animation_of(motion, settings.tolerance)[1]:
                found.add(obj)
        except ObanError:
            pass   # not an OBAN's motion as read: the cutscene writes it
    return found


def _label(obj):
    return f"{obj.type.lower() if obj.type in ('CAMERA', 'ARMATURE') else 'object'} '{obj.name}'"
