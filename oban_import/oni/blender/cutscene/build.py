"""A cutscene in Blender (docs/cutscenes.md, "In Blender"): the level as its import makes
it, then on one timeline (tick t at scene frame start + t): the scene's camera keyed on every
tick where the engine's camera is, each character the function moves as an armature whose
object carries its base on every tick and whose bones play the TRAMs in NLA strips at their
ticks, each scripted object keyed on every tick, shown and hidden in step, and a marker for
each dialogue line, screen effect and statement the game alone could tell."""

import bpy
import numpy as np

from ....blender import compat
from ....core.errors import ObanError
from ....core.report import Made, Report
from ...cutscene import Cutscene, plan_cutscene
from ...engine import to_blender
from ...io.objects.properties import OBJECT_SCRIPT_ID, OBJECT_SETUP
from ..characters.build import import_character
from ..importer import import_files
from ..oban.actions import animate
from ..oban.cameras import new_camera
from ..shared.blocks import SharedBlocks
from ..shared.empties import new_empty

CUTSCENE = "oni_cutscene"          # on what the cutscene made: the function's name


def import_cutscene(context, level, function, settings, scripts=None, classes=None, progress=None) -> Report:
    """The level `level` (a .dat) as its import makes it and `function` of its scripts played on
    the scene's timeline; nothing made when the scripts, the function or a name it needs fail."""
    try:
        cutscene = plan_cutscene(level, function, scripts, classes)
    except ObanError as error:
        return Report(files=1, errors=[str(error)])
    result = import_files(context, [level], settings, progress)
    if result.errors:
        return result
    collection = bpy.data.collections.new(f"{function} (cutscene)")
    context.scene.collection.children.link(collection)
    shared = SharedBlocks(settings)
    result.made.append(Made(level, cutscene, _camera(context, cutscene, settings, collection)))
    result.add(_characters(context, cutscene, settings, collection, shared))
    _objects(cutscene, settings, [m.block for m in result.made if m.block is not None])
    _markers(context.scene, cutscene, settings)
    result.notes += _report(cutscene)
    scene = context.scene
    scene.frame_start, scene.frame_end = settings.frame_start, settings.frame_start + cutscene.tracks.length - 1
    result.last_frame = scene.frame_end
    return result


def _keys(obj, name, matrices, settings):
    """Location, rotation and scale keyed on every tick from Blender matrices (T, 4, 4)."""
    animate(obj, name, to_blender.decompose(matrices), settings, None)


def _camera(context, cutscene, settings, collection):
    camera = new_camera(f"{cutscene.function} camera", settings.global_scale)
    collection.objects.link(camera)
    camera[CUTSCENE] = cutscene.function
    matrices = to_blender.camera_matrices(cutscene.tracks.camera, settings.axes, settings.global_scale)
    camera.rotation_mode = "QUATERNION"
    _keys(camera, camera.name, matrices, settings)
    context.scene.camera = camera
    return camera


def _characters(context, cutscene, settings, collection, shared) -> Report:
    result = Report(last_frame=settings.frame_start)
    tracks = cutscene.tracks
    for key, character in cutscene.characters.items():
        if character is None:
            rig = new_empty(f"character {key}", settings.global_scale)
            collection.objects.link(rig)
            result.warnings.append(f"{cutscene.level}: character {key}: its class is not found: an Empty stands "
                                   "for it")
            actions = {}
        else:
            chosen = [cutscene.trams[name] for _, name, _ in tracks.actions[key] if name in cutscene.trams]
            made = import_character(context, character, character.source or cutscene.level, settings, collection,
                                    shared, list({t.name: t for t in chosen}.values()))
            result.add(made)
            rig = made.made[0].block
            actions = {m.item.name: m.block for m in made.made[1:]}
        rig[CUTSCENE] = cutscene.function
        rig.rotation_mode = "QUATERNION"
        _keys(rig, f"{rig.name} base", to_blender.blender_matrices(tracks.bases[key], settings.axes,
                                                                    settings.global_scale), settings)
        _strips(rig, tracks.actions[key], actions, settings)
        _shown(rig, tracks.shown[key], settings)
    return result


def _strips(rig, played, actions, settings):
    """The TRAMs a character plays, one NLA strip each from its tick, cut where the next begins."""
    played = [(tick, actions[name], frames) for tick, name, frames in played if name in actions]
    if not played:
        return
    track = rig.animation_data.nla_tracks.new()
    track.name = "TRAMs"
    for index, (tick, action, frames) in enumerate(played):
        strip = track.strips.new(action.name, int(settings.frame_start + tick), action)
        strip.extrapolation = "HOLD_FORWARD" if index else "HOLD"
        if index + 1 < len(played):
            length = played[index + 1][0] - tick
            strip.action_frame_end = min(strip.action_frame_end, strip.action_frame_start + length - 1) \
                if length > 1 else strip.action_frame_start + 0.5
            strip.frame_end = strip.frame_start + (strip.action_frame_end - strip.action_frame_start)


def _objects(cutscene, settings, blocks):
    """Each scripted placed object (by its script id and setup index) keyed on every tick."""
    by_setup = {(obj.get(OBJECT_SCRIPT_ID), obj.get(OBJECT_SETUP)): obj for obj in blocks
                if isinstance(obj, bpy.types.Object) and OBJECT_SCRIPT_ID in obj}
    for key, matrices in cutscene.tracks.objects.items():
        obj = by_setup.get(key)
        if obj is None:
            continue
        world = obj.matrix_world.copy()
        obj.parent = None
        obj.matrix_world = world
        if obj.animation_data:
            obj.animation_data.action = None
        obj.rotation_mode = "QUATERNION"
        obj[CUTSCENE] = cutscene.function
        _keys(obj, f"{obj.name} ({cutscene.function})",
              to_blender.blender_matrices(matrices, settings.axes, settings.global_scale), settings)
        _shown(obj, cutscene.tracks.objects_shown[key], settings)


def _shown(obj, shown, settings):
    """hide_viewport and hide_render keyed where `shown` (T,) changes (CONSTANT)."""
    changes = np.flatnonzero(np.diff(shown.astype(np.int8))) + 1
    if shown.all():
        return
    ticks = np.concatenate([[0], changes])
    hidden = (~shown[ticks]).astype(np.float32)
    action = obj.animation_data.action if obj.animation_data else None
    fcurves = [action.fcurves.new(path) for path in ("hide_viewport", "hide_render")] if action is not None else []
    for fcurve in fcurves:
        compat.fill_fcurves([fcurve], (settings.frame_start + ticks).astype(np.float32), hidden[:, None], "CONSTANT")


def _markers(scene, cutscene, settings):
    for marker in cutscene.timeline.markers:
        scene.timeline_markers.new(marker.text[:63], frame=int(settings.frame_start + marker.tick))


def _report(cutscene: Cutscene) -> list:
    timeline, level = cutscene.timeline, cutscene.level
    notes = [f"{level}: {timeline.function}: {timeline.length} ticks"]
    notes += [f"{level}: tick {tick}: {kind.upper()} {name} is not in the level ({where})"
              for tick, kind, name, where in timeline.missing]
    notes += [f"{level}: tick {m.tick}: {m.text}: not known without the game ({m.where})" for m in timeline.unknown]
    notes += [f"{level}: {note}" for note in timeline.notes]
    if timeline.ignored:
        notes.append(f"{level}: run, with no effect the import shows: " +
                     ", ".join(f"{name} x{count}" for name, count in sorted(timeline.ignored.items())))
    return notes
