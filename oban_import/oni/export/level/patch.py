"""A level's shading, flags and textures written back in place (docs/level.md 11): for each
level the environment objects come from, a copy of its file with every quad's shades, flags
and texture index as the scene has them (scene.py reads them), and the pixels of each
texture repainted in its own size and format (the rest of the file as read); a change the file
cannot carry in place refuses that level, naming the face or the texture."""

import os

import numpy as np

from ....core.errors import ObanError
from ....core.files import read_bytes
from ....core.output_files import FileJob, OutputFile, one_content_per_file, write_jobs
from ....core.report import Made, Report
from ...blender.shared.fingerprints import image_pixels
from ...io.container.container import raw_path
from ...io.container.library import open_library
from ...io.import_frame import import_frame
from ...io.level.patch import patched_files, refusals
from ...io.level.properties import ENVIRONMENT, LEVEL_FILE, TYPE
from ...io.level.read import read_level
from ...io.objects.properties import OBJECT_NAME, TEXTURE_FILE, TEXTURE_INSTANCE
from ...io.objects.read import stored_texture
from ...io.objects.texture_write import encode, lossless, mip_levels
from ...io.objects.textures import FORMAT_NAMES, HAS_MIPMAPS
from ..shared.as_read import close
from .kept import unpatched_edits
from .placed import placed_setups
from .scene import (check_imported, dropped_edits, edited_images, images_otherwise, levels_of, refusal, scene_faces,
                    settled, shown_images)

REBUILD = "rebuild the level with OniSplit instead, docs/level.md 11"


def environment_objects(objects) -> list:
    """The environment mesh objects among `objects` (imported by the add-on)."""
    return [obj for obj in objects if obj.type == "MESH" and ENVIRONMENT in obj and LEVEL_FILE in obj]


def export_level_patches(context, objects, directory, settings=None) -> Report:
    """Each level of the environment `objects` as patched copies in `directory`; Made(path,
    environment, first object) per file written. An environment object that does not say its
    import's scale and axes is taken at 1 and Oni's axes, another object of its level at the
    environment's. An edit the patch cannot carry refuses its level, unless
    `settings.despite_edits`: then it is a warning. Two levels that would write one file
    (copies of a level from two folders) are both refused."""
    report = Report(unit="levels")
    frame, despite = (1.0, np.eye(3)), bool(getattr(settings, "despite_edits", False))
    levels = levels_of(environment_objects(objects), report.errors)
    report.files = len(levels) + len(report.errors)
    jobs, environments = [], {}
    for (path, _), found in levels.items():
        try:
            job, environments[path] = _patch(context, path, found, frame, despite, report.warnings)
        except ObanError as error:
            report.errors.append(str(error))
            continue
        jobs.append(job)
    jobs = one_content_per_file(jobs, report.errors, "export them one at a time, into folders of their own",
                                shared=False)
    for job, written in write_jobs(jobs, directory, report.errors):
        report.made += [Made(file.path, environments[job.label], job.source) for file in written]
    report.counts = {"files": len(report.made)}
    return report


def _patch(context, path, objects, frame, despite, warnings):
    """(the FileJob of the level at `path` patched as the scene has it, its environment as read)."""
    with open_library(path) as library:
        level = read_level(path, library)
        placed = placed_setups(library.main, level.doors)
    environment = level.environment
    check_imported(path, environment, objects)
    faces = [scene_faces(obj, environment, frame) for obj in objects]
    flags, shades, textures, refused = _scene_quads(faces, environment)
    if refused:
        raise refusal(path, "patched in place", refused, REBUILD)
    same = [obj for obj in context.scene.objects if obj.get(LEVEL_FILE) == path]
    doors = [obj for obj in same if obj.get(TYPE) == "DOOR"]
    shown = shown_images(faces, doors, [obj for obj in same if OBJECT_NAME in obj])
    otherwise = images_otherwise(shown)
    if otherwise:
        raise refusal(path, "patched in place", otherwise)
    edited = edited_images(shown)
    pixels, kept, seen = _repainted(edited, environment)
    imported = import_frame(objects[0], f"object '{objects[0].name}'", *frame)   # for objects that do not say theirs
    settled(path, kept + dropped_edits(edited, doors, "the in-place patch keeps door classes as read (rebuild "
                                                     "the level to carry it)", seen)
            + unpatched_edits(context, level, placed, same, imported), despite, warnings, "patched in place")
    files = patched_files(environment, shades, flags, textures, pixels)
    raws = [raw for raw in ([raw_path(path)] if os.path.splitext(path)[1].lower() == ".dat" else [])
            if raw not in files]   # the .raw goes with its .dat, as it is
    outputs = [OutputFile(os.path.basename(source), data) for source, data in files.items()]
    outputs += [OutputFile(os.path.basename(raw), read_bytes(raw)) for raw in raws]
    return FileJob(objects[0], path, outputs, sources=[*files, *raws]), environment


