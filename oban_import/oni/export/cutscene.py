"""A cutscene made in Blender back to the game (docs/cutscenes.md 11): the scene's timeline over
its frame range (tick t at frame start + t) as OBANs and a BSL function that plays them in step:
a camera OBAN for each shot (a span one camera is the scene's, markers bound to cameras
included), a box OBAN for each character armature's base (what chr_envanim, x RotX(+90°) from
frame 1, gives back), the TRAMs its NLA strips play (the TRAM export of those actions), an
OBAN for each placed object that moves, obj_create/obj_kill where one is shown or hidden, and
`NAME.bsl` scheduling them, the camera given back (cm_reset) at its end. Each OBAN is read back
and replayed by the importer's path against the scene at every tick before anything is written.
Above the kinds' exports: it runs the TRAM export for the strips' actions."""

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ...blender.compat import action_fcurves
from ...core.errors import ObanError
from ...core.output_files import FileJob, OutputFile, file_name, write_jobs
from ...core.report import Made, Report
from ..cutscene import CUTSCENE, CUTSCENE_CHARACTER
from ..engine.cutscene.play import ENVANIM_TURN
from ..engine.fit_keys import animation_from_matrices
from ..engine.frames import frame_matrices
from ..engine.rotations import relative_errors, split_rotation_scale
from ..engine.to_blender import blender_matrices, camera_matrices
from ..engine.to_oni import oni_camera_matrices, oni_matrices
from ..io.characters.properties import CHARACTER
from ..io.import_frame import import_frame
from ..io.oban.read import read_file
from ..io.oban.write import oni_file_bytes
from ..io.objects.properties import OBJECT_SCRIPT_ID
from .shared.motion import world_matrices
from .trams.action import described, tram_name
from .trams.export import export_actions

STEADY = 1e-6     # relative: a motion that changes less than this over the range stands still


@dataclass
class _Script:
    """The function's statements by tick, written out in order with sleeps between."""
    name: str
    lines: list = field(default_factory=list)   # (tick, order, text)

    def at(self, tick, text, order=0):
        self.lines.append((int(tick), order, text))

    def text(self, length) -> str:
        out, now = [f"# {self.name}: written by oban_import from a Blender scene, {length} ticks",
                    f"func void {self.name}(void)", "{"], 0
        for tick, _, text in sorted(self.lines, key=lambda line: line[:2]):
            if tick > now:
                out.append(f"\tsleep {tick - now}")
                now = tick
            out.append(f"\t{text}")
        out += [f"\tsleep {length - now}", "\tcm_reset", "}", ""]   # the camera given back after the last tick
        return "\n".join(out)


def cutscene_objects(objects):
    """What a cutscene export writes of: the cameras, character armatures and placed objects."""
    return [obj for obj in objects if obj.type == "CAMERA" or CHARACTER in obj or OBJECT_SCRIPT_ID in obj]


def export_cutscenes(context, objects, directory, settings) -> Report:
    """The scene's cutscene (settings.cutscene names its function) as OBAN files, TRAM files and
    NAME.bsl in `directory`: Made(path, what it holds, the object) each; nothing written when
    anything of it cannot be (each named in `errors`)."""
    scene = context.scene
    report, name = Report(unit="cutscenes", files=1), settings.cutscene or "cutscene"
    length = scene.frame_end - scene.frame_start + 1
    if length < 2:
        report.errors.append(f"scene '{scene.name}': a cutscene needs a frame range of 2 frames or more")
        return report
    frames = scene.frame_start + np.arange(length)
    script, jobs, played = _Script(name), [], []
    try:
        shots = _shots(scene, frames)
        chosen = [obj for obj in cutscene_objects(objects) if obj.type != "CAMERA"]
        cameras = list(dict.fromkeys(camera for camera, _, _ in shots))
        worlds = world_matrices(context, cameras + chosen, [frames] * (len(cameras) + len(chosen)))
        for world in worlds:
            if isinstance(world, ObanError):
                raise world
        by_object = dict(zip(cameras + chosen, worlds))
        for index, (camera, begin, end) in enumerate(shots):
            jobs.append(_camera_shot(camera, by_object[camera][begin:end], begin, index, name, settings, script))
        for obj in chosen:
            if obj.type == "ARMATURE":
                jobs += _character(obj, by_object[obj], name, settings, script, scene, played)
            else:
                jobs += _placed(obj, by_object[obj], name, settings, script, context, frames)
    except ObanError as error:
        report.errors.append(str(error))
        return report
    report.warnings += _not_carried(scene, cameras, chosen, context, frames)
    jobs.append(FileJob(scene, f"cutscene '{name}'", [OutputFile(f"{file_name(name)}.bsl", script.text(length),
                                                                  note=f"{length} ticks")]))
    for job, written in write_jobs(jobs, directory, report.errors, settings.replace_sources):
        report.made += [Made(file.path, file.item, job.source, note=file.file.note) for file in written]
    if not report.errors:
        report.add(_trams(context, played, directory, settings))
    report.counts = {"files": len(report.made)}
    return report


