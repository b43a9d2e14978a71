"""An export of files, a job per object (the mesh and body exports): each object's files made
before any is written, its sources read through one set of open libraries and each image
encoded once an export, then all written together (core/output_files.py)."""

from ....core.errors import ObanError
from ....core.output_files import write_into
from ....core.report import Report
from ...io.container.library import Libraries


def export_jobs(things, unit: str, make, directory, remedy: str, replace_sources: bool) -> Report:
    """The Report of writing each of `things` (counted as `unit`) into `directory`: make(thing,
    libraries, encoded, report) gives its FileJob (None with its error in the report); `remedy`:
    what to do where two would write one file otherwise."""
    report = Report(unit=unit, files=len(things))
    encoded = {}   # (TXMP name, image name) -> its TextureFile
    with Libraries() as libraries:
        jobs = [job for job in (make(thing, libraries, encoded, report) for thing in things) if job]
    write_into(report, jobs, directory, remedy, replace_sources)
    return report


def refuse_unless_despite(label: str, dropped: list, despite: bool) -> None:
    """ObanError naming `label` and each edit the export cannot carry, unless the user asked to
    write it despite them (each then a warning, the caller's)."""
    if dropped and not despite:
        raise ObanError(label, "; ".join(dropped) + "; nothing written for it (or export with Despite Edits "
                                                    "(--despite-edits) to write it without them)")
