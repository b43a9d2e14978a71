"""A cutscene made in Blender back to the game (docs/cutscenes.md 11): the scene's timeline over
its frame range (tick t at frame start + t) as OBANs, TRAMs and a BSL function that plays them
in step. The camera's shots (a span one camera is the scene's, markers bound to cameras
included), each character armature's base (a box OBAN chr_envanim turns back) and NLA strips
(chr_animate, the TRAM export of their actions), each placed object that moves (env_setanim)
or is shown and hidden (obj_create/obj_kill), env_show's modifiers, characters shown and hidden
(ai2_spawn/chr_create, chr_delete), markers that read as statements; `NAME.bsl` ends giving the
camera back (cm_reset). A scene imported from a cutscene keeps what it still plays as it was
(reuse.py): those statements again, their OBANs as read; the rest is fitted anew. Every OBAN
written is read back and replayed, and the whole script played again by the import's own
path against the scene on every tick, before anything is written."""

import os
from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ....core.output_files import FileJob, OutputFile, file_name, write_jobs
from ....core.report import Made, Report
from ...cutscene import CUTSCENE, CUTSCENE_CHARACTER, CUTSCENE_LEVEL, CUTSCENE_SCRIPTS, CUTSCENE_START, plan_cutscene
from ...engine.cutscene.play import ENVANIM_TURN
from ...engine.fit_keys import animation_from_matrices
from ...engine.frames import frame_matrices
from ...engine.rotations import relative_errors, split_rotation_scale
from ...engine.to_blender import blender_matrices, camera_matrices
from ...io.oban.read import read_file
from ...io.oban.write import oni_file_bytes
from ...io.objects.properties import OBJECT_SCRIPT_ID, OBJECT_SETUP
from ..shared.as_read import AS_READ
from ..shared.motion import base_matrix
from ..trams.export import export_actions
from .reuse import Piece, anew, base_starts, camera_starts, object_starts, pieces
from .scene import changed, quads_hidden, strips
from .script import Script, marker_statement, word
from .take import Take, character_key

STEADY = 1e-6     # relative: a motion that changes less than this over the range stands still


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
    try:
        took = Take(context, objects, settings)
        original = _original(took, report.notes)
        written = _Written(took, name, original, set())
        if original is not None:
            differs = _replay_differs(took, written, original)
            if differs:   # a kept span played on from one written anew differently: those tracks anew
                report.notes.append(f"written anew, as what was kept would not play as the scene does: "
                                    f"{', '.join(map(_track_name, differs))}")
                written = _Written(took, name, original, set(differs))
                differs = _replay_differs(took, written, original)
            if differs:
                raise ObanError(f"cutscene '{name}'", f"the script written would not play {_track_name(differs[0])} "
                                                      "as the scene does; nothing written")
    except ObanError as error:
        report.errors.append(str(error))
        return report
    report.warnings += took.not_carried() + written.said
    jobs = written.jobs + [FileJob(scene, f"cutscene '{name}'", [OutputFile(
        f"{file_name(name)}.bsl", written.text, note=f"{length} ticks, {written.kept} statements kept")])]
    for job, done in write_jobs(jobs, directory, report.errors, settings.replace_sources):
        report.made += [Made(file.path, file.item, job.source, note=file.file.note) for file in done]
    if not report.errors and written.played:
        report.add(export_actions(context, list({action: (armature, action) for armature, action in
                                                 written.played}.values()), directory, _TramSettings(settings)))
    report.counts = {"files": len(report.made)}
    return report


@dataclass
class _Original:
    """The cutscene the scene was imported from, played again (oni.cutscene.plan_cutscene)."""
    cutscene: object
    level: str
    camera: object      # the camera the import made


def _original(took, notes):
    """The cutscene the scene was imported from (its camera says where), or None (notes why)."""
    scene = took.scene
    camera = next((obj for obj in scene.objects if obj.type == "CAMERA" and CUTSCENE_LEVEL in obj), None)
    if camera is None:
        return None
    level, scripts, function = (str(camera.get(key, "")) for key in (CUTSCENE_LEVEL, CUTSCENE_SCRIPTS, CUTSCENE))
    if camera.get(CUTSCENE_START, scene.frame_start) != scene.frame_start:
        notes.append(f"camera '{camera.name}': the timeline starts at another frame than the import's: everything "
                     "written anew")
        return None
    if not (os.path.isfile(level) and os.path.exists(scripts)):
        notes.append(f"camera '{camera.name}': {function} was imported from {level}, not found here: everything "
                     "written anew")
        return None
    try:
        return _Original(plan_cutscene(level, function, scripts), level, camera)
    except ObanError as error:
        notes.append(f"camera '{camera.name}': {function} cannot be played again ({error}): everything written anew")
        return None


