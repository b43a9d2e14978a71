"""The level instance (ONLV, docs/level.md 6): its links checked and followed, and its object
quad map (ONOA): which environment quads each object's gunk is."""

from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ..container.container import (AKEV_TAG, CRSA_TAG, ENVP_TAG, IDXA_TAG, OBOA_TAG, ONLV_TAG, ONOA_TAG, ONSK_TAG,
                                   Container, counted)
from ..container.library import Library
from ..objects.meshes import parse_array
from .arrays import first_bad

# ONLV links: field: (offset, tag)
ONLV_LINKS = {"environment": (0x40, AKEV_TAG), "objects": (0x44, OBOA_TAG), "sky": (0x54, ONSK_TAG),
              "object quads": (0x6C, ONOA_TAG), "particles": (0x70, ENVP_TAG), "corpses": (0x2F8, CRSA_TAG)}
ONLV_SIZE = 0x2FC
ONOA_DTYPE = np.dtype([("tag", "<i4"), ("quads", "<u4")])


@dataclass
class LevelLinks:
    environment: tuple | None = None    # (container, index) of the AKEV
    objects: tuple | None = None        # (container, index) of the OBOA
    sky: str = ""                       # the ONSK's name without 'ONSK'
    object_quads: tuple | None = None   # (container, index) of the ONOA


def read_onlv(library: Library, c: Container, index: int) -> LevelLinks:
    """The ONLV at descriptor `index` of `c`: its links checked, the AKEV, OBOA and ONOA
    followed (a placeholder not found: a warning, that part None)."""
    data, _ = c.instance(index, ONLV_TAG)
    label = c.label(index)
    if len(data) < ONLV_SIZE:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for an ONLV (0x{ONLV_SIZE:x})")
    values = {name: int.from_bytes(data[at:at + 4], "little") for name, (at, _) in ONLV_LINKS.items()}
    found = {name: c.link(values[name], tag, index, name) for name, (_, tag) in ONLV_LINKS.items()}
    environment, objects, quads = (library.follow(c, values[name], ONLV_LINKS[name][1], index, name)
                                   for name in ("environment", "objects", "object quads"))
    return LevelLinks(environment=environment, objects=objects, object_quads=quads,
                      sky="" if found["sky"] is None else c.short_name(found["sky"]))


def read_object_quads(library: Library, c: Container, index: int, quad_count: int | None) -> dict:
    """{object tag: (k,) int32 quad indices} of the ONOA at descriptor `index` of `c`, each
    index checked against the environment's `quad_count` quads (None: no environment); a tag
    listed twice keeps its first list."""
    data, _ = c.instance(index, ONOA_TAG)
    label = c.label(index)
    entries = counted(data, ONOA_DTYPE, c.path, label, "object")
    fields = [f"object {k} quads" for k in range(len(entries))]
    targets = library.follow_all(c, entries["quads"].tolist(), IDXA_TAG, index, fields)
    quads = {}
    for k, (tag, target) in enumerate(zip(entries["tag"].tolist(), targets)):
        if tag in quads:
            continue
        indices = np.zeros(0, np.int32)
        if target is not None:
            ic, ii = target
            indices = parse_array(ic.instance(ii, IDXA_TAG)[0], IDXA_TAG, ic.path, ic.label(ii))
        bad = first_bad((indices < 0) | (indices >= quad_count)) if quad_count is not None else None
        if bad is not None:
            raise ObanError(c.path, f"{label}: object {k} (tag 0x{tag & 0xFFFFFFFF:08x}) lists quad "
                                    f"{int(indices[bad])}, past the environment's {quad_count} quads")
        quads[tag] = indices
    return quads
