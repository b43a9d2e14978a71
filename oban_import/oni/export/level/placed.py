"""A level's placed objects back to the game (docs/level.md 13). A level of placed objects
alone (an OBOA and its classes, no environment, as examples/level9_Final.dat) is written as
the OBOA XML OniSplit's plain `-create` makes its OBOA of (io/level_rebuild/oboa_xml.py) and
its classes (M3GM, TXMP, OBAN) as `.oni` files, which `-import:nosep` packs: each object's
setup as read where the object stands where it was imported, else from its world matrix; its
meshes' M3GMs, its textures' TXMPs and its OBAN as read where unedited, else written from the
scene (the mesh export's parts and textures, the OBAN export). In a level with an environment
(-create:level, which makes its OBOA of the doors alone), they are written apart, in placed/,
and a step after -create:level puts them into the ONLV it built (io/level_rebuild/place.py)."""

import os

import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import number, numbers, text, unsigned32, whole
from ....core.output_files import FileJob, OutputFile, write_job
from ....core.report import Made, listed
from ...blender.oban.targets import is_animated
from ...blender.shared.fingerprints import image_edited
from ...engine.rotations import matrix_quaternions, stored_from_hamilton
from ...io.container.container import OBOA_TAG
from ...io.container.library import Libraries, open_library
from ...io.import_frame import import_frame
from ...io.level.properties import INT32, LEVEL_FILE
from ...io.level.read import read_level
from ...io.level_rebuild.class_files import class_file_name, class_files
from ...io.level_rebuild.oboa_xml import NAME_BYTES, OBOA_FILE, Setup, oboa_xml, stored_setups
from ...io.level_rebuild.onlv_file import placed_file_bytes, stored_level
from ...io.level_rebuild.place import ORDER_FILE, PLACED_FILE, order_text
from ...io.oban.record import matrix_from_columns, stored_columns
from ...io.oban.write import oni_file_bytes
from ...io.objects.properties import (OBJECT_DOOR_GUNK_ID, OBJECT_DOOR_ID, OBJECT_DOOR_LEAF, OBJECT_NAME, OBJECT_ORIGIN,
                                      OBJECT_PHYSICS, OBJECT_SCALE, OBJECT_SCRIPT_ID, OBJECT_SETUP, SETUP_FLAGS,
                                      SETUP_POSITION, SETUP_ROTATION)
from ...io.objects.read import empty_setup
from ..shared.edits import dropped_mesh_edits
from ..shared.motion import animation_of, motions
from ..shared.parts import scene_parts
from ..shared.textures import shown_textures, slot_textures, texture_outputs
from .objects import RIGID, moved_placement
from .scene import refusal, settled

CLASSES_FOLDER = "classes"
NAMED = 5           # placed objects named in a message, at most


def placed_objects(objects, errors) -> dict:
    """{level file: [placed objects an import made of its OBOA]} among `objects`, door leaves
    aside (their door classes carry them); an object whose file property is not text into
    `errors`."""
    levels = {}
    for obj in objects:
        if OBJECT_NAME in obj and LEVEL_FILE in obj and OBJECT_DOOR_LEAF not in obj:
            try:
                levels.setdefault(text(obj, LEVEL_FILE, f"object '{obj.name}'"), []).append(obj)
            except ObanError as error:
                errors.append(str(error))
    return levels


def placed_setups(c, doors) -> dict:
    """{setup index: name} of the placed objects of the level file `c` (a Container) holds: its
    OBOA's setups in use, the leaves of `doors` (its Door records) aside; {} where the file
    holds no OBOA (a loose level's ONLV, whose placed objects the import cannot read)."""
    if not c.with_data(OBOA_TAG):
        return {}
    leaves = {n for door in doors for n in door.setups if n is not None}
    return {n: record["name"].split(b"\0", 1)[0].decode("latin-1")
            for n, record in enumerate(stored_level(c).records)
            if n not in leaves and not empty_setup(record)}


