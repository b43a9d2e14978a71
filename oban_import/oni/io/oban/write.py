"""Bytes for an Animation in each container: raw, .oni and OniSplit XML (docs/formats.md,
containers 1, 2 and 4)."""

import numpy as np

from ..container.container import OBAN_TAG
from ..container.instance_file import instance_file_bytes, instance_name
from ..container.xml_guard import float_texts
from .record import FLAGS, KNOWN_FLAGS, Animation, record_bytes


def raw_file_bytes(animation: Animation) -> bytes:
    """A raw instance file: the record as it was read, its own header included."""
    return record_bytes(animation, *animation.record_header)


def oni_file_bytes(animation: Animation) -> bytes:
    """An OniSplit-style VR32 .oni file holding one named OBAN (its name checked: instance_name)."""
    return instance_file_bytes([(OBAN_TAG, instance_name("OBAN", animation.name), record_bytes(animation)[8:])])


def xml_bytes(animation: Animation) -> bytes:
    """OniSplit XML holding one OBAN, laid out like the samples (2-space indents, LF).

    Flags are the XML names separated by single spaces (`<Flags />` for none), or the
    number when an unknown bit is set. Each float is its shortest float32 text (numpy's),
    checked to read back to the same bits as onisplit_xml and OniSplit read it (text ->
    double -> float32); the rare text that would not is written as the exact double.
    """
    keys = animation.keys
    count = len(keys)
    texts = float_texts(np.concatenate([animation.start_matrix, animation.base_matrix,
                                         keys["rotation"].ravel(), keys["position"].ravel()]))
    start, base = " ".join(texts[:12]), " ".join(texts[12:24])
    rotations = [" ".join(texts[24 + 4 * i:28 + 4 * i]) for i in range(count)]
    positions = [" ".join(texts[24 + 4 * count + 3 * i:27 + 4 * count + 3 * i]) for i in range(count)]
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<Oni>", '  <OBAN id="0">',
             f"    {_flags_element(animation.flags)}",
             f"    <InitialTransform>{start}</InitialTransform>",
             f"    <BaseTransform>{base}</BaseTransform>",
             f"    <FrameLength>{animation.ticks_per_frame}</FrameLength>",
             f"    <FrameCount>{animation.frames}</FrameCount>",
             f"    <HalfStopFrame>{animation.door_open_frame}</HalfStopFrame>",
             "    <KeyFrames>"]
    for rotation, position, frame in zip(rotations, positions, keys["frame"].tolist()):
        lines += ["      <OBANKeyFrame>",
                  f"        <Rotation>{rotation}</Rotation>",
                  f"        <Translation>{position}</Translation>",
                  f"        <Time>{frame}</Time>",
                  "      </OBANKeyFrame>"]
    lines += ["    </KeyFrames>", "  </OBAN>", "</Oni>", ""]
    return "\n".join(lines).encode("utf-8")


def _flags_element(flags):
    if not flags:
        return "<Flags />"
    if flags & ~KNOWN_FLAGS:
        return f"<Flags>{flags}</Flags>"
    return f"<Flags>{' '.join(flag.xml for flag in FLAGS if flags & flag.bit)}</Flags>"
