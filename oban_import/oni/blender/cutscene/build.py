"""A cutscene in Blender (docs/cutscenes.md, "In Blender"): the level as its import makes
it, then on one timeline (tick t at scene frame start + t): the scene's camera keyed on every
tick where the engine's camera is, each character the function moves as an armature whose
object carries its base on every tick and whose bones play the TRAMs in NLA strips at their
ticks, each scripted object keyed on every tick, shown and hidden in step, and a marker for
each dialogue line, screen effect and statement the game alone could tell."""

import os

import bpy
import numpy as np

from ....blender.datablocks import Snapshot, block_counts
from ....core.errors import ObanError
from ....core.report import Made, Report
from ...cutscene import (CUTSCENE, CUTSCENE_CHARACTER, CUTSCENE_LEVEL, CUTSCENE_SCRIPTS, CUTSCENE_START, Cutscene,
                         plan_cutscene)
from ...engine import to_blender
from ...io.oban.properties import PIVOT
from ...io.objects.properties import OBJECT_SCRIPT_ID, OBJECT_SETUP
from ..characters.build import import_character
from ..importer import import_files
from ..oban.actions import animate
from ..oban.cameras import new_camera
from ..shared.blocks import SharedBlocks
from ..shared.empties import new_empty
from .quads import hide_quads


def import_cutscene(context, level, function, settings, scripts=None, classes=None, progress=None) -> Report:
    """The level `level` (a .dat) as its import makes it and `function` of its scripts played on
    the scene's timeline; nothing made when the scripts, the function or a name it needs fail.
    `classes`: a character class for a character of the script, or ("" ->) any the level does
    not give one."""
    try:
        cutscene = plan_cutscene(level, function, scripts, classes)
    except ObanError as error:
        return Report(files=1, errors=[str(error)])
    before, snapshot = block_counts(), Snapshot()
    result = import_files(context, [level], settings, progress, level_alone=True)
    if result.errors:
        return result
    try:
        _build(context, cutscene, settings, result)
    except Exception as error:   # a bug, not bad input: nothing of the level or the cutscene is left
        snapshot.remove()
        result.made = []
        result.errors.append(f"{level}: {function}: could not be played: {error!r}")
    result.counts = block_counts(since=before)
    return result


def _build(context, cutscene, settings, result):
    level = cutscene.level
    collection = bpy.data.collections.new(f"{cutscene.function} (cutscene)")
    context.scene.collection.children.link(collection)
    shared = SharedBlocks(settings)
    result.made.append(Made(level, cutscene, _camera(context, cutscene, settings, collection)))
    result.add(_characters(context, cutscene, settings, collection, shared))
    blocks = [m.block for m in result.made if isinstance(m.block, bpy.types.Object)]
    _objects(cutscene, settings, blocks)
    lacking = hide_quads(blocks, cutscene.quads, cutscene.tracks.quads_shown, settings.frame_start)
    result.warnings += [f"{level}: env_show {script_id}: the environment has no quads of that script id"
                        for script_id in lacking]
    _markers(context.scene, cutscene, settings)
    result.notes += _report(cutscene)
    scene = context.scene
    scene.frame_start, scene.frame_end = settings.frame_start, settings.frame_start + cutscene.tracks.length - 1
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = settings.fps, 1.0
    result.last_frame = scene.frame_end


def _keys(obj, name, matrices, settings):
    """Location and rotation keyed on every tick from Blender matrices (T, 4, 4), and the scale
    where it changes (else the object's own)."""
    transforms = to_blender.decompose(matrices)
    animate(obj, name, transforms, settings, None, scale_keys=bool((transforms.scale != transforms.scale[0]).any()))


def _camera(context, cutscene, settings, collection):
    camera = new_camera(f"{cutscene.function} camera", settings.global_scale)
    collection.objects.link(camera)
    camera[CUTSCENE] = cutscene.function
    camera[CUTSCENE_LEVEL], camera[CUTSCENE_SCRIPTS] = os.path.abspath(cutscene.level), os.path.abspath(cutscene.scripts)
    camera[CUTSCENE_START] = settings.frame_start
    matrices = to_blender.camera_matrices(cutscene.tracks.camera, settings.axes, settings.global_scale)
    camera.rotation_mode = settings.rotation_mode
    _keys(camera, camera.name, matrices, settings)
    context.scene.camera = camera
    return camera


def _characters(context, cutscene, settings, collection, shared) -> Report:
    result = Report(last_frame=settings.frame_start)
    tracks = cutscene.tracks
    by_class = {}   # a class's TRAM actions, one set shared by its characters as the game shares its TRAMs
    for key, character in cutscene.characters.items():
        if character is None:
            rig = new_empty(f"character {key}", settings.global_scale)
            collection.objects.link(rig)
            result.warnings.append(f"{cutscene.level}: character {key}: its class is not found: an Empty stands "
                                   "for it (Character Class, --character-class, names one)")
            actions = {}
        else:
            actions = by_class.setdefault(id(character), {})
            chosen = {name: cutscene.trams[name] for _, name, _ in tracks.actions[key]
                      if name in cutscene.trams and name not in actions}
            made = import_character(context, character, character.source or cutscene.level, settings, collection,
                                    shared, list(chosen.values()))
            result.add(made)
            rig = made.made[0].block
            actions.update({m.item.name: m.block for m in made.made[1:]})
        rig[CUTSCENE] = cutscene.function
        rig[CUTSCENE_CHARACTER] = key
        rig.rotation_mode = settings.rotation_mode
        _keys(rig, f"{rig.name} base", to_blender.blender_matrices(tracks.bases[key], settings.axes,
                                                                    settings.global_scale), settings)
        _strips(rig, tracks.actions[key], actions, settings)
        _shown(rig, tracks.shown[key], settings)
    return result


