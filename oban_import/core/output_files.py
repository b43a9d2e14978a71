"""What an export writes, made whole before any of it is written: each file's name, bytes,
the check that reads it back, and how it was made; a job's files stand or fall together, and
two jobs that would write one file with other bytes are both refused."""

from dataclasses import dataclass


@dataclass
class OutputFile:
    name: str             # its file name
    data: bytes
    check: object         # check(path) -> what the readers give back of it, or ObanError
    note: str             # how it was made (the report's)


@dataclass
class FileJob:
    source: object        # what it is written of (a mesh object, an armature)
    label: str            # how messages name it
    files: list           # [OutputFile], in the order they are checked


def one_content_per_file(jobs, errors, remedy) -> list:
    """The jobs none of whose files another file of other bytes would overwrite (another
    job's, or another of the same job); the others refused into `errors`, each naming the
    others and saying `remedy` ('give each its own name (…)')."""
    claims = {}
    for job in jobs:
        for file in job.files:   # one file a name, whatever the case (not every file system tells them apart)
            claims.setdefault(file.name.casefold(), []).append((job, file))
    refused = {}
    for found in claims.values():
        if len({file.data for _, file in found}) < 2:
            continue
        involved = list({id(job): job for job, _ in found}.values())
        for job in involved:
            others = " and ".join(other.label for other in involved if other is not job)
            refused.setdefault(id(job), f"{job.label}: {others or 'another of its files'} would write "
                                        f"{found[0][1].name} too, otherwise; nothing written for "
                                        f"{'them' if others else 'it'}: {remedy}")
    errors += [refused[id(job)] for job in jobs if id(job) in refused]
    return [job for job in jobs if id(job) not in refused]
