"""The OBAN export: each animated object's evaluated motion as an OBAN the engine replays
exactly (shared/motion.py: sampled, its placement, axes and scale undone, the fewest keys).
The file is read back, replayed by the engine's math and turned into Blender's world matrices
the way an import does; only if that matches the sampled matrices at every frame within the
tolerance is it written. An object imported by this add-on and left unchanged is written back
exactly as it was read."""

import numpy as np

from ...core.errors import ObanError
from ...core.files import output_path, write_checked
from ...core.report import Made, Report
from ..engine.rotations import relative_errors
from ..blender.oban.targets import is_animated
from ..io.characters.properties import CHARACTER
from ..io.oban.properties import PIVOT
from ..io.oban.read import read_file
from ..io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes
from .shared.motion import Motion, animation_of

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
    A failed object writes nothing; its error is in `errors`."""
    report = Report(files=len(objects), unit="objects")
    for obj in objects:
        try:
            motion = Motion(context, obj, settings.global_scale, settings.axes)
            animation, unchanged = animation_of(motion, settings.tolerance)
            path, back, error = _write(animation, motion, directory, settings)
        except ObanError as error:
            report.errors.append(str(error))
            continue
        report.made.append(Made(path, back, obj, error, "unchanged import" if unchanged else ""))
    report.counts = {"files": len(report.made)}
    return report


def _write(animation, motion, directory, settings):
    """Write atomically what, read back and replayed, gives the sampled world matrices within
    the tolerance at every frame; refuse it (ObanError, no file) otherwise. (path, the
    animation read back, its worst relative error)."""
    pattern, to_bytes = FILES[settings.file_format]
    file_name = pattern.format(name=animation.name, id=animation.record_header[0])
    path = output_path(directory, file_name)

    def check(temporary):
        back = read_file(temporary)[0]
        back.name = animation.name
        errors = relative_errors(motion.replayed(back), motion.world)
        worst = int(np.argmax(errors))
        if errors[worst] > settings.tolerance:
            raise ObanError(motion.label, f"frame {motion.first_frame + int(motion.ticks[worst])}: the file would "
                                          f"replay it off by {errors[worst]:.3g}, more than the tolerance "
                                          f"{settings.tolerance:g}; nothing written")
        return back, float(errors[worst])

    back, worst = write_checked(path, to_bytes(animation), check)
    return path, back, worst
