"""Character bodies back to the game (docs/characters.md, "Exporting a body"): for each character
armature, its body set TRBS<name>.oni (five levels of detail), its textures TRMA<name>.oni with a
TXMP<name>.oni per texture, and, for an armature a character class (ONCC) was imported from,
ONCC<name>.oni linking them (every other byte as read). An imported body left unchanged is
written from its files as stored, bit for bit; an edited part's mesh (oni/export/bodies/parts.py) replaces
it at every level of detail, a moved bone's head its translation; a body made in Blender is
one list of meshes for the five levels, as OniSplit's -create:trbs makes one.

Every armature's files are made before any is written, then written as one job
(core/output_files.py): each read back by the add-on's readers and checked, all put in place
together, an armature whose files fail writing nothing."""

from ....core.errors import ObanError
from ....core.output_files import FileJob, OutputFile, file_name
from ....core.report import Report, listed
from ...io.characters.body_write import PartMesh, body_file_bytes, character_file_bytes, textures_file_bytes
from ...io.characters.properties import BODY, BODY_FILE, BODY_INSTANCE, CHARACTER, CHARACTER_FILE, CHARACTER_INSTANCE
from ...io.characters.read import ONCC_BODY_AT, ONCC_TEXTURES_AT, TRBS_LEVELS
from ...io.characters.stored import stored_class, stored_levels
from ...io.objects.properties import TEXTURE_NAME
from ..shared.edits import named
from ..shared.jobs import export_jobs, refuse_unless_despite
from ..shared.parts import UNCHANGED, read_from
from ..shared.textures import linked_notes, shown_textures, texture_outputs
from .checks import body_check, class_check, textures_check
from .parts import SceneBody, scene_body

NEW = "new"


def export_bodies(context, armatures, directory, settings) -> Report:
    """Each armature's body files in `directory`: Made(path, what the readers give back of it,
    the armature, 0, how it was made) per file, a file two armatures share written once.
    `settings`: the scale and axes of an armature that does not say, `despite_edits`."""
    return export_jobs(armatures, "armatures", lambda armature, *made: _job(armature, settings, *made), directory,
                       f"give each body its own name ('{BODY}', '{CHARACTER}', the textures' '{TEXTURE_NAME}')",
                       settings.replace_sources)


def _job(armature, settings, libraries, encoded, report):
    """The files of one armature (a _Job), or None with its error in the report."""
    label = f"armature '{armature.name}'"
    try:
        scene = scene_body(armature, settings.global_scale, settings.axes, libraries)
        refuse_unless_despite(label, scene.dropped, settings.despite_edits)
        notes = []
        stored, levels_note = _stored_levels(armature, scene, libraries, label)
        levels, replaced, retextured = _levels(scene, stored)
        character = _stored_class(armature, libraries, label, notes)
        names = _names(armature, character)
        textures = _texture_names(scene, stored, character[2] if character else None, replaced)
        pairs, unshown = shown_textures([(scene.body.names[index], part.texture, part.image)
                                         for index, part in scene.parts.items()], label)
        notes += linked_notes(unshown, label) + _unshown_entries(scene, textures, pairs, unshown, label)
        files = texture_outputs(pairs, label, libraries, encoded)
        trma = names["TRMA"] if any(textures) else None
        if trma:
            note = UNCHANGED if character and textures == character[2] else (NEW if stored is None else "edited")
            files.append(OutputFile(file_name(f"TRMA{trma}.oni"), textures_file_bytes(trma, textures),
                                    textures_check(trma, textures), note))
        body = (names["TRBS"], scene.body.names, scene.body.parents, scene.translations, levels)
        files.append(OutputFile(file_name(f"TRBS{names['TRBS']}.oni"), body_file_bytes(*body), body_check(*body),
                                _body_note(scene, stored, replaced, retextured, levels_note)))
        if character:
            data, links, _ = character
            now = {ONCC_BODY_AT: f"TRBS{names['TRBS']}", ONCC_TEXTURES_AT: trma and f"TRMA{trma}"}
            same = all(links.get(at) == (name or None) for at, name in now.items())
            files.append(OutputFile(file_name(f"ONCC{names['ONCC']}.oni"),
                                    character_file_bytes(names["ONCC"], data, links, names["TRBS"], trma),
                                    class_check(names["ONCC"], data, {**links, **now}),
                                    UNCHANGED if same else "its body and texture links set to the new files"))
        elif not armature.get(CHARACTER_FILE):
            notes.append(f"{label}: no ONCC written: it was not imported from a character class (ONCC); link "
                         f"TRBS{names['TRBS']}" + (f" and TRMA{trma}" if trma else "") + " from one (OniSplit's XML of "
                         "an ONCC: BodySet, BodyTextures)")
    except ObanError as error:
        report.errors.append(str(error))
        return None
    report.warnings += [f"{label}: {edit}; written without it" for edit in scene.dropped]
    report.notes += scene.notes + notes + [
        f"{label} object '{part.obj.name}' (part '{scene.body.names[index]}'): {part.placed}"
        for index, part in scene.parts.items() if part.placed] + [
        f"{label} object '{part.obj.name}' (part '{scene.body.names[index]}'): written {part.part.note}"
        for index, part in scene.parts.items() if part.part.remade]
    return FileJob(armature, label, files, sources=_read_from(armature, scene))


