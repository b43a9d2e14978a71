"""The OBAN export: each animated object's evaluated motion as an OBAN the engine replays
exactly (shared/motion.py: sampled, its placement, axes and scale undone, the fewest keys).
The file is read back, replayed by the engine's math and turned into Blender's world matrices
the way an import does; only if that matches the sampled matrices at every frame within the
tolerance is it written. An object imported by this add-on and left unchanged is written back
exactly as it was read."""

import numpy as np

from ...core.errors import ObanError
from ...core.output_files import FileJob, OutputFile, file_name, one_content_per_file, write_jobs
from ...core.report import Made, Report
from ..blender.oban.targets import is_animated
from ..engine.rotations import relative_errors
from ..io.characters.properties import CHARACTER
from ..io.import_frame import SOURCE_FILE
from ..io.level.properties import LEVEL_FILE
from ..io.oban.properties import PIVOT
from ..io.oban.read import read_file
from ..io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes
from .shared.edits import named
from .shared.motion import animation_of, motions

FILES = {"oni": ("OBAN{name}.oni", oni_file_bytes),   # EXPORT_FORMATS of options
         "xml": ("OBAN{name}.xml", xml_bytes),
         "raw": ("{id:05d}-{name}.OBAN", raw_file_bytes)}


def animated_objects(objects):
    """The objects an OBAN export writes: animated ones, but an import's pivots (their child is
    the animation) and characters (an armature whose bones are parts, and what hangs on it:
    their animations are TRAMs, trams/export.py)."""
    return [obj for obj in objects if is_animated(obj) and PIVOT not in obj and not _of_character(obj)]


def _of_character(obj):
    while obj is not None:
        if CHARACTER in obj:
            return True
        obj = obj.parent
    return False


def export_objects(context, objects, directory, settings) -> Report:
    """Write one file per object: Made(file path, the animation read back from it, the
    object, its worst error over every frame, "unchanged import" where written as read).
    A failed object writes nothing; its error is in `errors`; objects that would write one
    file with other bytes are all refused."""
    report = Report(files=len(objects), unit="objects")
    jobs, unchanged = [], {}
    for obj, motion in zip(objects, motions(context, [(obj, None) for obj in objects], settings.global_scale,
                                            settings.axes)):
        try:
            animation, unchanged[obj.name] = animation_of(motion, settings.tolerance)
            read_from = [obj.get(key) for key in (SOURCE_FILE, LEVEL_FILE) if isinstance(obj.get(key), str)]
            jobs.append(FileJob(obj, motion.label, [_file(animation, motion, settings)], sources=read_from))
        except ObanError as error:
            report.errors.append(str(error))
    jobs = one_content_per_file(jobs, report.errors, "give each animation its own name (its 'oban_name'); a level's door "
                                                     "leaves, which share their class's, go back with the level "
                                                     "(Export Level)")
    for job, written in write_jobs(jobs, directory, report.errors, settings.replace_sources):
        for file in written:
            back, worst = file.item
            report.made.append(Made(file.path, back, job.source, worst,
                                    "unchanged import" if unchanged[job.source.name] else ""))
    report.counts = {"files": len(report.made)}
    return report


def _file(animation, motion, settings) -> OutputFile:
    """The animation's file, checked to read back as what, replayed, gives the sampled world
    matrices within the tolerance at every frame: (the animation read back, its worst
    relative error)."""
    pattern, to_bytes = FILES[settings.file_format]

    def check(path):
        back = read_file(path)[0]
        back.name = animation.name
        errors = relative_errors(motion.replayed(back), motion.world)
        worst = int(np.argmax(errors))
        if errors[worst] > settings.tolerance:
            raise ObanError(motion.label, f"frame {motion.first_frame + int(motion.ticks[worst])}: the file would "
                                          f"replay it off by {errors[worst]:.3g}, more than the tolerance "
                                          f"{settings.tolerance:g}")
        return back, float(errors[worst])

    named("OBAN", animation.name, motion.label)   # the XML holds no name: the file OniSplit makes of it does
    name = pattern.format(name=animation.name, id=animation.record_header[0])
    return OutputFile(file_name(name), to_bytes(animation), check)
