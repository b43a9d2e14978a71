"""Mesh objects back to the game (docs/objects.md 10): each object's M3GM parts as loose
`M3GM<name>.oni` files, with the TXMP each shows as `TXMP<name>.oni`, named as the import read
them (a mesh made in Blender: one part named after the object, its textures after their
images). Every object's files are made before any is written. An object with a part that
cannot be written, or an edit an M3GM cannot carry (unless the user goes on despite it),
writes nothing; two objects that would write one file otherwise are both refused. Each file
is written under a temporary name, read back by the add-on's readers, checked against what
it should hold, then put in place."""

import numpy as np

from ...core.errors import ObanError
from ...core.output_files import FileJob, OutputFile, file_name
from ...core.report import Report
from ..io.import_frame import import_frame
from ..io.level.properties import ENVIRONMENT, ROOMS
from ..io.objects.properties import MESH_PARTS, TEXTURE_NAME
from ..io.objects.read import read_mesh_file
from .shared.edits import dropped_mesh_edits, unwritten_uv_maps
from .shared.jobs import export_jobs, refuse_unless_despite
from .shared.parts import read_from, scene_parts
from .shared.textures import linked_notes, shown_textures, slot_textures, texture_outputs


def mesh_objects(objects) -> list:
    """The mesh objects among `objects` but a level's environment and rooms (the level exports
    write them)."""
    return [obj for obj in objects if obj.type == "MESH" and ENVIRONMENT not in obj and ROOMS not in obj]


def export_meshes(context, objects, directory, settings) -> Report:
    """Each mesh object's M3GM and TXMP files in `directory`: Made(path, the Mesh or Texture
    read back, the object, 0, how it was made) per file, a file two objects share written
    once. `settings`: the scale and axes of meshes that do not say, `despite_edits`."""
    return export_jobs(objects, "objects", lambda obj, *made: _job(obj, settings, *made), directory,
                       f"give each its own name (the mesh's '{MESH_PARTS}', the material's or image's "
                       f"'{TEXTURE_NAME}')", settings.replace_sources)


def _job(obj, settings, libraries, encoded, report):
    """The files of one object (a _Job), or None with its error in the report."""
    label = f"object '{obj.name}'"
    try:
        mesh = obj.data
        scale, axes = import_frame(mesh, f"{label} mesh '{mesh.name}'", settings.global_scale, settings.axes)
        parts, scene = scene_parts(obj, label, scale, axes, libraries)
        slots = slot_textures(mesh)
        dropped = dropped_mesh_edits(obj, parts, scene, slots)
        refuse_unless_despite(label, dropped, settings.despite_edits)
        pairs, unshown = shown_textures([(part.name, *slots[part.slot]) for part in parts], label)
        notes = linked_notes(unshown, label) + [f"{label}: {note}" for note in unwritten_uv_maps(mesh)]
        files = texture_outputs(pairs, label, libraries, encoded) + [_mesh(part, slots[part.slot][0], label)
                                                                       for part in parts]
    except ObanError as error:
        report.errors.append(str(error))
        return None
    report.warnings += [f"{label}: {edit}; written without it" for edit in dropped]
    report.notes += notes
    return FileJob(obj, label, files, sources=read_from(mesh, [image for _, image in slots]))


def _mesh(part, texture: str, label) -> OutputFile:
    """The M3GM file of a Part, checked to read back as its points, normals, texture
    coordinates (float32, bit for bit) and triangles (each wound as given)."""
    try:
        data = part.file_bytes(texture)
    except ObanError as error:
        raise ObanError(f"{label} part '{part.name}'", f"{error}; nothing written for the object") from None

    def check(path):
        back = read_mesh_file(path)
        turns = np.stack([np.roll(part.triangles, -r, axis=1) for r in range(3)])
        if not (all(np.array_equal(a, b) for a, b in ((back.points, part.points), (back.normals, part.normals),
                                                       (back.uvs, part.uvs)))
                and back.triangles.shape == part.triangles.shape
                and (turns == back.triangles).all(axis=2).any(axis=0).all()):
            raise ObanError(path, f"{label} part '{part.name}': read back, it is not what was written; not written")
        return back

    return OutputFile(file_name(f"M3GM{part.name}.oni"), data, check, part.note)
