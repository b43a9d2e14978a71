"""Which of a level's environment quads the game draws (docs/level.md, "In Blender"): the quads
it draws, the ones it never does (markers: door frames, ghosts, stair separators, invisible
and broken quads), each door's closed gunk (shown only while the door is shut; its leaves
replace it), and the door-frame quads an InDoorFrame door hides at level start."""

from dataclasses import dataclass

import numpy as np

from ..io.level.model import DOOR_FLAGS, NOT_DRAWN, OBJECT_TAG_TYPES, Environment, LevelContents

DOOR = next(kind for kind, name in OBJECT_TAG_TYPES.items() if name == "door")
IN_DOOR_FRAME = DOOR_FLAGS["InDoorFrame"]


@dataclass
class QuadGroups:
    """Quad indices, in the file's order, of each group; zero-area quads are in none."""
    drawn: np.ndarray
    markers: np.ndarray
    door_gunk: dict           # {door object id: its gunk's quads}
    door_frames: np.ndarray   # the frames InDoorFrame doors hide


def quad_groups(environment: Environment, contents: LevelContents) -> QuadGroups:
    flags = environment.flags.astype(np.int64)
    made = ~environment.zero_area
    gunk = made & (environment.object_types == DOOR)
    hidden = np.zeros(len(flags), bool)
    hidden[framed_quads(environment, contents)] = True
    marker = (flags & NOT_DRAWN) != 0
    ids = environment.object_ids
    return QuadGroups(
        drawn=np.flatnonzero(made & ~gunk & ~marker & ~hidden),
        markers=np.flatnonzero(made & ~gunk & marker),
        door_gunk={door: np.flatnonzero(gunk & (ids == door)) for door in np.unique(ids[gunk]).tolist()},
        door_frames=np.flatnonzero(made & ~gunk & ~marker & hidden))


def framed_quads(environment: Environment, contents: LevelContents) -> np.ndarray:
    """The quads of the door frames (AKDA) InDoorFrame doors find: each such door takes the first
    frame, in the file's order, standing exactly (float32 ==) at its frame position."""
    wanted = np.array([door.frame_position for door in contents.doors if door.door_flags & IN_DOOR_FRAME],
                      np.float32).reshape(-1, 3)
    frames = environment.door_frames
    if not len(frames):
        return np.zeros(0, np.int64)
    at = (wanted[:, None] == frames["position"][None]).all(axis=2)     # (doors, frames)
    return frames["quad"][at.argmax(axis=1)[at.any(axis=1)]].astype(np.int64)