def _strips(rig, played, actions, settings):
    """The TRAMs a character plays as NLA strips (docs/cutscenes.md 3.4): TRAM frame 1 on the
    tick of chr_animate, one a tick to its last frame, which holds; with a frame count N, frames
    1 .. F - 1 round and round for N ticks (a strip a round), the frame shown then held; each
    cut where the next begins. A strip ends on its last tick: none touches the next."""
    played = [(tick, actions[name], frames) for tick, name, frames in played if name in actions]
    if not played:
        return
    track = rig.animation_data.nla_tracks.new()
    track.name = "TRAMs"
    for index, (tick, action, asked) in enumerate(played):
        frames = action_length(action)
        period = max(frames - 1, 1)        # ticks of frames 1 .. F - 1 (a one-frame TRAM: its frame)
        length = asked if asked and asked > 0 else period
        if index + 1 < len(played):
            length = min(length, played[index + 1][0] - tick)
        first = settings.frame_start + (1 if frames > 1 else 0)
        for start in range(0, max(length, 0), period):
            shown = min(period, length - start)
            strip = track.strips.new(action.name, int(settings.frame_start + tick + start), action)
            strip.action_frame_start = first
            strip.action_frame_end = first + (shown - 1 if shown > 1 else 0.5)
            strip.extrapolation = "HOLD_FORWARD" if len(track.strips) > 1 else "HOLD"


def action_length(action) -> int:
    """The frames of a TRAM's action (its keys' span + 1)."""
    start, end = action.frame_range
    return int(round(end - start)) + 1


def _objects(cutscene, settings, blocks):
    """Each scripted placed object (by its script id and setup index) keyed on every tick."""
    by_setup = {(obj.get(OBJECT_SCRIPT_ID), obj.get(OBJECT_SETUP)): obj for obj in blocks
                if isinstance(obj, bpy.types.Object) and OBJECT_SCRIPT_ID in obj}
    for key, matrices in cutscene.tracks.objects.items():
        obj = by_setup.get(key)
        if obj is None:
            continue
        _keyed_alone(obj)
        obj.rotation_mode = settings.rotation_mode
        obj[CUTSCENE] = cutscene.function
        _keys(obj, f"{obj.name} ({cutscene.function})",
              to_blender.blender_matrices(matrices, settings.axes, settings.global_scale), settings)
        _shown(obj, cutscene.tracks.objects_shown[key], settings)


def _keyed_alone(obj):
    """A placed object the cutscene keys: its own action, and the import's pivot that moved it,
    taken away (with what no one else uses)."""
    pivot = obj.parent if obj.parent is not None and PIVOT in obj.parent else None
    world = obj.matrix_world.copy()
    obj.parent = None
    obj.matrix_world = world
    for owner in (obj, pivot):
        action = owner.animation_data.action if owner is not None and owner.animation_data else None
        if action is not None:
            owner.animation_data.action = None
            if action.users == 0:
                bpy.data.actions.remove(action)
    if pivot is not None and not pivot.children:
        bpy.data.objects.remove(pivot)


def _shown(obj, shown, settings):
    """hide_viewport and hide_render keyed where `shown` (T,) changes (a key a change, few)."""
    if shown.all():
        return
    for tick in np.concatenate([[0], np.flatnonzero(np.diff(shown.astype(np.int8))) + 1]).tolist():
        obj.hide_viewport = obj.hide_render = not bool(shown[tick])
        for path in ("hide_viewport", "hide_render"):
            obj.keyframe_insert(path, frame=settings.frame_start + tick)


def _markers(scene, cutscene, settings):
    for marker in cutscene.timeline.markers:
        scene.timeline_markers.new(marker.text[:63], frame=int(settings.frame_start + marker.tick))


def _report(cutscene: Cutscene) -> list:
    timeline, level = cutscene.timeline, cutscene.level
    notes = [f"{level}: {timeline.function}: {timeline.length} ticks"]
    notes += [f"{level}: tick {tick}: {kind.upper()} {name} is not in the level ({where})"
              for tick, kind, name, where in timeline.missing]
    notes += [f"{level}: tick {m.tick}: {m.text}: not known without the game ({m.where})" for m in timeline.unknown]
    notes += [f"{level}: {note}" for note in timeline.notes] + [f"{level}: {note}" for note in cutscene.notes]
    if timeline.ignored:
        notes.append(f"{level}: run, with no effect the import shows: " +
                     ", ".join(f"{name} x{count}" for name, count in sorted(timeline.ignored.items())))
    return notes