class _Written:
    """The script and the OBAN files of a take: what the original still plays kept, the rest
    fitted (`fresh`: the tracks to write anew whatever the original)."""

    def __init__(self, took, name, original, fresh):
        self.took, self.name, self.original, self.fresh = took, name, original, fresh
        self.script, self.jobs, self.played, self.obans, self.kept, self.said = Script(name), [], [], {}, 0, []
        self._camera()
        for armature in took.armatures:
            self._character(armature)
        for obj in took.placed:
            self._placed(obj)
        self._quads()
        self._markers()
        self.text = self.script.text(took.length)

    def _pieces(self, track, scene, starts, hidden_on=None):
        """The track's pieces: kept where the original still plays them (or nothing is shown:
        `hidden_on`), else all anew."""
        original = self.original
        if original is None or track in self.fresh or starts is None:
            return anew(self.took.length)
        played = original.cutscene.tracks
        wanted = played.camera if track == "camera" else \
            (played.bases if track[0] == "base" else played.objects).get(track[1])
        if wanted is None:
            return anew(self.took.length)
        same = np.zeros(self.took.length, bool)
        n = min(len(wanted), self.took.length)
        same[:n] = relative_errors(wanted[:n], scene[:n]) < AS_READ
        if hidden_on is not None:   # Blender does not evaluate a hidden object: its matrix there is stale
            same |= hidden_on
        return pieces(same, starts, self.took.length)

    def _fresh(self, pieces_, kind, obj) -> list:
        """The pieces to write anew; the kept ones' statements and OBANs (as read) written."""
        for piece in pieces_:
            if piece.statement is not None:
                self._kept(piece, kind, obj)
        return [piece for piece in pieces_ if piece.statement is None]

    def _kept(self, piece, kind, obj):
        if piece.statement:
            self.script.at(piece.begin, piece.statement, kind)
            self.kept += 1
        if piece.oban and piece.oban not in self.obans:
            animation = self.original.cutscene.obans[piece.oban]
            self.obans[piece.oban] = animation
            self.jobs.append(FileJob(obj, f"OBAN {piece.oban} (as read)", [OutputFile(
                f"OBAN{file_name(piece.oban)}.oni", oni_file_bytes(animation), lambda path: read_file(path)[0],
                "as read")]))

    def _new(self, obj, label, oban, matrices, replayed, note):
        """A fitted OBAN `oban` replaying `matrices` (engine space), read back and replayed by
        `replayed` against the scene's own, within the tolerance."""
        settings = self.took.settings
        animation, _ = animation_from_matrices(oban, matrices, base_matrix(matrices, label, STEADY), 0,
                                               tolerance=settings.tolerance)
        if animation.warnings:
            raise ObanError(label, f"{animation.warnings[0]}; nothing written")

        def check(path):
            back = read_file(path)[0]
            errors = relative_errors(replayed(frame_matrices(back)), replayed(matrices))
            if errors.max() > settings.tolerance:
                raise ObanError(label, f"{os.path.basename(path)} replays frame {int(errors.argmax())} off by "
                                       f"{errors.max():.3g}, more than the tolerance")
            return back
        self.obans[oban] = animation
        self.jobs.append(FileJob(obj, label, [OutputFile(f"OBAN{file_name(oban)}.oni", oni_file_bytes(animation),
                                                         check, note)]))

    def _camera(self):
        took, original = self.took, self.original
        starts = camera_starts(original.cutscene.timeline.camera, took.length,
                               lambda n: n in original.cutscene.obans) if original else None
        count = 0
        for piece in self._fresh(self._pieces("camera", took.camera, starts), "camera",
                                 original.camera if original else None):
            for camera, begin, end in took.shots:   # anew: a shot OBAN for each camera's span in the piece
                begin, end = max(begin, piece.begin), min(end, piece.end)
                if begin >= end:
                    continue
                count += 1
                scale, axes = took.frame[camera]
                shot = f"{self.name}_shot{count:02d}"
                self.script.at(begin, f"cm_anim both {shot}", "camera")
                self._new(camera, f"camera '{camera.name}' (shot {count})", shot,
                          _first_frame_twice(took.camera[begin:end]), lambda m: camera_matrices(m, axes, scale),
                          f"{end - begin} ticks from tick {begin}")

    def _character(self, armature):
        """Its base: kept, or box OBANs that chr_envanim turns back (OBAN . RotX(+90°) = the base,
        from frame 1; it ends on frame F - 2, so two frames stand past a piece's last tick); its
        strips as chr_animate; its showing and hiding."""
        took, original = self.took, self.original
        key = character_key(armature)
        if CUTSCENE_CHARACTER not in armature:
            self.said.append(f"armature '{armature.name}': written as character '{key}', its name: set its property "
                             f"'{CUTSCENE_CHARACTER}' to the script's name of a character of the level (0: the player)")
        scale, axes = took.frame[armature]
        base = took.engine(armature)
        _, size, _ = split_rotation_scale(base[:, :3, :3], per_matrix=True)
        scaled = np.flatnonzero((np.abs(size - 1.0).max(axis=1) > 1e-4) & ~took.hidden[armature])
        if len(scaled):
            raise ObanError(f"armature '{armature.name}'",
                            f"its base is scaled ({np.round(size[scaled[0]], 4).tolist()} at frame "
                            f"{took.frames[scaled[0]]}): the game draws a character at its class's scale; "
                            "set its scale to 1")
        starts = None
        if original is not None and key in original.cutscene.tracks.bases:
            starts = base_starts(original.cutscene.tracks.starts["base", key], key, took.length,
                                 lambda n: n in original.cutscene.obans)
        fresh = self._fresh(self._pieces(("base", key), base, starts, took.hidden[armature]), "base", armature)
        for number, piece in enumerate(fresh, 1):
            box = f"{self.name}_{word(key)}_box{number if number > 1 else ''}"
            matrices = base[piece.begin:piece.end] @ np.linalg.inv(ENVANIM_TURN)
            self.script.at(piece.begin, f"chr_envanim {key} {box}", "base")
            self._new(armature, f"armature '{armature.name}'", box,
                      np.concatenate([matrices[:1], matrices, matrices[-1:]]),
                      lambda m: blender_matrices(m @ ENVANIM_TURN, axes, scale),
                      f"{piece.end - piece.begin} ticks from tick {piece.begin}")
        for tick, action, tram, frames in strips(armature, took.scene.frame_start, self.said):
            self.script.at(tick, f"chr_animate {key} {tram}" + (f" {frames}" if frames else ""), "tram")
            self.played.append((armature, action))
        self._shown(armature, key)

    def _shown(self, armature, key):
        """Where the armature is shown and hidden: ai2_spawn (chr_create for a script id) and
        chr_delete, from where the level has it (there from its start, unless the original says not)."""
        hidden_on = self.took.hidden[armature]
        there = self.original.cutscene.present.get(key, True) if self.original is not None else True
        spawn = f"chr_create {key} start" if key.lstrip("-").isdigit() else f"ai2_spawn {key}"
        for tick in [0] + changed(hidden_on).tolist():
            if tick == 0 and hidden_on[0] != there:
                continue   # as the level has it from its start
            self.script.at(tick, f"chr_delete {key}" if hidden_on[tick] else spawn, "show")

    def _placed(self, obj):
        """A placed object: kept, or env_setanim of a new OBAN where it moves; obj_create/obj_kill
        where it is shown or hidden."""
        took, original = self.took, self.original
        script_id = int(obj[OBJECT_SCRIPT_ID])
        scale, axes = took.frame[obj]
        engine, hidden_on = took.engine(obj), took.hidden[obj]
        moves = (relative_errors(engine, np.repeat(engine[:1], len(engine), axis=0)) > STEADY).any()
        if CUTSCENE not in obj and not hidden_on.any() and (obj in took.as_level or not moves):
            return   # as its level's import shows it, which a cutscene's import leaves where it is not scripted
        changes = changed(hidden_on)
        for tick in [0] + changes.tolist():   # it exists from obj_create (docs/cutscenes.md 4.1)
            if tick or not hidden_on[0]:
                self.script.at(tick, f"obj_{'kill' if hidden_on[tick] else 'create'} {script_id}", "show")
        track = ("object", (script_id, obj.get(OBJECT_SETUP)))
        starts = None
        if original is not None and track in original.cutscene.tracks.starts:
            starts = object_starts(original.cutscene.tracks.starts[track], script_id, took.length,
                                   lambda n: n in original.cutscene.obans)
        elif not moves:
            return
        created = changes[~hidden_on[changes]]   # an OBAN starts only on what is there (docs/cutscenes.md 4.3)
        fresh = self._fresh(self._pieces(track, engine, starts, hidden_on), "object", obj)
        for number, piece in enumerate(_from_ticks(fresh, created, ~hidden_on), 1):
            oban = f"{self.name}_{script_id}_{word(obj.name)}{f'_{number}' if number > 1 else ''}"
            self.script.at(piece.begin, f"env_setanim {script_id} {oban}", "object")
            self._new(obj, f"object '{obj.name}'", oban, _first_frame_twice(engine[piece.begin:piece.end]),
                      lambda m: blender_matrices(m, axes, scale), f"{piece.end - piece.begin} ticks from tick "
                                                                  f"{piece.begin}")

    def _quads(self):
        """env_show where an environment's modifier of a script id's quads is switched."""
        for script_id, off in quads_hidden(self.took.scene.objects, self.took.frames).items():
            for tick in ([0] if off[0] else []) + changed(off).tolist():
                self.script.at(tick, f"env_show {script_id} {0 if off[tick] else 1}", "show")

    def _markers(self):
        played = set()
        if self.original is not None:
            played = {m.text for m in self.original.cutscene.timeline.markers}
        start = self.took.scene.frame_start
        for marker in self.took.scene.timeline_markers:
            statement = marker_statement(marker.name, played) if marker.camera is None else None
            if statement and 0 <= marker.frame - start < self.took.length:
                self.script.at(marker.frame - start, statement, "marker")


