"""The gunk a level rebuild (rebuild.py, docs/level.md 11) cannot carry: the environment's quads
of a door or piece of furniture (an object tag) are not written, OniSplit makes them again of
the object's class (its OFGA's meshes where the object stands), so an edit to them in Blender
(a face moved, re-textured, re-shaded, re-flagged, deleted or added) is named, never dropped
without a word. A door's is re-modelled through its leaf (oni/export/level/leaves.py); furniture has
no mesh of its own in a level with an environment, so its re-modelling is not carried."""

import numpy as np

from ....core.report import listed
from ..shared.as_read import close
from .scene import NAMED

KINDS = {3: "door", 5: "furniture"}


def edited_gunk(faces, environment) -> list:
    """[what is dropped, one an object] of the `faces` (scene.SceneFaces of a level's
    environment objects) that are an object's gunk: each such face not as its quad of
    `environment` was read (corners as read: shared/as_read.py), a new one, and each gunk quad no
    face holds any more of an object whose other gunk quads are there."""
    tags, whats, numbers = [], [], []   # by edited face or quad: its object's tag, what ('<object> faces|moved'), its number
    held = np.zeros(len(environment.flags) if environment is not None else 0, bool)
    for found in faces:
        gunk = np.flatnonzero(found.tags != -1)
        quads = found.quads[gunk]
        known = quads >= 0
        held[quads[known]] = True
        why = np.where(known, "", "added").astype(object)
        if environment is not None and known.any():
            for changed, what in reversed(_changes(found, gunk[known], quads[known], environment)):
                why[np.flatnonzero(known)[changed]] = what
        edited = why != ""
        tags.append(found.tags[gunk[edited]])
        whats.append(f"{found.label} faces|" + why[edited])
        numbers.append(gunk[edited])
    if environment is not None:   # of an object some of whose gunk is still there (the others: not exported)
        shown = np.isin(environment.object_tags, np.concatenate(tags + [found.tags for found in faces]))
        gone = np.flatnonzero(~held & shown & (environment.object_tags != -1) & ~environment.zero_area)
        tags.append(environment.object_tags[gone])
        whats.append(np.full(len(gone), "quads|deleted", object))
        numbers.append(gone)
    tags, whats, numbers = (np.concatenate(found or [np.zeros(0)]) for found in (tags, whats, numbers))
    dropped = []
    for tag in dict.fromkeys(tags.tolist()):   # an object at a time, in the order met
        of = tags == tag
        said = [_listed(what, numbers[of][whats[of] == what]) for what in dict.fromkeys(whats[of].tolist())]
        dropped.append(f"{_whose(tag)} was edited ({'; '.join(said)}): the rebuild makes an object's gunk again "
                       f"of its class as read (a door is re-modelled through its leaf; furniture's re-modelling "
                       f"is not carried)")
    return dropped


def _changes(found, rows, quads, environment) -> list:
    """[((k,) bool, what)] of how the faces `rows` differ from their `quads` as read, the
    weightiest first."""
    corners = np.arange(4) < found.sizes[rows, None]     # a triangle's fourth corner is no corner
    read_points = environment.points[environment.quad_points[quads]]
    read_uvs = environment.texture_coordinates[environment.quad_uvs[quads]]
    read_names = np.array(environment.texture_names, object)[environment.quad_textures[quads]]
    names = np.array(found.slot_names, object)[found.slots[rows]]
    return [(~((close(found.points[rows], read_points).all(axis=2) | ~corners).all(axis=1)
               & (environment.corner_counts(quads) == found.sizes[rows])), "moved or re-shaped"),
            (~(close(found.uvs[rows], read_uvs).all(axis=2) | ~corners).all(axis=1), "re-mapped"),
            (names != read_names, "re-textured"),
            (((found.shades[rows] != environment.shades[quads]) & corners).any(axis=1), "re-shaded"),
            (found.flags[rows] != environment.flags[quads], "re-flagged"),
            (found.tags[rows] != environment.object_tags[quads], "given to another object")]


def _listed(what, numbers) -> str:
    """"object 'X' faces 3, 4 (and 2 more) moved" of `what` ('object 'X' faces|moved') and the
    faces' (or quads') numbers."""
    where, how = what.split("|")
    return f"{where} {listed(numbers.astype(int).tolist(), NAMED, quoted=False)} {how}"


def _whose(tag) -> str:
    """'the gunk of door 5' of an object tag."""
    kind = (int(tag) & 0xFFFFFFFF) >> 24
    return f"the gunk of {KINDS.get(kind, f'object type {kind}')} {int(tag) & 0xFFFFFF}"