def placed_left_out(path, setups, objects) -> list:
    """The warning, if any, that placed objects of the level at `path` ({setup index: name},
    placed_setups') are not among `objects` (the scene's, by OBJECT_SETUP), so its rebuild
    leaves them out: all of them where the level was imported without Placed Objects, some
    where they were deleted (which the export cannot tell from an object forgotten)."""
    present = {obj.get(OBJECT_SETUP) for obj in objects}
    missing = [name or f"setup {n}" for n, name in setups.items() if n not in present]
    if not missing:
        return []
    named = listed(missing, NAMED)
    which = (f"none of its {len(setups)} placed objects is in the scene" if len(missing) == len(setups) else
             f"{len(missing)} of its {len(setups)} placed objects {'is' if len(missing) == 1 else 'are'} not in the "
             "scene")
    return [f"{path}: {which} ({named}): the rebuilt level leaves {'it' if len(missing) == 1 else 'them'} out "
            "(imported without Placed Objects, or deleted); import the level with Placed Objects to keep them"]


def placed_in_level(context, path, objects, classes, frame, tolerance):
    """The placed objects `objects` of the level at `path` with an environment (rebuilt by
    -create:level, docs/level.md 13): ({class file: bytes} of what the objects show edited,
    {file in placed/: bytes}: their setups (the scene's, each with its record as stored) and
    the order stored, leaves and placed objects (io/level_rebuild/place.py puts them into the
    ONLV -create:level builds), notes, refusals, dropped edits. `classes`: the rebuild's class
    files so far."""
    with open_library(path) as library:
        stored, level = stored_level(library.main), read_level(path, library)
    leaves = {n for door in level.doors for n in door.setups if n is not None}
    entries, written, notes, refused, dropped = _scene_setups(context, objects, len(stored.records),
                                                              stored.records["particles"] != 0, classes, frame,
                                                              tolerance)
    refused += [f"object '{name}': its setup ({index}) is a door's leaf, which -create:level makes of the door"
                for (index, name), _ in entries if index in leaves]
    refused += _particles_of_no_object([(n, record["name"].split(b"\0", 1)[0].decode("latin-1"))
                                        for n, record in enumerate(stored.records)
                                        if empty_setup(record) and record["particles"]])
    entries.sort(key=lambda entry: entry[0])
    order = sorted([(n, stored.records[n]["name"].split(b"\0", 1)[0].decode("latin-1")) for n in leaves]
                   + [(index, k) for k, ((index, _), _) in enumerate(entries)], key=lambda entry: entry[0])
    setups = [(setup, stored.records[index]) for (index, _), setup in entries]
    placed = {PLACED_FILE.format(level.name): placed_file_bytes(f"{level.name}_placed", setups),
              ORDER_FILE.format(level.name): order_text([entry for _, entry in order])}
    return written, placed, notes, refused, dropped


def placed_folder(path) -> str:
    """The folder of the level of placed objects alone at `path`: its file's name, no extension."""
    return os.path.splitext(os.path.basename(path))[0]