def _from_ticks(fresh, ticks, shown) -> list:
    """The pieces cut at `ticks`, each begun on its first tick `shown` (the pieces wholly hidden dropped)."""
    out = []
    for piece in fresh:
        cuts = [piece.begin, *(t for t in ticks.tolist() if piece.begin < t < piece.end), piece.end]
        for begin, end in zip(cuts, cuts[1:]):
            there = np.flatnonzero(shown[begin:end])
            if len(there):
                out.append(Piece(begin + int(there[0]), end, None))
    return out


def _first_frame_twice(matrices):
    """OBAN frames for a span started by cm_anim/env_setanim/chr_envanim: frame 1 shows on the
    first tick, so frame 0 (never shown) repeats it."""
    return np.concatenate([matrices[:1], matrices])


def _replay_differs(took, written, original) -> list:
    """The tracks the written script, played by the import's path in the original's level, does
    not show as the scene does within the tolerance (and AS_READ): where and whether each thing
    is shown."""
    replay = plan_cutscene(original.level, written.name, written=(
        written.text, os.path.join(os.path.dirname(original.level), f"{written.name}.bsl"), written.obans)).tracks
    limit = max(took.settings.tolerance, AS_READ) * 1.001
    n = took.length

    def differs(matrices, obj, shown):
        scale, axes = took.frame[obj]
        there = ~took.hidden[obj]
        errors = relative_errors(blender_matrices(matrices[:n], axes, scale), took.world[obj])
        return (shown[:n] != there).any() or (errors[there] > limit).any()
    found = []
    if (relative_errors(took.camera_blender(replay.camera[:n]), took.camera_blender(took.camera)) > limit).any():
        found.append("camera")
    for armature in took.armatures:
        key = character_key(armature)
        if key in replay.bases and differs(replay.bases[key], armature, replay.shown[key]):
            found.append(("base", key))
    for obj in took.placed:
        track = (int(obj[OBJECT_SCRIPT_ID]), obj.get(OBJECT_SETUP))
        if track in replay.objects and differs(replay.objects[track], obj, replay.objects_shown[track]):
            found.append(("object", track))
    return found


def _track_name(track) -> str:
    return track if isinstance(track, str) else f"character {track[1]}" if track[0] == "base" else \
        f"object of script id {track[1][0]}"


@dataclass
class _TramSettings:
    """The TRAM export's settings for the strips' actions: the cutscene's, as .oni files."""
    of: object

    def __getattr__(self, name):
        own = {"character_format": "oni", "character_actions": "ALL", "character_tolerance": 1e-3}
        return own[name] if name in own else getattr(self.of, name)