def _unshown_entries(scene: SceneBody, textures, pairs, unshown, label) -> list:
    """The note of each TRMA entry kept as read that no part shows (its part shows its mesh's own
    texture): linked, not written."""
    shown = {name.casefold() for name, _ in pairs} | {name.casefold() for _, name in unshown}
    return [f"{label} part '{scene.body.names[p]}': its texture '{name}' is linked (TRMA's as read), not written: "
            f"the part shows its mesh's own" for p, name in enumerate(textures)
            if name and p in scene.parts and name.casefold() not in shown]


def _read_from(armature, scene: SceneBody) -> list:
    """The files the armature's body and class, its parts' meshes and their images were read from."""
    found = [armature.get(key) for key in (BODY_FILE, CHARACTER_FILE)]
    for part in scene.parts.values():
        found += read_from(part.obj.data, [part.image])
    return [path for path in found if isinstance(path, str) and path]


def _names(armature, character) -> dict:
    """{tag: the name its file takes}: the body's and character's as imported (oni_body,
    oni_character), else the armature's; the textures' the one the class read (`character`,
    _stored_class's) links, else the body's."""
    body = armature.get(BODY) if isinstance(armature.get(BODY), str) and armature.get(BODY) else armature.name
    name = armature.get(CHARACTER) if isinstance(armature.get(CHARACTER), str) and armature.get(CHARACTER) \
        else armature.name
    linked = character[1].get(ONCC_TEXTURES_AT) if character else None
    names = {"TRBS": body, "TRMA": linked[len("TRMA"):] if linked else body, "ONCC": name}
    for tag, value in names.items():
        named(tag, value, f"armature '{armature.name}'")
    return names


def _stored_levels(armature, scene: SceneBody, libraries, label):
    """(the five levels as stored, each a list of Mesh or None; or None; why not, '' for no
    reason to say) of an imported armature's TRBS."""
    path = armature.get(BODY_FILE)
    if not isinstance(path, str) or not path:
        return None, ""
    try:
        instance = armature.get(BODY_INSTANCE)
        if not isinstance(instance, int):
            raise ObanError(label, f"property '{BODY_INSTANCE}' is not a descriptor index")
        levels = stored_levels(path, instance, str(armature.get(BODY, "")), libraries.get(path))
    except ObanError as error:
        return None, f"its lower levels of detail written as the scene's parts: its source cannot be read ({error})"
    if any(len(level) != len(scene.body.names) for level in levels):
        return None, f"its lower levels of detail written as the scene's parts: {path} holds a body of other parts"
    return levels, ""


