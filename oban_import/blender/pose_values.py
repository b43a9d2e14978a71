"""An armature's bones' pose matrices on many frames from its action's keys, without setting the
scene on each (docs/characters.md, "Export"): keyed_poses, for bones whose pose Blender makes
from those keys and the rest alone (`_keys_alone` says when); core/fcurve_math.py does the
arithmetic."""

import re

import numpy as np

from ..core.fcurve_math import basis_matrices, pose_matrices
from .compat import played_fcurves
from .fcurve_values import ROTATIONS, SIZES, channel_values, fcurve_keys, plain_time

BONE_PATH = re.compile(r'pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)')   # a bone's F-curve: its name, its channel


def bone_channel(data_path):
    """('Bone', 'location') of 'pose.bones["Bone"].location'; (None, None) for another path."""
    match = BONE_PATH.fullmatch(data_path)
    return (re.sub(r"\\(.)", r"\1", match[1]), match[2]) if match else (None, None)


def keyed_poses(scene, armature, names, frames):
    """(F, len(names), 4, 4) the pose matrices (armature space, PoseBone.matrix) of the armature's
    bones `names` on each of the scene `frames` (whole numbers) as setting the scene there gives
    them, from its active action's keys and the bones' rest; None where they may depend on
    anything else, or a key's value overflows float32."""
    bones = _lineage(armature, names)
    curves = _keys_alone(scene, armature, bones)
    if curves is None:
        return None
    times = np.asarray(frames, np.float32)
    basis = np.empty((len(times), len(bones), 4, 4))
    modes = [armature.pose.bones[name].rotation_mode for name in bones]
    for mode in set(modes):
        group = [k for k, bone_mode in enumerate(modes) if bone_mode == mode]
        channels = []
        for path in ("location", ROTATIONS.get(mode, "rotation_euler"), "scale"):
            values = np.stack([channel_values(getattr(armature.pose.bones[bones[k]], path),
                                              curves.get((bones[k], path), {}), times) for k in group], axis=1)
            if not np.isfinite(values).all():   # Blender clamps what overflows to its range
                return None
            channels.append(values)
        connected = [armature.data.bones[bones[k]].use_connect for k in group]
        channels[0][:, connected] = 0   # a connected bone's location moves nothing
        flat = basis_matrices(*(values.reshape(-1, values.shape[-1]) for values in channels), mode)
        basis[:, group] = flat.reshape(len(times), len(group), 4, 4)
    offsets, parents = _rest(armature, bones)
    return pose_matrices(offsets, parents, basis)[:, [bones.index(name) for name in names]]


def _lineage(armature, names):
    """`names` and the names of the bones above them, each once."""
    found = {}
    for name in names:
        bone = armature.data.bones[name]
        while bone is not None and bone.name not in found:
            found[bone.name] = None
            bone = bone.parent
    return list(found)


def _rest(armature, bones):
    """(offsets (P, 4, 4), parents (P,)) of pose_matrices for the armature's `bones` (names,
    each one's parent among them): a root's rest matrix; another's rest rotation within its
    parent, its head from its parent's tail (the parent's length along its Y axis, added in
    float32 as Blender does)."""
    offsets = np.tile(np.eye(4), (len(bones), 1, 1))
    parents = np.full(len(bones), -1)
    for k, name in enumerate(bones):
        bone = armature.data.bones[name]
        if bone.parent is None:
            offsets[k] = np.array(bone.matrix_local, np.float32)
            continue
        parents[k] = bones.index(bone.parent.name)
        head = np.array(bone.head, np.float32)
        head[1] += np.float32(bone.parent.length)
        offsets[k, :3, :3], offsets[k, :3, 3] = np.array(bone.matrix, np.float32), head
    return offsets, parents


def _keys_alone(scene, armature, bones):
    """{(bone, data_path): {index: (points, lefts, rights, modes, linear)}} of the keyed channels
    of the `bones`' transforms (location, scale, each one's rotation mode's rotation) where
    their pose matrices are made of their rest and T.R.S of those keys' values and their other
    channels' own; else None. That takes: the scene's frames not remapped and no frame-change
    handler; the armature showing its pose (not in edit mode, not at rest), its data without
    keys, drivers or NLA tracks; no constraint in effect on any bone (nor IK) and no driver on
    a bone's channel; its active action played alone (NLA off, not in tweak mode); each of
    `bones` inheriting its parent's rotation and scale in full and moving along its own axes
    (Local Location); their rotation modes not keyed; their channels' F-curves playing, once
    each, their keys alone (fcurve_keys)."""
    data, own = armature.animation_data, armature.data
    if (not plain_time(scene) or own.pose_position != "POSE" or own.is_editmode
            or (own.animation_data is not None and (own.animation_data.action is not None
                                                    or len(own.animation_data.drivers)
                                                    or len(own.animation_data.nla_tracks)))
            or any(not constraint.mute for bone in armature.pose.bones for constraint in bone.constraints)):
        return None
    for name in bones:
        bone = own.bones[name]
        if not bone.use_inherit_rotation or bone.inherit_scale != "FULL" or not bone.use_local_location:
            return None
    if data is None:
        return {}
    if (data.use_tweak_mode or (data.use_nla and len(data.nla_tracks))
            or any(not driver.mute and bone_channel(driver.data_path)[0] is not None for driver in data.drivers)):
        return None
    fcurves = played_fcurves(armature)
    if fcurves is None:
        return None
    wanted = set(bones)
    curves, seen = {}, set()
    for fcurve in fcurves:
        bone, path = bone_channel(fcurve.data_path)
        index = fcurve.array_index
        if bone not in wanted:
            continue
        if path == "rotation_mode":
            return None
        if path not in ("location", ROTATIONS.get(armature.pose.bones[bone].rotation_mode, "rotation_euler"), "scale"):
            continue
        if (bone, path, index) in seen or not 0 <= index < SIZES[path]:
            return None
        seen.add((bone, path, index))
        keys = fcurve_keys(fcurve)
        if keys is None:
            return None
        if keys:
            curves.setdefault((bone, path), {})[index] = keys
    return curves