def export_placed_level(context, path, objects, directory, warnings, despite, frame, tolerance, source) -> Made:
    """The folder `directory`/<file name> of the level of placed objects alone at `path`:
    OBOA<name>.xml and classes/; Made(XML, source(name, quads, rooms, objects), first object,
    0, OniSplit's commands). `frame`: the (scale, axes) of objects that do not say. ObanError,
    nothing written, where an object cannot be carried (or, unless `despite`, an edit would be
    dropped)."""
    with open_library(path) as library:
        stored, classes = stored_setups(path, library), class_files(path, library=library)
    entries, written, notes, refused, dropped = _scene_setups(context, objects, len(stored.setups), stored.particles,
                                                             classes, frame, tolerance)
    unused = {n for n, setup in enumerate(stored.setups)   # of which the import made no object (read.empty_setup)
              if not setup.flags and not setup.geometries and not setup.animation}
    refused += _particles_of_no_object([(n, stored.setups[n].name) for n in sorted(unused) if stored.particles[n]])
    entries += [((n, ""), stored.setups[n]) for n in sorted(unused)]
    setups = [setup for _, setup in sorted(entries, key=lambda entry: entry[0])]
    if refused:
        raise refusal(path, "rebuilt", refused)
    settled(path, dropped, despite, warnings, "rebuilt")
    warnings += [f"{path}: {note}" for note in notes]
    warnings += placed_left_out(path, {n: setup.name for n, setup in enumerate(stored.setups) if n not in unused},
                                objects)
    classes.update(written)
    name = placed_folder(path)
    try:
        xml = oboa_xml(setups)
    except ObanError as error:
        raise ObanError(path, f"cannot be rebuilt: {error}") from None
    files = [OutputFile(OBOA_FILE.format(stored.name), xml), OutputFile(CLASSES_FOLDER, None)]
    files += [OutputFile(os.path.join(CLASSES_FOLDER, file), data) for file, data in classes.items()]
    target = os.path.join(directory, name)
    write_job(FileJob(objects[0], path, files, folder=name, sources=[path, os.path.splitext(path)[0] + ".raw"]),
              directory)
    xml, folder = os.path.join(target, OBOA_FILE.format(stored.name)), os.path.join(target, CLASSES_FOLDER)
    commands = (f"OniSplit -create {folder} {xml}, then -import:nosep {folder} "
                f"{os.path.join('OUT', os.path.basename(path))}")
    return Made(xml, source(name, 0, 0, sum(1 for setup in setups if setup.flags)), objects[0], 0.0, commands)


def _particles_of_no_object(setups) -> list:
    """The refusal of each setup (index, name) that links particles (ENVP) and holds no flags,
    geometry or animation: the import made no object of it, and the rebuild, which does not
    carry particles, would leave them out."""
    return [f"setup {n} ('{name}') links particles (ENVP) and no flags, geometry or animation (the import made no "
            "object of it): the rebuild does not carry particles" for n, name in setups]


def _scene_setups(context, objects, count, particles, classes, frame, tolerance):
    """([((setup index, object name), Setup)] of each object, at its setup's place), {class
    file: bytes} written from the scene, notes, refusals, dropped edits. `count` setups were
    read, `particles[n]`: setup n links particles."""
    entries, written, notes, refused, dropped = [], {}, [], [], []
    with Libraries() as libraries:
        for obj in objects:
            label = f"object '{obj.name}'"
            try:
                index = whole(obj, OBJECT_SETUP, label, (0, count - 1))
                if particles[index]:
                    raise ObanError(label, "its setup links particles (ENVP), which the export does not carry")
                setup, files, note, edits = _object(context, obj, label, classes, libraries, frame, tolerance)
            except ObanError as error:   # named after the object where the writer named an instance
                refused.append(str(error) if str(error).startswith(label) else f"{label}: {error}")
                continue
            for file, data in files.items():
                if written.setdefault(file, (data, label))[0] != data:
                    refused.append(f"{label}: {written[file][1]} writes {file} otherwise: give each its own name")
            entries.append(((index, obj.name), setup))
            notes += note
            dropped += edits
    return entries, {file: data for file, (data, _) in written.items()}, notes, refused, dropped