def _levels(scene: SceneBody, stored):
    """(five lists of a PartMesh or None per part; the parts replaced at every level; the parts
    retextured): the stored levels but where a part's object is not an unchanged import of its
    stored mesh, whose scene mesh (or, without an object, none) takes every level; with nothing
    stored, one list. A part kept whose M3GM links a texture of its own other than the one it
    shows now (retextured) keeps its meshes linking none: TRMA's, the one shown."""
    count = len(scene.body.names)
    scene_meshes = [_part_mesh(scene.parts[p]) if p in scene.parts else None for p in range(count)]
    if stored is None:
        return [scene_meshes] * TRBS_LEVELS, list(range(count)), []
    last = stored[-1]
    kept = [p for p in range(count) if _as_stored(scene.parts.get(p), last[p])]
    replaced = [p for p in range(count) if p not in kept]
    retextured = [p for p in kept if p in scene.parts and last[p].texture_name not in ("", scene.parts[p].texture)]
    lists = {}
    for level in stored:
        if id(level) not in lists:
            lists[id(level)] = [_stored_mesh(level[p], p not in retextured) if p in kept else scene_meshes[p]
                                for p in range(count)]
    return [lists[id(level)] for level in stored], replaced, retextured


def _as_stored(part, mesh) -> bool:
    """Whether a part is its stored mesh: no object and none stored, or an unchanged import of it."""
    if part is None or mesh is None:
        return part is None and mesh is None
    return part.part.stored and part.source == (mesh.source, mesh.instance)


def _part_mesh(part) -> PartMesh:
    """A ScenePart as body_file_bytes takes it: its strips, no texture of its own (TRMA's)."""
    p = part.part
    return PartMesh(p.points, p.normals, p.uvs, strips=p.strips, face_normals=p.face_normals,
                    face_normal_indices=p.face_normal_indices)


def _stored_mesh(mesh, own_texture=True) -> PartMesh | None:
    """A stored Mesh as body_file_bytes takes it, linking its own texture (unless not `own_texture`)."""
    if mesh is None:
        return None
    return PartMesh(mesh.points, mesh.normals, mesh.uvs, strips=mesh.strips, face_normals=mesh.face_normals,
                    face_normal_indices=mesh.face_normal_indices,
                    texture_name=(mesh.texture_name or None) if own_texture else None)


def _body_note(scene: SceneBody, stored, replaced, retextured, levels_note) -> str:
    """How the TRBS was made: an unchanged import, a new body, or what changed."""
    names = scene.body.names
    bare = [names[p] for p in replaced if p not in scene.parts]
    if stored is None and not levels_note:
        return NEW + (f"; parts {listed(bare, len(names))} without a mesh (no mesh object on their bones)"
                      if bare else "")
    changes = []
    if replaced:
        changes.append(f"parts {listed([names[p] for p in replaced], len(names))} from the scene at every level of "
                       f"detail (lower levels replaced)")
    if bare:
        changes.append(f"parts {listed(bare, len(names))} without a mesh (no mesh object on their bones)")
    if retextured:
        changes.append(f"parts {listed([names[p] for p in retextured], len(names))} retextured: their meshes link "
                       f"no texture of their own, TRMA's the one they show")
    if scene.moved:
        changes.append(f"translations of {listed(scene.moved, len(names))} from the bones' heads")
    return "; ".join(filter(None, [levels_note] + changes)) or UNCHANGED


def _stored_class(armature, libraries, label, notes):
    """(data, links, texture names) of the ONCC an import read, or None (a note says why when it was read)."""
    path = armature.get(CHARACTER_FILE)
    if not isinstance(path, str) or not path:
        return None
    try:
        instance = armature.get(CHARACTER_INSTANCE)
        if not isinstance(instance, int):
            raise ObanError(label, f"property '{CHARACTER_INSTANCE}' is not a descriptor index")
        return stored_class(path, instance, str(armature.get(CHARACTER, "")), libraries.get(path))
    except ObanError as error:
        notes.append(f"{label}: no ONCC written: its character class cannot be read again ({error})")
        return None


def _texture_names(scene: SceneBody, stored, read, replaced):
    """TRMA's entry per part: the texture its mesh's faces show; as read (`read`, None: no TRMA)
    for a part with no object, and for a part kept as stored (not `replaced`) whose M3GM links
    the texture it shows itself (which the engine shows, not TRMA's)."""
    names = []
    for p in range(len(scene.body.names)):
        part = scene.parts.get(p)
        own = stored[-1][p].texture_name if stored is not None and stored[-1][p] is not None else ""
        if part is None or (p not in replaced and own and part.texture == own):
            names.append(read[p] if read is not None else "")
        else:
            names.append(part.texture)
    return [name or None for name in names]