def _shots(scene, frames):
    """(camera, first tick, end tick) of each span one camera is the scene's: Blender's own rule,
    the camera of the last marker bound to one at or before the frame, else of the first such
    marker, else scene.camera."""
    bound = sorted(((m.frame, m.camera) for m in scene.timeline_markers if m.camera is not None),
                   key=lambda marker: marker[0])
    if bound:
        at = np.maximum(np.searchsorted([f for f, _ in bound], frames, side="right") - 1, 0)
    else:
        at, bound = np.zeros(len(frames), int), [(0, scene.camera)]
    if bound[0][1] is None:
        raise ObanError(f"scene '{scene.name}'", f"frame {frames[0]}: no camera (set the scene's camera or bind one "
                                                 "to a marker)")
    numbered = {}
    camera_of = np.array([numbered.setdefault(id(camera), len(numbered)) for _, camera in bound])[at]
    starts = np.flatnonzero(np.diff(camera_of, prepend=-1)).tolist()   # a shot a run of one camera
    return [(bound[at[t]][1], t, end) for t, end in zip(starts, starts[1:] + [len(frames)])]


def _word(text):
    """`text` as one word of a script: letters, digits and '_'."""
    return re.sub(r"\W", "_", text)


def _first_frame_twice(matrices):
    """OBAN frames for a span started by cm_anim/env_setanim/chr_envanim: frame 1 shows on the
    first tick, so frame 0 (never shown) repeats it."""
    return np.concatenate([matrices[:1], matrices])


def _oban_job(obj, label, name, matrices, flags, settings, replayed, note):
    """The file of an OBAN that replays `matrices` (engine space, frame by frame) within the
    tolerance, read back and replayed by `replayed` against the scene's own `check` matrices."""
    _, scale, shear = split_rotation_scale(matrices[:, :3, :3])
    if np.abs(scale - scale[0]).max() > STEADY * np.abs(scale[0]).max() or shear > 1e-5:
        raise ObanError(label, "its scale changes or shears over the cutscene: an OBAN holds one base")
    base = np.zeros(12, np.float32)
    base[[0, 4, 8]] = scale[0]
    animation, _ = animation_from_matrices(name, matrices, base, flags, tolerance=settings.tolerance)
    if animation.warnings:
        raise ObanError(label, f"{animation.warnings[0]}; nothing written")

    def check(path):
        back = read_file(path)[0]
        errors = relative_errors(replayed(frame_matrices(back)), replayed(matrices))
        if errors.max() > settings.tolerance:
            raise ObanError(label, f"{os.path.basename(path)} replays frame {int(errors.argmax())} off by "
                                   f"{errors.max():.3g}, more than the tolerance")
        return back
    return FileJob(obj, label, [OutputFile(f"OBAN{file_name(name)}.oni", oni_file_bytes(animation), check, note)])


def _camera_shot(camera, world, begin, index, name, settings, script):
    """A shot: `cm_anim both SHOT` on its first tick, the camera's view on each of its ticks."""
    label = f"camera '{camera.name}' (shot {index + 1})"
    scale, axes = import_frame(camera, label, settings.global_scale, settings.axes)
    _, size, _ = split_rotation_scale(world[:, :3, :3])
    if np.abs(size - 1.0).max() > 1e-4:
        raise ObanError(label, "a camera's scale the game's camera cannot have: set it to 1")
    shot = f"{name}_shot{index + 1:02d}"
    matrices = _first_frame_twice(oni_camera_matrices(world, axes, scale))
    script.at(begin, f"cm_anim both {shot}", order=0)
    return _oban_job(camera, label, shot, matrices, 0, settings,
                     lambda m: camera_matrices(m, axes, scale), f"{len(world)} ticks from tick {begin}")


def _character(armature, world, name, settings, script, scene, played):
    """A character armature: its base as a box OBAN that chr_envanim turns back (OBAN . RotX(+90°)
    = the base, from frame 1; it ends on frame F - 2, so two frames stand past the last tick), and
    each NLA strip as chr_animate on its tick."""
    label = f"armature '{armature.name}'"
    key = str(armature.get(CUTSCENE_CHARACTER) or _word(armature.name))
    scale, axes = import_frame(armature, label, settings.global_scale, settings.axes)
    base = oni_matrices(world, axes, scale)
    box = f"{name}_{_word(key)}_box"
    matrices = base @ np.linalg.inv(ENVANIM_TURN)
    matrices = np.concatenate([matrices[:1], matrices, matrices[-1:]])
    script.at(0, f"chr_envanim {key} {box}", order=1)
    jobs = [_oban_job(armature, label, box, matrices, 0, settings,
                      lambda m: blender_matrices(m @ ENVANIM_TURN, axes, scale), f"{len(world)} ticks")]
    for tick, action, frames in _strips(armature, scene, label):
        tram = tram_name(action, described(action, f"action '{action.name}'"), f"action '{action.name}'")
        script.at(tick, f"chr_animate {key} {tram}" + (f" {frames}" if frames else ""), order=2)
        played.append((armature, action))
    return jobs