def _repainted(edited, environment):
    """([(Texture, its pixels' new bytes)] of each texture an image the import made of it shows
    edited (`edited`: scene.edited_images', the environment's, the door leaves' and the placed
    objects', each of one image's pixels: scene.images_otherwise), in the texture's own size
    and format (every level), which must hold every pixel, written where
    the file it was read from stores it; [why each other such texture is kept as read]; the
    names of all those images)."""
    by_texture = {name: {key: image for key, (_, image) in images.items()} for name, images in edited.items()}
    written, refused = [], []
    for name, images in by_texture.items():
        texture = _stored(name, next(iter(images.values())), environment)
        said = f"texture '{name}' (image {', '.join(map(repr, sorted(images)))})"
        pixels = [image_pixels(image) for image in images.values()]
        if texture is None or any(p is None for p in pixels):
            refused.append(f"{said}: the level holds no such TXMP, or the image no pixels")
        elif pixels[0].shape[:2] != (texture.height, texture.width):
            height, width = pixels[0].shape[:2]
            refused.append(f"{said} is {width} x {height}, the level's {texture.width} x {texture.height}: a "
                           f"texture's size cannot change in place")
        elif not lossless(pixels[0], texture.format):
            refused.append(f"{said}: its pixels are more than {FORMAT_NAMES[texture.format]}, the level's format, "
                           f"holds: a texture's format cannot change in place")
        else:
            levels = mip_levels(pixels[0]) if texture.flags & HAS_MIPMAPS else [pixels[0]]
            written.append((texture, b"".join(encode(level, texture.format) for level in levels)))
    return written, [f"{message} (rebuild the level to carry it)" for message in refused], \
        {image for images in by_texture.values() for image in images}


def _stored(name, image, environment):
    """The Texture an image was made of, as its file stores it now (TEXTURE_FILE, TEXTURE_INSTANCE:
    the level's, or a TXMP….oni beside a loose level), else the environment's of that name; None
    where neither holds it."""
    source, instance = image.get(TEXTURE_FILE), image.get(TEXTURE_INSTANCE)
    if isinstance(source, str) and isinstance(instance, int) and os.path.isfile(source):
        try:
            return stored_texture(source, instance, name)[0]
        except ObanError:
            return None
    names = environment.texture_names
    return environment.textures[names.index(name)] if name in names else None


def _scene_quads(faces, environment):
    """((q,) flags, (q, 4) shades (a triangle's fourth as stored), (q,) TXMA indices (-1 for a
    texture the level does not list) of the quads as the scene has them; what keeps them from
    being patched: a face that is no quad of the level, a quad missing or made twice, its
    corners changed in number or moved, its texture coordinates changed, and each refusals())."""
    count = len(environment.flags)
    flags, shades = environment.flags.copy(), environment.shades.copy()
    textures = environment.quad_textures.astype(np.int64)
    seen, where, refused = np.zeros(count, np.int64), {}, []
    index = {name: i for i, name in reversed(list(enumerate(environment.texture_names)))}
    for found in faces:
        refused += found.refused
        quad, label = found.quads, found.label
        if (quad < 0).any():
            refused.append(f"{label} face {int(np.argmax(quad < 0))}: not a quad of the level (a face added)")
            continue
        np.add.at(seen, quad, 1)
        where.update(zip(quad.tolist(), ((label, face) for face in range(len(quad)))))
        imported = environment.corner_counts(quad)
        wrong = np.flatnonzero(found.sizes != imported)
        refused += [f"{label} face {face} (quad {quad[face]}): {found.sizes[face]} corners, {imported[face]} "
                    f"imported" for face in wrong[:3].tolist()]
        if len(wrong):
            continue
        flags[quad] = found.flags
        face_shades = found.shades.copy()
        triangle = found.sizes == 3
        face_shades[triangle, 3] = shades[quad[triangle], 3]          # a triangle's fourth: as stored
        shades[quad] = face_shades
        per_slot = np.array([index.get(name, -1) for name in found.slot_names], np.int64)
        textures[quad] = per_slot[found.slots]
        refused += _moved(found, quad, environment)
    refused += [f"quad {q}: deleted" if seen[q] == 0 else f"{where[q][0]} face {where[q][1]} (quad {q}): made "
                f"{seen[q]} times" for q in np.flatnonzero(seen != 1)[:5].tolist()]
    return flags, shades, textures, [f"{where[quad][0]} face {where[quad][1]} (quad {quad}): {why}" for quad, why
                                     in refusals(environment, flags, textures) if quad in where] + refused


def _moved(found, quad, environment) -> list:
    """The faces whose corners stand elsewhere, or whose texture coordinates are other, than
    the points and coordinates they were imported from (Oni space: a moved object's too)."""
    used = np.arange(4)[None, :] < found.sizes[:, None]
    said = []
    for what, got, read in (("its corners moved", found.points, environment.points[environment.quad_points[quad]]),
                            ("its texture coordinates changed", found.uvs,
                             environment.texture_coordinates[environment.quad_uvs[quad]])):
        off = ~close(got, read).all(axis=2) & used
        said += [f"{found.label} face {face} (quad {quad[face]}): {what}"
                 for face in np.flatnonzero(off.any(axis=1))[:3].tolist()]
    return said
