"""A FILM, the recording `playback CHAR FILM` plays (docs/stage.md 3; OniSplit:
Oni.Metadata/InstanceMetadata.cs, film; Oni.Level/LevelImporter.cs, WriteDatFilm)."""

import numpy as np

from ....core.errors import ObanError
from ..container.container import TRAM_TAG, Container, counted
from ..level.arrays import first_bad
from .model import FILM_TAG, Film

HEAD_DTYPE = np.dtype([("position", "<f4", 3), ("facing", "<f4"), ("desired_facing", "<f4"),
                       ("head_facing", "<f4"), ("head_pitch", "<f4"), ("frame_count", "<i4"),
                       ("animations", "<u4", 2)])
FRAMES_OFFSET = 0x34          # the frames' u32 count (12 bytes past the animations), the frames after it
FRAME_DTYPE = np.dtype([("mouse_delta", "<f4", 2), ("keys", "<u8"), ("frame", "<u4"), ("padding", "V4")])
assert HEAD_DTYPE.itemsize == 0x28 and FRAME_DTYPE.itemsize == 24


def film_at(c: Container, index: int) -> Film:
    """The FILM at descriptor `index` of `c`, its TRAM links checked (their names kept)."""
    data, _ = c.instance(index, FILM_TAG)
    label = c.label(index)
    frames = counted(data, FRAME_DTYPE, c.path, label, "frame", offset=FRAMES_OFFSET)
    head = np.frombuffer(data, HEAD_DTYPE, count=1)[0]
    floats = np.concatenate([head["position"], [head[f] for f in ("facing", "desired_facing", "head_facing",
                                                                  "head_pitch")]])
    if not np.isfinite(floats).all() or not np.isfinite(frames["mouse_delta"]).all():
        raise ObanError(c.path, f"{label}: non-finite value in its position, facings or mouse deltas")
    if head["frame_count"] < 0:
        raise ObanError(c.path, f"{label}: frame count {int(head['frame_count'])}")
    late = first_bad(frames["frame"] > head["frame_count"])
    if late is not None:
        raise ObanError(c.path, f"{label}: frame {late} is at {int(frames['frame'][late])}, past its "
                                f"{int(head['frame_count'])} frames")
    links = [c.link(int(v), TRAM_TAG, index, f"animation {k}") for k, v in enumerate(head["animations"])]
    return Film(name=c.short_name(index), position=head["position"].copy(), facing=float(head["facing"]),
                desired_facing=float(head["desired_facing"]), head_facing=float(head["head_facing"]),
                head_pitch=float(head["head_pitch"]), frame_count=int(head["frame_count"]),
                animations=tuple("" if i is None else c.short_name(i) for i in links), frames=frames)
