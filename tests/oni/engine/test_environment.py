"""Which environment quads the game draws (oni/engine/environment.py, docs/level.md 9), on a
generated level (tools/generate/level_generate.py) holding what the engine's door code decides:
door frames (AKDA) an InDoorFrame door finds and those it does not (one float32 step off, at
the door's own position, at another door's frame position, a second frame at a found one's
position), and door quads of zero area, gunk and frame. The groups expected are written out
here quad by quad."""

import level_generate as lg
import numpy as np
import pytest

from oban_import.oni.engine.environment import quad_groups
from oban_import.oni.io.level.read import read_level

# LEVEL.md 1 and 5: the InDoorFrame door flag; the quad flags the game never draws
IN_DOOR_FRAME = 0x4
NOT_DRAWN = 0x1 | 0x2 | 0x4 | 0x8 | 0x2000 | 0x40000
DOOR_TAG = 3


def frame(quad, position):
    """An AKDA door frame of `quad` standing at `position` (box, facing and size are not looked at)."""
    return quad, (0, 0, 0, 1, 1, 1), tuple(float(v) for v in np.float32(position)), 0.0, 10.0, 20.0


@pytest.fixture(scope="module")
def framed(tmp_path_factory):
    """(the generated level, what is read of it, the quads the engine hides, the quads of zero area).

    The engine (OBJrDoor_LevelBegin) gives an InDoorFrame door the first AKDA frame whose
    position equals its frame position exactly (float32 ==, so -0 is 0) and makes that frame's
    quad invisible; a door without the flag looks for none. Door 3 is the standard level's
    InDoorFrame door (frame position 7 8 9), door 1 has none (1 2 3); door 98 is added, an
    InDoorFrame door at 0 20.25 -30 whose first frame is a quad of zero area."""
    level = lg.standard_level(np.random.default_rng(5))
    env = level.environment
    door_98 = (0.0, 20.25, -30.0)
    level.lists["Door"].append(lg.door(98, lg.GenDoor("dr_single", 98, 0, IN_DOOR_FRAME, door_98), (1.0, 2.0, 3.0)))
    door_3 = level.lists["Door"][2]
    assert door_3.id == 3
    env.flags[40:47] = 0                                       # plain quads of no object: drawn but for a frame
    zero_area = [10, 1, 11, 45]                                # door 1's second gunk quad, both of door 2's, a frame
    env.quad_points[zero_area] = env.quad_points[zero_area, :1]
    env.door_frames = [
        frame(40, np.nextafter(np.float32([7, 8, 9]), np.float32(10))),   # one step off: not door 3's
        frame(41, (7, 8, 9)),                                              # door 3's frame: hidden
        frame(42, (7, 8, 9)),                                              # a second frame there: the first was found
        frame(43, door_3.position),                                        # at the door itself, not its frame position
        frame(44, (1, 2, 3)),                                              # door 1 has no InDoorFrame flag
        frame(45, (-0.0, 20.25, -30.0)),                                   # door 98's, of zero area: hidden
        frame(46, door_98),                                                # a second one there
    ]
    read = read_level(lg.write_level(level, tmp_path_factory.mktemp("framed")))
    return level, read, {41, 45}, set(zero_area)


def test_the_level_holds_the_cases(framed):
    level, read, hidden, zero_area = framed
    assert np.flatnonzero(read.environment.zero_area).tolist() == sorted(zero_area)
    assert read.warnings[0] == "AKEVgen: 4 quads of zero area (quad 1 first): skipped"
    doors = {door.id: door for door in read.doors}
    assert doors[3].door_flags & IN_DOOR_FRAME and doors[98].door_flags & IN_DOOR_FRAME
    assert not doors[1].door_flags & IN_DOOR_FRAME


def test_each_quad_is_in_the_group_the_engine_puts_it(framed):
    """Zero-area quads in no group (a door's gunk and a found frame too); door gunk by door; quads
    of a never-drawn flag markers; the found frames' quads hidden; every other quad drawn."""
    level, read, hidden, zero_area = framed
    env = level.environment
    drawn, markers, frames, gunk = [], [], [], {}
    for quad, (flags, tag) in enumerate(zip(env.flags.tolist(), env.tags.tolist())):
        if quad in zero_area:
            continue
        if tag >> 24 == DOOR_TAG:
            gunk.setdefault(tag & 0xFFFFFF, []).append(quad)
        elif flags & NOT_DRAWN:
            markers.append(quad)
        elif quad in hidden:
            frames.append(quad)
        else:
            drawn.append(quad)
    groups = quad_groups(read.environment, read)
    assert groups.drawn.tolist() == drawn and groups.markers.tolist() == markers
    assert groups.door_frames.tolist() == frames == [41]
    assert {door: quads.tolist() for door, quads in groups.door_gunk.items()} == gunk
    assert gunk[1] == [0] and 2 not in gunk                    # door 2's gunk is all of zero area
    assert {40, 42, 43, 44, 46} <= set(drawn)
