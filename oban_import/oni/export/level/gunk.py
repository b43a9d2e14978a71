"""The gunk a level rebuild (rebuild.py, docs/level.md 11) cannot carry: the environment's quads
of a door or piece of furniture (an object tag) are not written, OniSplit makes them again of
the object's class (its OFGA's meshes where the object stands), so an edit to them in Blender
(a face moved, re-textured, re-shaded, re-flagged, deleted, copied or added) is named, never
dropped without a word; a quad triangulated, its corners where they were, is no edit. A door's
is re-modelled through its leaf (oni/export/level/leaves.py); furniture has no mesh of its own
in a level with an environment, so its re-modelling is not carried."""

import numpy as np

from ....core.report import listed
from ..shared.as_read import close
from .scene import NAMED, matched_corners

KINDS = {3: "door", 5: "furniture"}


def edited_gunk(faces, environment) -> list:
    """[what is dropped, one an object] of the `faces` (scene.SceneFaces of a level's
    environment objects) that are an object's gunk: each such face not as its quad of
    `environment` was read (a corner not on one of its quad's as read, shared/as_read.py: a quad
    triangulated is as read; its corners' coordinates and shades, its texture, flags and tag), a
    new one, the faces of a quad that no longer cover it or cover it twice (copied), and each gunk
    quad no face holds any more of an object whose other gunk quads are there."""
    count = len(environment.flags) if environment is not None else 0
    held = np.zeros(count, bool)
    stood_on = np.zeros((count, 4), np.int64)   # how many faces stand on each corner of each quad
    found_gunk = []
    for found in faces:
        gunk = np.flatnonzero(found.tags != -1)
        quads = found.quads[gunk]
        known = quads >= 0
        why = np.where(known, "", "added").astype(object)
        if environment is not None and known.any():
            rows, read = gunk[known], quads[known]
            matched = matched_corners(found.points[rows], environment.points[environment.quad_points[read]],
                                      environment.corner_counts(read))
            held[read] = True
            on = (matched >= 0) & (np.arange(4) < found.sizes[rows, None])
            np.add.at(stood_on, (np.broadcast_to(read[:, None], on.shape)[on], matched[on]), 1)
            for changed, what in reversed(_changes(found, rows, read, matched, environment)):
                why[np.flatnonzero(known)[changed]] = what
        found_gunk.append((found, gunk, quads, why))
    tags, whats, numbers = [], [], []   # by edited face or quad: its object's tag, what ('<object> faces|moved'), its number
    if environment is not None:
        corner = np.arange(4) < environment.corner_counts()[:, None]
        uncovered = ((stood_on == 0) & corner).any(axis=1)
        copied = ((stood_on >= 2) | ~corner).all(axis=1)
    for found, gunk, quads, why in found_gunk:
        if environment is not None:
            as_read = np.where(quads >= 0, quads, 0)
            why[(why == "") & (quads >= 0) & uncovered[as_read]] = "moved or re-shaped"
            why[(why == "") & (quads >= 0) & copied[as_read]] = "copied"
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


def _changes(found, rows, quads, matched, environment) -> list:
    """[((k,) bool, what)] of how the faces `rows` differ from their `quads` as read, each corner
    against the quad's corner it stands on (`matched`, scene.matched_corners'), the weightiest
    first."""
    corners = np.arange(4) < found.sizes[rows, None]     # a triangle's fourth corner is no corner
    on = (np.arange(len(rows))[:, None], np.maximum(matched, 0))
    read_uvs = environment.texture_coordinates[environment.quad_uvs[quads]][on]
    read_names = np.array(environment.texture_names, object)[environment.quad_textures[quads]]
    names = np.array(found.slot_names, object)[found.slots[rows]]
    return [(((matched < 0) & corners).any(axis=1), "moved or re-shaped"),
            (~(close(found.uvs[rows], read_uvs).all(axis=2) | ~corners).all(axis=1), "re-mapped"),
            (names != read_names, "re-textured"),
            (((found.shades[rows] != environment.shades[quads][on]) & corners).any(axis=1), "re-shaded"),
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
