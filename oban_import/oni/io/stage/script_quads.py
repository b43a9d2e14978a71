"""The environment's script ids (docs/stage.md 5): the AKEV's two IDXA arrays, quad indices
(`QuadGroupList`) and their script ids (`QuadGroupId`), pair by pair, sorted by id; what
`env_show ID 0|1` hides or shows. OniSplit: Oni.Metadata/InstanceMetadata.cs (akev),
Oni.Akira/AkiraDatWriter.cs (WriteScriptIds), AkiraDatReader.cs (ReadScriptIndices)."""

import numpy as np

from ....core.errors import ObanError
from ..container.container import AGQG_TAG, AKEV_TAG, IDXA_TAG, Container, counted
from ..container.library import Library
from ..level.arrays import first_bad
from ..level.environment import AKEV_LINKS, QUAD_DTYPE
from ..objects.meshes import parse_array, parse_links

FIELDS = [field for field, _ in AKEV_LINKS]
QUADS, SCRIPT_QUADS, SCRIPT_IDS = FIELDS.index("quads"), FIELDS.index("script quads"), FIELDS.index("script ids")


def script_quads_at(library: Library, c: Container, index: int) -> tuple[dict, dict]:
    """({script id: (k,) int32 quad indices}, {script id: (k,) uint32 their quad flags}) of the
    AKEV at descriptor `index` of `c`; empty without the two arrays."""
    data, _ = c.instance(index, AKEV_TAG)
    label = c.label(index)
    links = parse_links(data, 0, len(AKEV_LINKS), c.path, label)
    arrays = []
    for k in (SCRIPT_QUADS, SCRIPT_IDS):
        target = library.follow(c, links[k], IDXA_TAG, index, FIELDS[k])
        if target is None:
            return {}, {}
        ac, ai = target
        arrays.append(parse_array(ac.instance(ai, IDXA_TAG)[0], IDXA_TAG, ac.path, ac.label(ai)))
    quads, ids = arrays
    if len(quads) != len(ids):
        raise ObanError(c.path, f"{label}: {len(quads)} script quads but {len(ids)} script ids")
    flags = _quad_flags(library, c, index, links[QUADS])
    bad = first_bad((quads < 0) | (quads >= len(flags)))
    if bad is not None:
        raise ObanError(c.path, f"{label}: script quad {bad} is quad {int(quads[bad])}, past the {len(flags)} quads")
    order = np.argsort(ids, kind="stable")
    unique, starts = np.unique(ids[order], return_index=True)
    groups = np.split(quads[order], starts[1:])
    return ({int(i): g.astype(np.int32) for i, g in zip(unique, groups)},
            {int(i): flags[g] for i, g in zip(unique, groups)})


def _quad_flags(library, c, index, link) -> np.ndarray:
    """(q,) uint32: the flags of the AKEV's quads (AGQG)."""
    target = library.follow(c, link, AGQG_TAG, index, "quads")
    if target is None:
        raise ObanError(c.path, f"{c.label(index)}: no quads (AGQG) to check its script quads against")
    qc, qi = target
    return counted(qc.instance(qi, AGQG_TAG)[0], QUAD_DTYPE, qc.path, qc.label(qi), "quads")["flags"].copy()