def _strips(armature, scene, label):
    """(tick, action, ticks asked or None) of each run of the armature's NLA strips: a run of
    strips of one action back to back is one chr_animate asked for its ticks."""
    strips = sorted((s for track in (armature.animation_data.nla_tracks if armature.animation_data else ())
                     if not track.mute for s in track.strips if not s.mute and s.action is not None),
                    key=lambda s: s.frame_start)
    runs = []
    for strip in strips:
        tick = int(round(strip.frame_start)) - scene.frame_start
        ticks = int(round(strip.frame_end - strip.frame_start)) + 1
        if runs and runs[-1][1] is strip.action and runs[-1][0] + runs[-1][2] == tick:
            runs[-1][2] += ticks
            runs[-1][3] = True
        else:
            runs.append([tick, strip.action, ticks, False])
    return [(tick, action, ticks if repeated else None) for tick, action, ticks, repeated in runs]


def _placed(obj, world, name, settings, script, context, frames):
    """A placed object: `env_setanim ID OBAN` on tick 0 where it moves, obj_create/obj_kill where
    it is shown or hidden."""
    label = f"object '{obj.name}'"
    script_id = int(obj[OBJECT_SCRIPT_ID])
    hidden = _hidden(obj, context, frames)
    scale, axes = import_frame(obj, label, settings.global_scale, settings.axes)
    engine = oni_matrices(world, axes, scale)
    moves = (relative_errors(engine, np.repeat(engine[:1], len(engine), axis=0)) > STEADY).any()
    if not moves and not hidden.any() and CUTSCENE not in obj:
        return []   # a placed object the cutscene leaves as the level has it
    changes = np.flatnonzero(np.diff(hidden.astype(np.int8))) + 1
    for tick in [0] + changes.tolist():   # it exists from obj_create (docs/cutscenes.md 4.1)
        if tick or not hidden[0]:
            script.at(tick, f"obj_{'kill' if hidden[tick] else 'create'} {script_id}", order=-1)
    if not moves:
        return []
    animation = f"{name}_{script_id}_{_word(obj.name)}"
    script.at(0, f"env_setanim {script_id} {animation}", order=3)
    return [_oban_job(obj, label, animation, _first_frame_twice(engine), 0, settings,
                      lambda m: blender_matrices(m, axes, scale), f"{len(world)} ticks")]


def _not_carried(scene, cameras, chosen, context, frames) -> list:
    """What the scene shows that this export does not write yet, each named (docs/cutscenes.md 11.6)."""
    said = [f"camera '{c.name}': its field of view ({c.data.angle_y * 180 / np.pi:.4g}° vertical) is not carried: "
            "the game's camera has 45°" for c in cameras if abs(c.data.angle_y - np.pi / 4) > 1e-4]
    said += [f"armature '{a.name}': its showing and hiding (keys of hide_viewport) is not carried" for a in chosen
             if a.type == "ARMATURE" and _hidden(a, context, frames).any()]
    said += [f"object '{o.name}': its modifier '{m.name}' (env_show) is not carried" for o in scene.objects
             for m in o.modifiers if m.name.startswith("hide script id")]
    unbound = [m.name for m in scene.timeline_markers if m.camera is None]
    if unbound:
        said.append(f"scene '{scene.name}': {len(unbound)} markers (dialogue, screen and what the game alone knows: "
                    f"'{unbound[0]}' ...) are not written as commands")
    return said


def _hidden(obj, context, frames):
    """Whether the object is hidden (hide_viewport) on each frame: its keys' value at or before
    the frame (they hold: a boolean's keys are constant), else as it is."""
    action = obj.animation_data.action if obj.animation_data else None
    curve = next((c for c in (action_fcurves(action, obj) if action is not None else ())
                  if c.data_path == "hide_viewport"), None)
    if curve is None or not len(curve.keyframe_points):
        return np.full(len(frames), bool(obj.hide_viewport))
    keys = np.empty(2 * len(curve.keyframe_points), np.float32)
    curve.keyframe_points.foreach_get("co", keys)
    at = np.maximum(np.searchsorted(keys[0::2], frames, side="right") - 1, 0)
    return keys[1::2][at] >= 0.5


def _trams(context, played, directory, settings) -> Report:
    """The TRAMs the strips play, (armature, action) each, by the TRAM export."""
    if not played:
        return Report()
    return export_actions(context, list(dict.fromkeys(played)), directory, _TramSettings(settings))


@dataclass
class _TramSettings:
    of: object

    def __getattr__(self, name):
        own = {"character_format": "oni", "character_actions": "ALL", "character_tolerance": 1e-3}
        return own[name] if name in own else getattr(self.of, name)
