"""Oni's characters (docs/characters.md 1, 5): a character class (ONCC) with its body, its
textures and its animations (TRAMs), as read.py reads them. The data classes here are the
contract with the engine and Blender sides."""

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


@dataclass
class BodyPart:
    name: str                # the engine's part name (PART_NAMES; 'Part19' ... past them)
    parent: int              # -1 for the root (part 0)
    translation: np.ndarray  # (3,) float32, TRTA: from its parent, Oni units
    mesh: object             # objects.model.Mesh or None (its texture from TRMA when the M3GM's own link is empty)


@dataclass
class Body:
    name: str                # the TRBS's name without 'TRBS'
    parts: list              # [BodyPart], in part order
    source: str = ""         # the file holding the TRBS (absolute), "" for none
    instance: int = -1       # its descriptor index there

    @property
    def parents(self) -> np.ndarray:
        """(P,) int64, -1 for the root."""
        return np.array([part.parent for part in self.parts], np.int64)

    @property
    def translations(self) -> np.ndarray:
        """(P, 3) float64."""
        return np.array([part.translation for part in self.parts], np.float64).reshape(-1, 3)


@dataclass
class Character:
    name: str                # ONCC name without 'ONCC' (or the TRBS's for a bare body)
    body: Body
    animations: list         # [tram.Tram]: its TRAC's and, recursively, its parents'
    warnings: list = field(default_factory=list)   # e.g. a texture placeholder not found
    source: str = ""         # the file holding the ONCC (absolute), "" for a bare body
    instance: int = -1       # its descriptor index there


class TextureList(NamedTuple):
    """A TRMA as read back by the body export: its name and each part's texture (None: none)."""
    name: str
    textures: list


class ClassLinks(NamedTuple):
    """An ONCC as read back by the body export: its name and the instances it links ({offset: full name})."""
    name: str
    links: dict
