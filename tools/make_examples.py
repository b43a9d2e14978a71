"""Writes the bundled example files into examples/ (run from anywhere):

  00001-door_swing.OBAN   a Localized door: opens a quarter turn by frame 50, closes by 99
  00002-fan_loop.OBAN     a looping fan: one turn about y in 48 frames
  OBANcamera_flyby.oni    a 240-frame camera circling a point, looking at it (OniSplit VR32)
  00134-Blackvan_FB.OBAN  the real first key of Blackvan_FB (docs/formats.md; the OBAN page of the Oni wiki), as 1 frame
  OBANlift_pingpong.xml   a ping-pong lift as OniSplit XML

Beside them, written by OniSplit itself (copies of tests/data/objects): level9_Final.dat
+ .raw, a level of nine placed objects, and M3GMobj03_part0.oni + TXMPtex03_rgba.oni, a
loose mesh and its texture; level5_Final.dat + .raw, a level with its environment, door
classes, twelve doors, furniture and object lists (copies of tests/data/environment/level);
a character (copies of tests/data/characters/oni):
ONCCchar0.oni with its body (TRBS), textures (TRMA, TXMP), animation collection (TRAC)
and six animations (TRAM); cutscene/: level12_Final.dat + .raw, level0_Final.dat + .raw and
IGMD/level12/level12_cutscene.bsl, a level made for a cutscene with its script (copies of
tests/data/cutscene/level); and op2_art.prt + .bmp, made by tools/make_op2_example.py.
"""

import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from oban_import.oni.engine.frames import frame_matrices  # noqa: E402
from oban_import.oni.engine.rotations import quaternions, stored_from_hamilton  # noqa: E402
from oban_import.oni.io.oban.record import PINGPONG  # noqa: E402
from oban_import.oni.io.oban.record import IDENTITY, KEY_DTYPE, LOCALIZED, LOOP, Animation, stored_columns  # noqa: E402
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes  # noqa: E402

# Blackvan_FB as the Oni wiki publishes it: start matrix, base matrix, counts (frames and keys cut to 1), key 0
BLACKVAN_HEX = """
C2F5E83F ABD7AAB3 EC891335 EC891335 ED8913B4 C2F5E8BF B1D7AA33 C2F5E83F EB8913B4 6B9A9444 97FD5BC2 5D06DAC2
C2F5E83F 00000000 00000000 00000000 C2F5E83F 00000000 00000000 00000000 C2F5E83F 00000000 00000000 00000000
5000 0100 0000 0100
F40435BF 6A19C4B3 CE3C03B4 F30435BF 6B9A9444 97FD5BC2 5D06DAC2 00000000
"""


def about(axis, angle):
    c, s = math.cos(angle), math.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def animation(name, flags, frames, key_frames, rotations, positions, door_open_frame=0):
    keys = np.zeros(len(key_frames), KEY_DTYPE)
    keys["frame"] = key_frames
    keys["rotation"] = stored_from_hamilton(quaternions(np.asarray(rotations)))
    keys["position"] = positions
    a = Animation(name=name, flags=flags, start_matrix=IDENTITY.copy(), base_matrix=IDENTITY.copy(),
                  ticks_per_frame=80, frames=frames, door_open_frame=door_open_frame, keys=keys)
    m = frame_matrices(a, [0])[0]
    a.start_matrix = stored_columns(m)  # start matrix = frame-0 matrix
    return a


def door():
    """Authored in 3ds Max axes (z up): turns about z; Localized turns z into Oni's y."""
    frames = sorted(set(range(0, 50, 7)) | {49} | set(range(56, 99, 7)) | {99})
    angle = [math.radians(90) * (f / 49 if f <= 49 else (99 - f) / 50) for f in frames]
    return animation("door_swing", LOCALIZED, 100, frames, [about(2, a) for a in angle],
                     np.zeros((len(frames), 3)), door_open_frame=50)


def fan():
    frames = np.arange(48)
    rotations = [about(1, 2 * math.pi * f / 48) for f in frames]
    return animation("fan_loop", LOOP, 48, frames, rotations, np.tile([0.0, 30.0, 0.0], (48, 1)))


def camera():
    """Circles (0, 20, 0) at radius 100 and height 40, its -Z always on the centre."""
    frames = np.arange(0, 240, 8).tolist() + [239]
    rotations, positions = [], []
    for f in frames:
        angle = 2 * math.pi * f / 240
        eye = np.array([100 * math.sin(angle), 40.0, 100 * math.cos(angle)])
        back = eye - [0.0, 20.0, 0.0]
        back /= np.linalg.norm(back)
        right = np.cross([0.0, 1.0, 0.0], back)
        right /= np.linalg.norm(right)
        rotations.append(np.column_stack([right, np.cross(back, right), back]))
        positions.append(eye)
    return animation("camera_flyby", 0, 240, frames, rotations, positions)


def lift():
    """Rises 40 units in 60 frames, easing in and out, and back (PingPong)."""
    frames = np.arange(0, 60, 6).tolist() + [59]
    heights = [40.0 * (3 * (f / 59) ** 2 - 2 * (f / 59) ** 3) for f in frames]
    return animation("lift_pingpong", PINGPONG, 60, frames, [np.eye(3)] * len(frames),
                     np.array([[0.0, h, 20.0] for h in heights]))


def blackvan_bytes():
    record = bytes.fromhex("".join(BLACKVAN_HEX.split()))
    return (1).to_bytes(4, "little") * 2 + bytes(12) + bytes(4) + record  # record header, padding, flags 0


def main(folder=os.path.join(ROOT, "examples")):
    os.makedirs(folder, exist_ok=True)
    files = {
        "00001-door_swing.OBAN": raw_file_bytes(door()),
        "00002-fan_loop.OBAN": raw_file_bytes(fan()),
        "OBANcamera_flyby.oni": oni_file_bytes(camera()),
        "00134-Blackvan_FB.OBAN": blackvan_bytes(),
        "OBANlift_pingpong.xml": xml_bytes(lift()),
    }
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} examples to {folder}")


if __name__ == "__main__":
    main(*sys.argv[1:])
