"""The one writer of what an export makes. A job (one object's mesh and its textures, one body's
set, one action's TRAM, one level's folder) is made whole before any of it is written: each
file's name, bytes, the check that reads it back, and how it was made. Its files are written
into a staging folder beside the output, each read back there by its check, then all put in
place together: a job's files appear together or not at all, an earlier file of the same
name staying as it was when one fails. Two jobs that would write one file with other bytes
are both refused; a job never writes over (or into a folder holding) a file it was read from
unless the user asks."""

import os
import shutil
import tempfile
from dataclasses import dataclass, field

from .errors import ObanError
from .report import Made


@dataclass
class OutputFile:
    name: str             # its path in the job's folder, os.sep between folders (file_name() of an instance's)
    data: object          # bytes, text (UTF-8), or None for a folder
    check: object = None  # check(path) -> what the readers give back of it, or ObanError; None: nothing to read back
    note: str = ""        # how it was made (the report's)


@dataclass
class FileJob:
    source: object        # what it is written of (a mesh object, an armature, a level's first object)
    label: str            # how messages name it
    files: list           # [OutputFile], in the order they are checked
    folder: str = ""      # a folder of the output its files make whole (an earlier one replaced whole); '' none
    sources: list = field(default_factory=list)   # the files it was read from


@dataclass
class Written:
    path: str             # where it stands now
    item: object          # what its check gave back (None without a check)
    file: OutputFile


def file_name(name: str) -> str:
    """A file name of an instance's name (a '/' or '\\' in it made '_')."""
    return name.replace("/", "_").replace("\\", "_")


def one_content_per_file(jobs, errors, remedy, shared=True) -> list:
    """The jobs none of whose files another file of other bytes would overwrite (another
    job's, or another of the same job; with `shared` False, any other file at all); the
    others refused into `errors`, each naming the others and saying `remedy` ('give each its
    own name (…)')."""
    claims = {}
    for job in jobs:
        for file in job.files:   # one file a name, whatever the case (not every file system tells them apart)
            claims.setdefault(os.path.join(job.folder, file.name).casefold(), []).append((job, file))
    refused = {}
    for found in claims.values():
        contents = len({_bytes(file.data) for _, file in found})
        if contents < 2 and (shared or len(found) < 2):
            continue
        involved = list({id(job): job for job, _ in found}.values())
        otherwise = ", otherwise" if contents > 1 else ""
        for job in involved:
            others = " and ".join(other.label for other in involved if other is not job)
            refused.setdefault(id(job), f"{job.label}: {others or 'another of its files'} would write "
                                        f"{found[0][1].name} too{otherwise}; nothing written for "
                                        f"{'them' if others else 'it'}: {remedy}")
    errors += [refused[id(job)] for job in jobs if id(job) in refused]
    return [job for job in jobs if id(job) not in refused]


def write_into(report, jobs, directory, remedy, replace_sources=False) -> None:
    """An export's jobs, those refused by one_content_per_file (saying `remedy`) left out, written
    into `directory` (write_jobs): a Made(path, what its check gave, the job's source, 0, how it
    was made) per file in `report`, its errors there; its file count."""
    jobs = one_content_per_file(jobs, report.errors, remedy)
    for job, written in write_jobs(jobs, directory, report.errors, replace_sources):
        report.made += [Made(file.path, file.item, job.source, 0.0, file.file.note) for file in written]
    report.counts = {"files": len(report.made)}


def write_jobs(jobs, directory, errors, replace_sources=False) -> list:
    """[(job, [Written])] of each job written into `directory` (write_job); a job that fails
    writes nothing, its error into `errors`; a file an earlier job wrote (the same bytes:
    one_content_per_file) is not written again."""
    done, written = [], set()
    for job in jobs:
        try:
            done.append((job, write_job(job, directory, written, replace_sources)))
        except ObanError as error:
            errors.append(str(error))
    return done


