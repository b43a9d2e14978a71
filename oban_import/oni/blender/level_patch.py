"""A level's shading, flags and textures written back in place (docs/level.md 11): for each
level the environment objects come from, a copy of its file with every quad's shades, flags
and texture index as the scene has them (the rest of the file as read); a change the file
cannot carry in place refuses that level, naming the face."""

import os
import shutil

import numpy as np

from ...blender import compat
from ...core.errors import ObanError
from ...core.id_properties import signed32
from ...core.report import Made, Report
from ..io.container.container import raw_path
from ..io.level.patch import fingerprint, patched_files, refusals
from ..io.level.properties import ENVIRONMENT, FINGERPRINT, FLAGS_ATTRIBUTE, LEVEL_FILE, QUAD_ATTRIBUTE
from ..io.level.read import read_environment
from ..io.oban.properties import IMPORT_AXES, IMPORT_SCALE
from .environment import corner_shades, face_ints, slot_texture_names

MOVED = 1e-5   # relative: a corner further than this from where it was imported has moved


def environment_objects(objects) -> list:
    """The environment mesh objects among `objects` (imported by the add-on)."""
    return [obj for obj in objects if obj.type == "MESH" and ENVIRONMENT in obj and LEVEL_FILE in obj]


def by_level(objects) -> dict:
    """{level file: [its environment objects]} of the environment objects among `objects`."""
    levels = {}
    for obj in environment_objects(objects):
        levels.setdefault(obj[LEVEL_FILE], []).append(obj)
    return levels


def export_level_patches(context, objects, directory, settings=None) -> Report:
    """Each level of the environment `objects` as patched copies in `directory`; Made(path,
    environment, first object) per file written."""
    report = Report(unit="levels")
    levels = by_level(objects)
    report.files = len(levels)
    for path, found in levels.items():
        try:
            report.made += _patch(path, found, directory)
        except ObanError as error:
            report.errors.append(str(error))
    report.counts = {"files": len(report.made)}
    return report


def _patch(path, objects, directory):
    environment = read_environment(path)
    if environment is None or signed32(fingerprint(environment)) != objects[0][FINGERPRINT]:
        raise ObanError(path, "its quads are not the ones imported: the file has changed since")
    quads = _scene_quads(objects, environment)
    refused = [f"object '{objects[k].name}' face {face} (quad {quad}): {why}"
               for quad, why in refusals(environment, quads["flags"], quads["textures"])
               for k, face in [quads["where"][quad]]] + quads["refused"]
    if refused:
        raise ObanError(path, "cannot be patched in place: " + "; ".join(refused[:5])
                              + (f"; and {len(refused) - 5} more" if len(refused) > 5 else "")
                              + " (rebuild the level with OniSplit instead, docs/level.md 11)")
    files = patched_files(environment, quads["shades"], quads["flags"], quads["textures"])
    raws = [raw for raw in ([raw_path(path)] if os.path.splitext(path)[1].lower() == ".dat" else [])
            if raw not in files]   # the .raw goes with its .dat, as it is
    targets = {source: os.path.join(directory, os.path.basename(source)) for source in [*files, *raws]}
    for source, target in targets.items():
        if os.path.abspath(target) == os.path.abspath(source):
            raise ObanError(target, "is the level imported: write the patched copy into another folder")
    try:
        os.makedirs(directory, exist_ok=True)
        for source, data in files.items():
            with open(targets[source], "wb") as f:
                f.write(data)
        for source in raws:
            shutil.copyfile(source, targets[source])
    except OSError as error:
        raise ObanError(error.filename or directory, f"cannot be written: {error.strerror or error}") from None
    return [Made(target, environment, objects[0]) for target in targets.values()]


def _scene_quads(objects, environment) -> dict:
    """The quads as the scene has them: (q,) flags, (q, 4) shades (a triangle's fourth as
    stored), (q,) TXMA indices (-1 for a texture the level does not list), each quad's
    (object index, face); and what keeps them from being patched (a quad missing or made
    twice, its corners changed in number or moved)."""
    count = len(environment.flags)
    flags, shades = environment.flags.copy(), environment.shades.copy()
    textures = environment.quad_textures.astype(np.int64)
    seen, where, refused = np.zeros(count, np.int64), {}, []
    for k, obj in enumerate(objects):
        mesh = obj.data
        faces = len(mesh.polygons)
        quad = face_ints(mesh, QUAD_ATTRIBUTE, -1)
        valid = (quad >= 0) & (quad < count)
        if not valid.all():
            face = int(np.argmax(~valid))
            refused.append(f"object '{obj.name}' face {face}: not a quad of the level (a face added)")
            continue
        np.add.at(seen, quad, 1)
        where.update(zip(quad.tolist(), ((k, face) for face in range(faces))))
        flags[quad] = face_ints(mesh, FLAGS_ATTRIBUTE, flags[quad].view(np.int32)).view(np.uint32)
        sizes = np.empty(faces, np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
        imported = environment.corner_counts(quad)
        wrong = sizes != imported
        refused += [f"object '{obj.name}' face {face} (quad {quad[face]}): {sizes[face]} corners, "
                    f"{imported[face]} imported" for face in np.flatnonzero(wrong)[:3]]
        if wrong.any():
            continue
        shades[quad] = _corner_shades(mesh, sizes, shades[quad])
        textures[quad] = _face_textures(mesh, faces, environment.texture_names)
        refused += _moved(obj, mesh, sizes, quad, environment)
    refused += [f"quad {q}: {'deleted' if seen[q] == 0 else f'made {seen[q]} times'}"
                for q in np.flatnonzero(seen != 1)[:5].tolist()]
    return {"flags": flags, "shades": shades, "textures": textures, "where": where, "refused": refused}


def _corner_shades(mesh, sizes, stored):
    """(f, 4) uint32 0xAARRGGBB of each face's corners (its active colour's bytes), a
    triangle's fourth from `stored`."""
    shades = stored.copy()
    corner = np.arange(4)[None, :] < sizes[:, None]
    shades[corner] = corner_shades(mesh.color_attributes.active_color, len(mesh.loops))
    return shades


def _face_textures(mesh, faces, names):
    """Each face's TXMA index: its material's texture by name, -1 for one the level does not list."""
    slots = face_ints(mesh, compat.MATERIAL_INDEX, 0)
    index = {name: i for i, name in reversed(list(enumerate(names)))}
    per_slot = np.array([index.get(name, -1) if name else -1 for name in slot_texture_names(mesh)] or [-1], np.int64)
    return per_slot[np.minimum(slots, len(per_slot) - 1)]


def _moved(obj, mesh, sizes, quad, environment) -> list:
    """The faces whose corners stand elsewhere than the points they were imported from."""
    scale = float(obj[IMPORT_SCALE])
    axes = np.array(obj[IMPORT_AXES], np.float64).reshape(3, 3)
    points = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", points)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    used = np.arange(4)[None, :] < sizes[:, None]
    stored = environment.points[environment.quad_points[quad][used]].astype(np.float64) @ (scale * axes).T
    distance = np.abs(points.reshape(-1, 3)[corners] - stored).max(axis=1)
    moved = distance > MOVED * max(1.0, float(np.abs(stored).max(initial=0.0)))
    faces = np.repeat(np.arange(len(sizes)), sizes)[moved]
    return [f"object '{obj.name}' face {face} (quad {quad[face]}): its corners moved" for face in np.unique(faces)[:3]]