def _object(context, obj, label, classes, libraries, frame, tolerance):
    """(its Setup, {class file: bytes} of what it shows edited, notes, dropped edits)."""
    flags = unsigned32(whole(obj, SETUP_FLAGS, label, INT32))
    name = text(obj, OBJECT_NAME, label, limit=NAME_BYTES)
    files, notes, edits, animation, geometries = {}, [], [], "", []
    if obj.type == "MESH":   # its mesh says how it was imported (a still object does not)
        if obj.mode == "EDIT":
            obj.update_from_editmode()
        frame = import_frame(obj.data, f"{label} mesh '{obj.data.name}'", *frame)
        geometries = _meshes(obj, label, classes, libraries, frame, files, notes, edits)
    if is_animated(obj):
        motion = animation_of(motions(context, [(obj, None)], *frame)[0], tolerance)
        animation = motion[0].name
        if not motion[1]:
            files[class_file_name("OBAN" + animation)] = oni_file_bytes(motion[0])
            notes.append(f"object '{obj.name}': animation '{animation}' written from its motion")
    placement = _as_read(obj, label) if is_animated(obj) else _placement(obj, label, frame)
    setup = Setup(name=name, flags=flags, door_gunk_id=whole(obj, OBJECT_DOOR_GUNK_ID, label, INT32, 0),
                  door_id=whole(obj, OBJECT_DOOR_ID, label, INT32, 0),
                  physics=unsigned32(whole(obj, OBJECT_PHYSICS, label, INT32, 0)),
                  script_id=whole(obj, OBJECT_SCRIPT_ID, label, INT32, 0), geometries=geometries,
                  animation=animation, **placement)
    return setup, files, notes, edits


def _meshes(obj, label, classes, libraries, frame, files, notes, edits) -> list:
    """The M3GM names of a mesh object's parts; into `files` each part not as read and each
    texture whose image was edited, or new (its TXMP written from the image)."""
    parts, scene = scene_parts(obj, label, *frame, libraries)
    slots = slot_textures(obj.data)
    edits += [f"{label}: {edit}" for edit in dropped_mesh_edits(obj, parts, scene, slots)]
    pairs, unshown = shown_textures([(part.name, *slots[part.slot]) for part in parts], label)
    for part, texture in unshown:
        if class_file_name("TXMP" + texture) not in classes:
            raise ObanError(label, f"part '{part}' shows texture '{texture}', which is not one of the level's and no "
                                   "image shows it")
    new = [(texture, image) for texture, image in pairs
           if texture and (class_file_name("TXMP" + texture) not in classes or image_edited(image))]
    for (texture, image), file in zip(new, texture_outputs(new, label, libraries, {})):
        files[class_file_name("TXMP" + texture)] = file.data
        notes.append(f"{label}: texture '{texture}' written from image '{image.name}': {file.note}")
    for part in parts:
        texture = slots[part.slot][0]
        if not part.stored:
            files[class_file_name("M3GM" + part.name)] = part.file_bytes(texture)
            notes.append(f"{label}: mesh '{part.name}' written from the scene ({part.note})")
    return [part.name for part in parts]


def _as_read(obj, label) -> dict:
    """The setup's placement as the import read it."""
    return {"position": numbers(obj, SETUP_POSITION, label, 3).astype(np.float32),
            "rotation": numbers(obj, SETUP_ROTATION, label, 4).astype(np.float32),
            "scale": float(np.float32(number(obj, OBJECT_SCALE, label))),
            "origin": numbers(obj, OBJECT_ORIGIN, label, 12).astype(np.float32)}


def _placement(obj, label, frame) -> dict:
    """A still object's placement: as read where it stands where the import put it, else its
    world matrix in Oni's axes (the import's scale and axes undone) as the origin, its
    translation, rotation (the stored quaternion) and scale; ObanError where that matrix is
    not one scale of a rotation (sheared, mirrored, scaled unevenly) or not finite."""
    read = _as_read(obj, label)
    moved = moved_placement(obj, label, matrix_from_columns(read["origin"]), frame)
    if moved is None:
        return read
    origin, lengths = moved[:2]
    size = float(lengths.mean())
    rotation = origin[:3, :3] / size
    if np.abs(rotation.T @ rotation - np.eye(3)).max() > RIGID or np.linalg.det(rotation) < 0:
        raise ObanError(label, "its placement is sheared, mirrored or scaled unevenly: an object setup holds a "
                               "rotation and one scale")
    quaternion = stored_from_hamilton(matrix_quaternions(rotation[None]))[0].astype(np.float32)
    return {"position": origin[:3, 3].astype(np.float32), "rotation": quaternion, "scale": size,
            "origin": stored_columns(origin)}

