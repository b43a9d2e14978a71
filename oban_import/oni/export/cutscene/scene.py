"""What a cutscene export reads of the scene besides motion (docs/cutscenes.md 11): its shots
(Blender's rule of markers bound to cameras), what is shown and hidden (keyed booleans), the
characters' NLA strips, the environment's env_show modifiers and the markers."""

import numpy as np

from ....blender.compat import action_fcurves
from ....core.errors import ObanError
from ..trams.action import described, tram_name

HIDE_QUADS = "hide script id "   # the import's env_show modifier, `HIDE_QUADS<id>`: on where the quads are hidden


def shots(scene, frames):
    """(camera, first tick, end tick) of each span one camera is the scene's: Blender's own rule,
    the camera of the last marker bound to one at or before the frame, else of the first such
    marker, else scene.camera. Two markers bound on one frame are refused."""
    bound = sorted(((m.frame, m.camera, m.name) for m in scene.timeline_markers if m.camera is not None),
                   key=lambda marker: marker[0])
    for (frame, first, one), (again, second, other) in zip(bound, bound[1:]):
        if frame == again and first != second:
            raise ObanError(f"scene '{scene.name}'", f"frame {frame}: markers '{one}' and '{other}' bind two cameras "
                                                     "(the game shows one camera a tick): move or unbind one")
    if bound:
        at = np.maximum(np.searchsorted([f for f, _, _ in bound], frames, side="right") - 1, 0)
    else:
        at, bound = np.zeros(len(frames), int), [(0, scene.camera, "")]
    if bound[0][1] is None:
        raise ObanError(f"scene '{scene.name}'", f"frame {frames[0]}: no camera (set the scene's camera or bind one "
                                                 "to a marker)")
    numbered = {}
    camera_of = np.array([numbered.setdefault(id(camera), len(numbered)) for _, camera, _ in bound])[at]
    starts = np.flatnonzero(np.diff(camera_of, prepend=-1)).tolist()   # a shot a run of one camera
    return [(bound[at[t]][1], t, end) for t, end in zip(starts, starts[1:] + [len(frames)])]


def switched(owner, path, now, frames):
    """A keyed boolean of `owner` (an object, or a modifier of `owner.id_data`) on each frame:
    its key at or before the frame (a boolean's keys hold), else `now`."""
    obj = owner.id_data
    action = obj.animation_data.action if obj.animation_data else None
    full = path if owner is obj else owner.path_from_id(path)
    curve = next((c for c in (action_fcurves(action, obj) if action is not None else ()) if c.data_path == full),
                 None)
    if curve is None or not len(curve.keyframe_points):
        return np.full(len(frames), bool(now))
    keys = np.empty(2 * len(curve.keyframe_points), np.float32)
    curve.keyframe_points.foreach_get("co", keys)
    at = np.maximum(np.searchsorted(keys[0::2], frames, side="right") - 1, 0)
    return keys[1::2][at] >= 0.5


def changed(switch) -> np.ndarray:
    """The ticks where a (T,) boolean changes from the tick before."""
    return np.flatnonzero(np.diff(switch.astype(np.int8))) + 1


def hidden(obj, frames):
    """(T,) whether the object is hidden (hide_viewport) on each frame."""
    return switched(obj, "hide_viewport", obj.hide_viewport, frames)


def quads_hidden(objects, frames) -> dict:
    """{script id: (T,) whether its quads are hidden} of the env_show modifiers of `objects`."""
    found = {}
    for obj in objects:
        for modifier in obj.modifiers if obj.type == "MESH" else ():
            script_id = modifier.name[len(HIDE_QUADS):]
            if modifier.name.startswith(HIDE_QUADS) and script_id.lstrip("-").isdigit():
                found.setdefault(int(script_id), switched(modifier, "show_viewport", modifier.show_viewport, frames))
    return found


def strips(armature, start, said):
    """(tick, action, TRAM name, ticks asked or None) of each run of the armature's NLA strips (tick
    0 at scene frame `start`): a run of strips of one action back to back is one chr_animate
    asked for its ticks. Strips that overlap, blend or are scaled are refused (the engine
    plays one TRAM at a time, from frame 1, a frame a tick); one that begins elsewhere than on
    its action's frame 1 (the frame after its first key: chr_animate shows frame 1 on its tick)
    is written as chr_animate on its tick, and said in `said`."""
    label = f"armature '{armature.name}'"
    found = sorted((s for track in (armature.animation_data.nla_tracks if armature.animation_data else ())
                    if not track.mute for s in track.strips if not s.mute and s.action is not None),
                   key=lambda s: s.frame_start)
    for strip, after in zip(found, found[1:]):
        if after.frame_start < strip.frame_end:
            raise ObanError(label, f"strips '{strip.name}' and '{after.name}' overlap (frames {after.frame_start:g} "
                                   f"to {strip.frame_end:g}): the engine plays one TRAM at a time, and does not blend "
                                   "them")
    for strip in found:
        if strip.blend_in or strip.blend_out or strip.scale != 1 or strip.repeat != 1 or strip.influence < 1 and \
                strip.use_animated_influence:
            raise ObanError(label, f"strip '{strip.name}': blended, scaled or repeated; the engine plays a TRAM a "
                                   "frame a tick, whole (cut the strip, or a strip a round)")
    for strip in found:
        first = strip.action.frame_range[0] + 1
        if abs(strip.action_frame_start - first) > 1e-3 and strip.action.frame_range[1] > first - 1:
            said.append(f"{label}: strip '{strip.name}' begins on its action's frame {strip.action_frame_start:g}, "
                        f"the game on its frame 1 ({first:g}, the frame after its first key): written as "
                        f"chr_animate on frame {strip.frame_start:g}, the game shows the TRAM from its frame 1 there")
    runs = []
    for strip in found:
        tick = int(round(strip.frame_start)) - start
        ticks = int(round(strip.frame_end - strip.frame_start)) + 1
        if runs and runs[-1][1] is strip.action and runs[-1][0] + runs[-1][2] == tick:
            runs[-1][2] += ticks
            runs[-1][3] = True
        else:
            runs.append([tick, strip.action, ticks, False])
    names = {action: tram_name(action, described(action, f"action '{action.name}'"), f"action '{action.name}'")
             for action in dict.fromkeys(run[1] for run in runs)}
    return [(tick, action, names[action], ticks if repeated else None) for tick, action, ticks, repeated in runs]