def write_job(job: FileJob, directory: str, written=None, replace_sources=False) -> list:
    """[Written] of one job's files, put in `directory` (or its `folder` there, replaced whole)
    together once each has been written and read back in a staging folder beside; ObanError
    naming the file and the job where one fails, the system refuses, or an output would be,
    or hold, a file the job was read from (unless `replace_sources`). `written`: the names
    (casefolded) already written by earlier jobs of the export, left out and added to."""
    written = set() if written is None else written
    root = os.path.abspath(os.path.join(directory, job.folder) if job.folder else directory)
    files = [file for file in job.files if job.folder or file.name.casefold() not in written]
    targets = [root] if job.folder else [os.path.join(root, file.name) for file in files]
    if not replace_sources:
        _check_sources(job, targets)
    parent = os.path.dirname(root) if job.folder else root
    try:
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".oban-", dir=parent)
    except OSError as error:
        raise _unwritable(error, parent, job.label) from None
    try:
        made = [_staged(job, file, staging, root) for file in files]
        if job.folder:
            _swap_folder(staging, root, job.label)
            staging = None
        else:
            _put_in_place(staging, root, files, job.label)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    written.update(file.name.casefold() for file in files if not job.folder)
    return [Written(os.path.join(root, file.name), item, file) for file, item in zip(files, made)]


def _unwritable(error: OSError, path, label) -> ObanError:
    return ObanError(error.filename or path, f"cannot be written: {error.strerror or error}; nothing written for "
                                             f"{label}")


def _bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else data


def _check_sources(job, targets):
    """ObanError where an output would be, or hold, one of the job's sources."""
    read = {os.path.abspath(source) for source in job.sources if source}
    for target in targets:
        for source in sorted(read):
            if source == target or source.startswith(target + os.sep):
                what = "the file" if source == target else f"the folder holding {source}, which"
                raise ObanError(target, f"would replace {what} it was read from: write into another folder, or "
                                        f"export with Replace Sources (--replace-sources); nothing written for "
                                        f"{job.label}")


def _staged(job, file, staging, root):
    """Write `file` in the staging folder and read it back: what its check gives."""
    path = os.path.join(staging, file.name)
    try:
        os.makedirs(path if file.data is None else os.path.dirname(path), exist_ok=True)
        if file.data is not None:
            with open(path, "wb") as f:
                f.write(_bytes(file.data))
    except OSError as error:
        raise _unwritable(error, os.path.join(root, file.name), job.label) from None
    if file.check is None:
        return None
    try:
        return file.check(path)
    except ObanError as error:
        raise ObanError(os.path.join(root, file.name), f"{job.label}: {error.problem}; nothing written for it") \
            from None


def _put_in_place(staging, root, files, label):
    """Each staged file put at its name in `root`, an earlier one kept aside until all are
    in, and put back where one cannot be."""
    backups, placed = [], []
    try:
        for index, file in enumerate(files):
            if file.data is None:
                os.makedirs(os.path.join(root, file.name), exist_ok=True)
                continue
            target = os.path.join(root, file.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                backup = os.path.join(staging, f".before-{index}")
                os.replace(target, backup)
                backups.append((backup, target))
            os.replace(os.path.join(staging, file.name), target)
            placed.append(target)
    except OSError as error:
        for target in placed:
            os.remove(target)
        for backup, target in backups:
            os.replace(backup, target)
        raise _unwritable(error, root, label) from None


def _swap_folder(staging, target, label):
    """The folder `staging` made `target`, an earlier `target` removed once it is."""
    try:
        if not os.path.lexists(target):
            os.replace(staging, target)
            return
        old = tempfile.mkdtemp(prefix=".oban-old-", dir=os.path.dirname(target))
        os.rmdir(old)
        os.replace(target, old)
        try:
            os.replace(staging, target)
        except OSError:
            os.replace(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise _unwritable(error, target, label) from None
