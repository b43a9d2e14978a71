"""OniSplit's XML of TRAMs (docs/characters.md 9): the reader gives the Tram OniSplit's -create
makes of a file, the writer a file OniSplit's -create reads back to the same bytes.

Against OniSplit itself (tests/data/characters/onisplit: made by OniSplit v0.9.99.2 from the files
these tests write, see its README): its .oni of our XML is tram_oni_bytes of what we read from that
XML, and its XML of our .oni files reads back to the same Tram. Against the six samples (OniSplit's
XML and .oni), generated Trams of every case, all 65536 6-byte codes, and one test per bad input
(docs/bad_input.md), each refused in bounded time and memory. The suite needs neither OniSplit nor
Mono.
"""

import hashlib
import io
import json
import lzma
import os
import re
from unittest import mock

import characters_generate as cg
import numpy as np
import pytest
from limits import measured
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import HEADER_DTYPE
from oban_import.oni.io.trams import tram as tr
from oban_import.oni.io.trams import xml_read as tram_xml_read
from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.tram import Track, Tram
from oban_import.oni.io.trams.write import tram_oni_bytes
from oban_import.oni.io.trams.xml_read import looks_like_tram_xml, read_tram_xml
from oban_import.oni.io.trams.xml_schema import DEGREES, RADIANS, ekey_codes, ekey_degrees
from oban_import.oni.io.trams.xml_write import tram_xml_bytes

DATA = os.path.join(TEST_DATA, "characters")
ONISPLIT = os.path.join(DATA, "onisplit")
SAMPLES = [a["name"] for a in json.load(open(os.path.join(DATA, "manifest.json")))["animations"]]
INPUTS = json.load(open(os.path.join(ONISPLIT, "inputs.json")))
F32 = np.float32
THROW_TARGET = 0x10000
GENERATED = cg.every_tram(np.random.default_rng(7))
GIVEN_TO_ONISPLIT = ("walk", "aim_q", "fire_e", "run", "wrap", "stand", "stand_q", "seven")


def sample_xml(name):
    return os.path.join(DATA, "xml", name + ".xml")


def sample_oni(name):
    return open(os.path.join(DATA, "oni", name + ".oni"), "rb").read()


def read_back(data: bytes, name="x") -> Tram:
    return read_tram_xml(io.BytesIO(data), f"TRAM{name}.xml", len(data))[0]


def record_at(data):
    return int(np.frombuffer(data, HEADER_DTYPE, 1)[0]["data_offset"]) + 8


def onisplit_file(folder, name):
    """One of OniSplit's outputs (a large one kept as .xz)."""
    path = os.path.join(ONISPLIT, folder, name)
    return open(path, "rb").read() if os.path.exists(path) else lzma.decompress(open(path + ".xz", "rb").read())


# --- the Trams given to OniSplit -----------------------------------------------------------------

def xml_holdable(t: Tram, rng, wide=False) -> Tram:
    """A generated Tram made into one OniSplit's XML holds: finite floats in the events and the
    ring, UTF-8 names, events within the animation, attacks of 1 to 6 frames with an extent on each;
    attack lengths below 32768 unless `wide` (OniSplit's own XML of larger ones fails its -create;
    ours writes them signed, as its -create takes them)."""
    frames, attacks = t.frames, t.attacks.copy()
    attacks["knockback"] = rng.normal(1, 0.5, len(attacks))
    attacks["first_frame"] = np.sort(rng.integers(0, frames, len(attacks)))
    attacks["last_frame"] = np.minimum(attacks["first_frame"] + rng.integers(0, 6, len(attacks)), frames - 1)
    if not wide:
        for field in ("hit_stun", "block_stun", "stagger"):
            attacks[field] &= 0x7FFF
    spans = [np.arange(a["first_frame"], a["last_frame"] + 1) for a in attacks]
    extents = cg.random_records(rng, tr.EXTENT_DTYPE, sum(map(len, spans)))
    extents["frame"] = np.concatenate(spans) if spans else []
    info, throw = t.extent_info.copy(), t.throw.copy()
    info["ring"] = rng.uniform(5, 15, 36)
    throw["offset"], throw["relative_facing"], throw["distance"] = (rng.normal(size=(len(throw), 3)),
                                                                    *rng.normal(size=(2, len(throw))))
    events = {name: getattr(t, name).copy() for name in ("particles", "sounds", "footsteps", "self_damage")}
    for name, field, end in (("particles", "first_frame", frames), ("sounds", "frame", frames),
                             ("footsteps", "frame", frames), ("self_damage", "frame", frames + 1)):
        events[name][field] = rng.integers(0, end, len(events[name]))
    for name, word in (("particles", "spark"), ("sounds", "sound")):
        events[name]["name"] = [f"{word}{n}".encode() for n in range(len(events[name]))]
    return Tram(**{**t.__dict__, "attacks": attacks, "extents": extents, "extent_info": info, "throw": throw,
                   **events})


def late_events(t: Tram) -> Tram:
    """`t` with events past its last frame, which OniSplit drops (ValidateFrames): a sound, a
    footstep, a particle and an attack on frame F or later, self-damage on F + 1 (but F is kept)."""
    frames = t.frames
    late = {name: getattr(t, name).copy() for name in ("sounds", "footsteps", "particles", "self_damage")}
    late["sounds"]["frame"][0], late["footsteps"]["frame"][-1] = frames, frames + 3
    late["particles"]["first_frame"][0] = frames
    late["self_damage"]["frame"][:2] = frames + 1, frames
    attack = t.attacks[:1].copy()
    attack["first_frame"], attack["last_frame"] = frames, frames + 2
    return Tram(**{**t.__dict__, **late, "attacks": np.concatenate([t.attacks, attack])})


def far_positions(t: Tram) -> Tram:
    """`t` walking 60 units a frame sideways (x past 327.67 units wraps, as OniSplit casts it) and
    once 3e7 forward (z * 100 past the int32: 0, as Mono casts it)."""
    velocities = t.velocities.copy()
    velocities[:, 0], velocities[3, 1] = 60, 3e7
    return Tram(**{**t.__dict__, "velocities": velocities})


def every_code_tram() -> Tram:
    """One part keyed on each of 21846 frames: every 6-byte code, in order."""
    frames = 21846
    codes = np.resize(np.arange(1 << 16, dtype=np.uint16), (frames, 3))
    return Tram(name="codes", frames=frames, key_size=6, flags=0, used_parts=0, replaced_parts=0,
                heights=np.zeros(frames, F32), velocities=np.zeros((frames, 2), F32),
                tracks=[Track(np.arange(frames), codes)])


def onisplit_cases() -> dict:
    """name: the Tram whose tram_xml_bytes OniSplit was given as TRAM<name>.xml."""
    rng = np.random.default_rng(5)
    cases = {name: xml_holdable(GENERATED[name], rng, wide=name == "run") for name in GIVEN_TO_ONISPLIT}
    events = cg.random_tram(rng, "events", 40, events=True, flags=THROW_TARGET | 0x10)
    cases["events"] = late_events(xml_holdable(events, rng))
    cases["far"] = far_positions(xml_holdable(cg.random_tram(rng, "far", 30, parts=7), rng))
    cases["codes"] = every_code_tram()
    return cases


CASES = onisplit_cases()


# --- the samples ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SAMPLES)
def test_sample_xml_reads_as_onisplit_creates_it(name):
    """OniSplit's -create of each sample XML gives the sample .oni, but for 4 bytes of punch02 (next
    test), where its .oni is kept; our reading gives OniSplit's .oni."""
    created = os.path.join(ONISPLIT, "created_from_samples", name + ".oni")
    onisplit = open(created, "rb").read() if os.path.exists(created) else sample_oni(name)
    assert tram_oni_bytes(read_tram_file(sample_xml(name))) == onisplit


def test_what_onisplits_own_xml_of_punch02_loses():
    """Its degrees for the max attack bound's angle, 333.903473, give radians 1 ulp off the stored:
    the only 4 bytes that differ from the sample .oni, in OniSplit's -create as in our reading. Our
    writer's 333.9035 gives them back."""
    name = "TRAMchar0_punch02"
    read, sample = tram_oni_bytes(read_tram_file(sample_xml(name))), sample_oni(name)
    at = record_at(sample) + tr.RECORD_DTYPE.fields["extent_info"][1] + \
        tr.EXTENT_INFO_DTYPE.fields["max_attack"][1] + tr.ATTACK_BOUND_DTYPE.fields["angle"][1]
    assert len(read) == len(sample) and min(i for i in range(len(sample)) if read[i] != sample[i]) >= at
    assert read[:at] == sample[:at] and read[at + 4:] == sample[at + 4:]
    assert np.frombuffer(read, F32, 1, at)[0] == F32(5.8277154) and np.frombuffer(sample, F32, 1, at)[0] == \
        F32(5.827716)
    written = tram_xml_bytes(read_tram_file(os.path.join(DATA, "oni", name + ".oni")))
    assert b"<Angle>333.9035</Angle>" in written and b"333.903473" in open(sample_xml(name), "rb").read()


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_written_as_xml_reads_back_the_same(name):
    """Our XML of each sample reads back to the same Tram, and to the sample's bytes; OniSplit's
    -create of that very file (its digest below) gives the sample .oni too (the README)."""
    tram = read_tram_file(os.path.join(DATA, "oni", name + ".oni"))
    written = tram_xml_bytes(tram)
    assert hashlib.sha256(written).hexdigest() == INPUTS[name + ".xml"]["sha256"]
    assert INPUTS[name + ".xml"]["created"] == f"../oni/{name}.oni"
    back = read_back(written, name[4:])
    assert cg.tram_differences(back, tram) == []
    assert tram_oni_bytes(back) == sample_oni(name)


@pytest.mark.parametrize("name", SAMPLES)
def test_written_xml_is_laid_out_like_onisplits(name):
    """Line for line OniSplit's layout (a byte-order mark, LF, 4-space indents, `<X />` for empty,
    the same elements and words); only number texts may differ (they read the same: above)."""
    ours = tram_xml_bytes(read_tram_file(os.path.join(DATA, "oni", name + ".oni"))).decode("utf-8")
    theirs = open(sample_xml(name), "rb").read().decode("utf-8")

    def masked(text):
        return [re.sub(r">-?[0-9][^<]*<", ">#<", line) for line in text.split("\n")]
    assert masked(ours) == masked(theirs)


def test_xml_and_oni_samples_read_as_the_same_tram():
    for name in SAMPLES:
        xml, oni = read_tram_file(sample_xml(name)), read_tram_file(os.path.join(DATA, "oni", name + ".oni"))
        assert cg.tram_differences(xml, oni) == ([] if name != "TRAMchar0_punch02" else ["extent_info"]), name


# --- generated Trams -----------------------------------------------------------------------------

def what_xml_holds(t: Tram) -> Tram:
    """`t` as OniSplit's XML holds it, but for the extents and extent info (OniSplit computes them
    from the attacks: checked against its own files below) and the final rotation: run-time fields
    0, 60 fps, duration = frames, varient end and pads 0, shortcut flags 0 or 1, events past the last
    frame dropped, and each position point's x and z from the first one's plus the velocities, in
    float32, one frame at a time, rounded as Mono casts."""
    frames = t.frames
    attacks = t.attacks[t.attacks["first_frame"].astype(np.int16) < frames].copy()
    blur, shortcuts, positions = t.motion_blur.copy(), t.shortcuts.copy(), t.positions.copy()
    for field in ("precedence", "extent_index", "pad"):
        attacks[field] = 0
    blur["pad"], shortcuts["flags"] = 0, shortcuts["flags"] != 0
    if len(positions):
        for field, axis in (("x", 0), ("z", 1)):
            place = [F32(positions[field][0]) * F32(0.01)]
            for step in t.velocities[:-1, axis]:
                place.append(F32(place[-1] + step))
            positions[field] = [cast_to_16_bits(np.rint(np.float64(F32(p * F32(100))))) for p in place]
    return Tram(**{**t.__dict__, "attacks": attacks, "motion_blur": blur, "shortcuts": shortcuts,
                   "positions": positions, "fps": 60, "duration": frames, "varient_end": 0, "name_pointer": 0,
                   "sound_name_pointer": 0, "sound_frame": 0,
                   "sounds": t.sounds[t.sounds["frame"] < frames],
                   "footsteps": t.footsteps[t.footsteps["frame"] < frames],
                   "particles": t.particles[t.particles["first_frame"] < frames],
                   "self_damage": t.self_damage[t.self_damage["frame"] <= frames]})


def cast_to_16_bits(whole):
    """Mono's (short) of a whole double: the low 16 bits of the int32, 0x80000000 past it."""
    return np.int16(np.uint16((int(whole) if abs(whole) < 2 ** 31 else -2 ** 31) & 0xFFFF).view(np.int16))


def ulps(a, b):
    return abs(int(F32(a).view(np.int32)) - int(F32(b).view(np.int32)))


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_trams_round_trip(name):
    """What the XML holds comes back (the final rotation within an ulp: 9% of float32 radians are no
    float32 degrees' radians), and a Tram read from XML comes back exactly, as the same XML."""
    held = xml_holdable(GENERATED[name], np.random.default_rng(5))
    once = read_back(tram_xml_bytes(held), name)
    assert set(cg.tram_differences(once, what_xml_holds(held))) <= {"extents", "extent_info", "final_rotation"}
    assert ulps(once.final_rotation, held.final_rotation) <= 1
    written = tram_xml_bytes(once)
    twice = read_back(written, name)
    assert cg.tram_differences(twice, once) == []
    assert tram_xml_bytes(twice) == written and tram_oni_bytes(twice) == tram_oni_bytes(once)


def random_holdable(seed):
    """A random Tram OniSplit's XML holds: 1 to 120 frames, 1 to 19 parts, 6- or 16-byte (overlay) keys,
    random flags (ThrowTarget every fifth) and masks, every event, fast or slow walks."""
    rng = np.random.default_rng(seed)
    size = 16 if seed % 3 == 0 else 6
    flags = int(rng.integers(0, 1 << 24)) | (tr.OVERLAY if size == 16 else 0) | (THROW_TARGET * (seed % 5 == 0))
    tram = cg.random_tram(rng, f"r{seed}", int(rng.integers(1, 120)), size, parts=int(rng.integers(1, 20)),
                          flags=flags, used=int(rng.integers(0, 1 << 32)), replaced=int(rng.integers(0, 1 << 32)),
                          events=True, max_gap=int(rng.integers(1, 30)), direct=("x", "") if seed % 2 else ("", ""))
    held = xml_holdable(tram, rng, wide=seed % 2 == 0)
    return Tram(**{**held.__dict__, "velocities": held.velocities * F32(rng.uniform(1, 400))})


@pytest.mark.parametrize("seed", range(40))
def test_random_trams_round_trip(seed):
    """As above, on random Trams: among them extents whose first is also the farthest, so that one
    frame carries both attack bounds (each keeps a height exact: the writer gives both back)."""
    once = read_back(tram_xml_bytes(random_holdable(seed)))
    written = tram_xml_bytes(once)
    assert cg.tram_differences(read_back(written), once) == []


def test_one_extent_is_both_attack_bounds():
    walk = CASES["walk"]
    attack, extent = walk.attacks[:1].copy(), walk.extents[:1].copy()
    attack["last_frame"] = attack["first_frame"]
    once = read_back(tram_xml_bytes(Tram(**{**walk.__dict__, "attacks": attack, "extents": extent})), "walk")
    first, far = once.extent_info["first_attack"], once.extent_info["max_attack"]
    assert first["frame"] == far["frame"] and first["min_height"] != far["min_height"]
    assert cg.tram_differences(read_back(tram_xml_bytes(once), "walk"), once) == []


def test_generated_cases_cover_the_brief():
    cases = CASES.values()
    assert {t.key_size for t in cases} == {6, 16} and any(t.has(tr.OVERLAY) and t.key_size == 6 for t in cases)
    assert all(len(getattr(CASES["walk"], name)) for name in ("attacks", "extents", "self_damage", "motion_blur",
                                                              "shortcuts", "throw", "footsteps", "particles",
                                                              "sounds"))
    assert CASES["walk"].direct_animations == ("run", "") and CASES["run"].direct_animations == ("walk", "walk")
    assert (CASES["run"].attacks["hit_stun"] >= 0x8000).any() and CASES["events"].has(THROW_TARGET)
    assert {1, 9} <= {t.frames for t in cases} and CASES["seven"].parts == 7


# --- OniSplit's own files --------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_reads_our_xml_as_we_do(name):
    """OniSplit's -create of our XML (the very file: its digest) is tram_oni_bytes of what we read
    from it, bit for bit: EKey codes, float32 sums, extents and their summary, events dropped."""
    written = tram_xml_bytes(CASES[name])
    given = INPUTS[f"TRAM{name}.xml"]
    assert hashlib.sha256(written).hexdigest() == given["sha256"]
    assert tram_oni_bytes(read_back(written, name)) == onisplit_file("created", given["created"])


@pytest.mark.parametrize("name", ["events", "far"])
def test_what_onisplit_drops_and_wraps(name):
    """Events past the last frame dropped (OniSplit warns); with ThrowTarget no max attack bound; the
    far walk's x wrapped past 327.67 units and z past the int32 0, as Mono casts them (what_xml_holds
    sums and casts one frame at a time; OniSplit's own .oni of these: above)."""
    given = CASES[name]
    read = read_back(tram_xml_bytes(given), name)
    assert set(cg.tram_differences(read, what_xml_holds(given))) <= {"extents", "extent_info", "final_rotation"}
    if name == "events":
        assert [len(read.sounds), len(read.footsteps), len(read.particles), len(read.self_damage),
                len(read.attacks)] == [len(given.sounds) - 1, len(given.footsteps) - 1, len(given.particles) - 1,
                                       len(given.self_damage) - 1, len(given.attacks) - 1]
        assert read.extent_info["max_attack"]["frame"] == 0xFFFF and read.extent_info["first_attack"]["frame"] < 40
    else:
        assert (np.diff(read.positions["x"].astype(np.int64)) < 0).any() and (read.positions["z"][4:] == 0).all()


EXTRACTED = sorted(set(CASES) - {"codes"})


def test_the_onisplit_folder_holds_what_the_tests_read():
    files = {os.path.relpath(os.path.join(folder, name), ONISPLIT) for folder, _, names in os.walk(ONISPLIT)
             for name in names}
    created = {f"created/TRAM{name}.oni" for name in CASES if name != "codes"}
    extracted = {f"extracted/TRAM{name}.xml" for name in EXTRACTED}
    assert files == {"README.md", "inputs.json", "created/TRAMcodes.oni.xz", "created/TRAMhand.oni",
                     "created_from_samples/TRAMchar0_punch02.oni"} | created | extracted
    assert set(INPUTS) == {f"TRAM{name}.xml" for name in CASES} | {name + ".xml" for name in SAMPLES} | \
        {"TRAMhand.xml"}


@pytest.mark.parametrize("name", EXTRACTED)
def test_we_read_onisplits_xml_of_our_oni_files(name):
    """OniSplit's -extract:xml of tram_oni_bytes(what we read from our XML) reads back to that Tram,
    but for the angles it writes in degrees (the final rotation, the attack bounds'), which come back
    as its own round trip, not always the stored bits (ours do, where a float32 can); where
    its XML holds attack lengths of 32768 and more (its reader takes them unsigned), its -create
    fails (WriteInt16), and we refuse them."""
    ours = read_back(tram_xml_bytes(CASES[name]), name)
    path = os.path.join(ONISPLIT, "extracted", f"TRAM{name}.xml")
    if name == "run":
        with pytest.raises(ObanError, match=r"TRAMrun.xml: line 444: <HitLength> '35405' is out of range"):
            read_tram_file(path)
        return
    theirs = read_tram_file(path)
    assert set(cg.tram_differences(theirs, ours)) <= {"final_rotation", "extent_info"}
    assert theirs.final_rotation == onisplit_round_trip(ours.final_rotation)
    info = ours.extent_info.copy()
    for bound in ("first_attack", "max_attack"):
        info[bound]["angle"] = onisplit_round_trip(info[bound]["angle"])
    assert theirs.extent_info.tobytes() == info.tobytes()


def onisplit_round_trip(radians):
    """Radians through OniSplit's degrees text and back (its writer's and reader's float32 steps)."""
    return F32(F32(radians) * DEGREES) * RADIANS


# --- values ------------------------------------------------------------------------------------------

def test_every_6_byte_code_comes_back_through_its_ekey_text():
    """OniSplit reads code c as int16(c) * 180 / 32767.5 degrees (float32, docs/characters.md 9); its writer, and
    our reader, take degrees d to round_half_even(float32(float32(d / 180) * 32767.5)) mod 65536:
    c again, for all 65536 codes, through the text we write (and through OniSplit: the codes case
    above)."""
    codes = np.arange(1 << 16).astype(np.uint16)
    degrees = ekey_degrees(codes)
    assert degrees.tobytes() == (codes.view(np.int16).astype(F32) * F32(180) / F32(32767.5)).tobytes()
    assert np.array_equal(ekey_codes(degrees), codes)
    tram = CASES["codes"]
    assert np.array_equal(np.unique(tram.tracks[0].values), codes)
    assert read_back(tram_xml_bytes(tram)).tracks[0].values.tobytes() == tram.tracks[0].values.tobytes()


PUNCH = open(sample_xml("TRAMchar0_punch02"), encoding="utf-8-sig").read()
WALK = open(sample_xml("TRAMchar0_walk00"), encoding="utf-8-sig").read()


def edited(old, new, text=PUNCH, count=1):
    assert old in text, old
    return text.replace(old, new, count)


def read_text(tmp_path, text, name="TRAMedit.xml"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return read_tram_file(str(path))


HAND_WRITTEN = [   # (old text, new text, what it reads as, its value)
    ("<Type>Punch</Type>", "<Type>punch</Type>", lambda t: t.type, 22),
    ("<AimingType>None</AimingType>", "<AimingType> 300 </AimingType>", lambda t: t.aiming_type, 300),
    ("<Direction>Forward</Direction>", "<Direction>7</Direction>", lambda t: t.move_direction, 7),
    ("<Flags>Attack Atomic AttackForward</Flags>", "<Flags>-2147483648</Flags>", lambda t: t.flags, 0x80000000),
    ("<Flags>High</Flags>", "<Flags> low  HIGH\n</Flags>", lambda t: t.attacks["flags"][0], 6),
    ("<Varient>Combat</Varient>", "<Varient />", lambda t: t.varient, 0),
    ("<UsedBones />", "<UsedBones>4294967295</UsedBones>", lambda t: t.used_parts, 0xFFFFFFFF),
    ("<ActionFrame>12</ActionFrame>", "<ActionFrame>65535</ActionFrame>", lambda t: t.action_frame, -1),
    ("<FromState>Standing</FromState>", "<FromState>Standing Crouch</FromState>", lambda t: t.from_state, 7 | 19),
    ("<Name>glow_fist</Name>", "<Name>  glow fist </Name>", lambda t: t.particles["name"][0], b"  glow fist "),
    ("<Name>sweat</Name>", "<Name> \n </Name>", lambda t: t.particles["name"][1], b""),
]


@pytest.mark.parametrize("old, new, read_as, value", HAND_WRITTEN)
def test_values_as_onisplit_reads_them(tmp_path, old, new, read_as, value):
    """Enums by name in any case, several OR-ed, or a number; ActionFrame unsigned in the XML, an i16
    in the record; names with their blanks, a blank one empty (OniSplit's own .oni of them all:
    below)."""
    assert read_as(read_text(tmp_path, edited(old, new))) == value


@pytest.mark.parametrize("old, new, read_as, value", [
    ("<Flags>Attack Atomic AttackForward</Flags>", "<Flags>Attack Atomic AttackForward Attack</Flags>",
     lambda t: t.flags, 0x10 | 0x80 | 0x200),
    ("<Flags>Attack Atomic AttackForward</Flags>", "<Flags>atomic ATOMIC Atomic</Flags>", lambda t: t.flags, 0x80),
    ("<Flags>High</Flags>", "<Flags>High high Low HIGH</Flags>", lambda t: t.attacks["flags"][0], 0x2 | 0x4),
    ("<FromState>Standing</FromState>", "<FromState>Standing Standing</FromState>", lambda t: t.from_state, 7),
])
def test_a_name_given_twice_counts_once(tmp_path, old, new, read_as, value):
    """OniSplit's MetaEnum.Parse reads the names, joined by commas, with .NET's Enum.Parse: their
    values OR-ed, in any case, so a name given again (in any case) changes nothing."""
    assert read_as(read_text(tmp_path, edited(old, new))) == value


def hand_written():
    """The punch sample with values OniSplit's writer would not write (onisplit/created/TRAMhand.oni
    is its -create of this text as TRAMhand.xml)."""
    text = re.sub(r"<EKey>([0-9]+) [^<]*</EKey>", r"<EKey>\1 270 -270 720.3</EKey>", PUNCH, count=1)
    for old, new, _, _ in HAND_WRITTEN:
        text = edited(old, new, text)
    return text


def test_hand_written_values_read_as_onisplit_reads_them(tmp_path):
    """All of the above in one file, and EKey angles past 180 (270, -270, 720.3: they wrap), give
    OniSplit's own .oni of it."""
    text = hand_written()
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == INPUTS["TRAMhand.xml"]["sha256"]
    tram = read_text(tmp_path, text, "TRAMhand.xml")
    assert tram.tracks[0].values[0].tolist() == [49151, 16385, 53]
    assert tram_oni_bytes(tram) == onisplit_file("created", "TRAMhand.oni")


def test_names_and_numbers_the_writer_gives_unnamed_values():
    """An int enum's bit 31 as OniSplit writes it (negative), a u32 mask's unsigned, a type or part
    without a name as its number, a flags enum with an unnamed bit as the number."""
    held = xml_holdable(GENERATED["walk"], np.random.default_rng(5))
    particles = held.particles.copy()
    particles["part"][0], particles["pad"][0] = 5, 1
    tram = Tram(**{**held.__dict__, "flags": 0x80000010, "used_parts": 0x80000001, "type": 300, "varient": 0x400,
                   "particles": particles})
    written = tram_xml_bytes(tram).decode("utf-8")
    for text in ("<Flags>-2147483632</Flags>", "<UsedBones>2147483649</UsedBones>", "<Type>300</Type>",
                 "<Bone>65541</Bone>", "<Varient>1024</Varient>"):
        assert text in written, text
    back = read_back(written.encode("utf-8"), "walk")
    assert (back.flags, back.used_parts, back.type, back.varient) == (0x80000010, 0x80000001, 300, 0x400)
    assert (back.particles["part"][0], back.particles["pad"][0]) == (5, 1)


def test_attack_lengths_of_32768_and_more_are_written_signed():
    written = tram_xml_bytes(CASES["run"])
    assert re.search(rb"<HitLength>-[0-9]+</HitLength>", written)
    read, given = read_back(written, "run").attacks, CASES["run"].attacks
    assert (given["hit_stun"] >= 0x8000).any() and np.array_equal(read["hit_stun"], given["hit_stun"])


def test_a_qkey_w_of_minus_0_comes_back_0():
    """OniSplit negates w on reading and on writing (0 - (0 - w)): -0 becomes +0."""
    tram = CASES["aim_q"]
    tracks = [Track(track.frames, track.values.copy()) for track in tram.tracks]
    tracks[0].values[0, 3] = -0.0
    back = read_back(tram_xml_bytes(Tram(**{**tram.__dict__, "tracks": tracks})), "aim_q")
    assert back.tracks[0].values[0, 3] == 0 and not np.signbit(back.tracks[0].values[0, 3])


def test_looks_like_tram_xml():
    head = open(sample_xml("TRAMchar0_walk00"), "rb").read(4096)
    assert looks_like_tram_xml(head)
    assert looks_like_tram_xml(WALK.replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")[:4096])
    assert not looks_like_tram_xml(open(os.path.join(TEST_DATA, "xml", "OBANspec_example.xml"), "rb").read())
    for head in (b"<!DOCTYPE Oni><Oni><Animation>", b"\x00\x01garbage", b"<Oni>", b"", b"<Animation><Oni>"):
        assert not looks_like_tram_xml(head), head


# --- bad input (docs/bad_input.md) --------------------------------------------------------------------

def refused(tmp_path, data, *fragments, name="TRAMbad.xml"):
    """(The message for `data`, the elements the parser took before refusing it): the message
    checked for the path and the fragments, the read's memory bounded; never any other exception."""
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    readers, read = [], tram_xml_read._TramXml.read

    def kept(reader, f):
        readers.append(reader)
        return read(reader, f)

    with mock.patch.object(tram_xml_read._TramXml, "read", kept):
        outcome, peak = measured(lambda: read_tram_file(str(path)))
    assert isinstance(outcome, ObanError), outcome
    message = str(outcome)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, message
    assert peak < 20 << 20, peak
    return message, sum(reader.elements for reader in readers)


BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE Oni [\n <!ENTITY lol0 "lol">\n'
                  + "".join(f' <!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">\n' for i in range(1, 10))
                  + "]>\n<Oni>&lol9;</Oni>")


@pytest.mark.parametrize("data, message", [
    (BILLION_LAUGHS, "line 2: DOCTYPE and entities are not allowed"),
    ('<!DOCTYPE Oni [<!ENTITY x SYSTEM "file:///etc/passwd">]><Oni><Animation>&x;</Animation></Oni>',
     "line 1: DOCTYPE and entities are not allowed"),
    ("<Oni><Animation>&x;</Animation></Oni>", "undefined entity at line 1, column 17"),
    ("<Oni>" + "<a>" * 100_000 + "</a>" * 100_000 + "</Oni>", "line 1: unexpected <a> in <Oni>"),
    ("<Oni><Animation><Lookup><Type>" + "<a>" * 100_000, "line 1: unexpected <a> inside <Type>"),
    (edited("<Type>Punch", "<Type>" + "P" * 10_000_000), "line 5: text of <Type> longer than 65536 characters"),
    ("<Oni><!--" + "x" * 3_000_000 + "--></Oni>", "line 1: a tag, comment or declaration longer than 1 MiB"),
    (edited("<Sounds>", "<Sounds>" + "<Sound><Name>a</Name><Start>1</Start></Sound>" * 70_000),
     "line 79: more than 65535 <Sound> in <Sounds>"),
    (PUNCH[:5000], "no element found at line"),
    (b"\x00\x01\x02garbage", "not well-formed (invalid token) at line 1, column 1"),
    ("", "empty file"),
    ("<Foo/>", "not an OniSplit XML file: root element is <Foo>"),
    ("<Oni/>", "no <Animation> element"),
    (edited("</Animation>", '</Animation>\n    <OBAN id="1" />'), "line 740: unexpected <OBAN> in <Oni>: a TRAM file "
                                                                   "holds one <Animation> and nothing else"),
], ids=["billion_laughs", "external_entity", "undefined_entity", "deep_nesting", "nesting_in_a_value", "huge_text",
        "huge_comment", "too_many_items", "truncated", "binary", "empty", "other_root", "no_animation",
        "another_instance"])
def test_hostile_and_malformed_files(tmp_path, data, message):
    """Each refused with its message, its read's memory bounded; too many items are refused at
    the first one past the limit: the parser took the elements before it and no more."""
    _, parsed = refused(tmp_path, data, message)
    if "more than 65535 <Sound>" in message:
        first_past = [found.start() for found in re.finditer("<Sound>", data)][65535]
        assert parsed == len(re.findall("<[A-Za-z]", data[:first_past])) + 1


def test_too_many_elements(tmp_path, monkeypatch):
    monkeypatch.setattr(tram_xml_read._TramXml, "max_elements", 100)
    refused(tmp_path, PUNCH, "line 121: more than 100 elements")


def test_file_over_the_size_cap_is_refused_before_reading(tmp_path):
    path = tmp_path / "TRAMbig.xml"
    with open(path, "wb") as f:
        f.truncate((256 << 20) + 1)   # sparse
    with pytest.raises(ObanError, match="268435457 bytes: XML files over 256 MiB are refused"):
        read_tram_file(str(path))


@pytest.mark.parametrize("old, new, message", [
    ("<Height>16.3859978</Height>", "<Height>abc</Height>", "line 94: 'abc' is not a number"),
    ("<Height>16.3859978</Height>", "<Height>1e39</Height>", "line 94: <Height> '1e39' is not finite in float32"),
    ("<Height>16.3859978</Height>", "<Height>nan</Height>", "<Height> 'nan' is not finite in float32"),
    ("<Velocity>0.0283692032 0.355621755</Velocity>", "<Velocity>0.1</Velocity>",
     "line 132: <Velocity> needs 2 numbers, found 1"),
    ("<FirstLevel>0</FirstLevel>", "<FirstLevel>-1</FirstLevel>", "line 10: <FirstLevel> '-1' is out of range "
                                                                  "(0 to 65535)"),
    ("<End>3</End>", "<End>256</End>", "line 31: <End> '256' is out of range (0 to 255)"),
    ("<HitPoints>12</HitPoints>", "<HitPoints>40000</HitPoints>", "line 662: <HitPoints> '40000' is out of range "
                                                                  "(-32768 to 32767)"),
    ("<ActionFrame>12</ActionFrame>", "<ActionFrame>1.5</ActionFrame>", "line 52: <ActionFrame> '1.5' is not a whole "
                                                                        "number"),
    ("<Type>Punch</Type>", "<Type>Punchy</Type>", "line 5: <Type> 'Punchy' is not one of OniSplit's names for it"),
    ("<Type>Punch</Type>", "<Type />", "line 5: <Type> is empty: OniSplit needs a name or a number"),
    ("<Type>Punch</Type>", "<Type>70000</Type>", "line 5: <Type> '70000' is out of range (0 to 65535)"),
    ("<Direction>Forward</Direction>", "<Direction>1 2</Direction>", "line 50: <Direction> '1 2': one number, or "
                                                                     "names"),
    ("<Flags>Attack Atomic AttackForward</Flags>", "<Flags />", "line 24: <Flags> is empty: OniSplit needs a name or "
                                                                "a number (0 for none)"),
    ("<Impact>punch_hit</Impact>", "<Impact>a_very_long_impact</Impact>", "line 53: <Impact> 'a_very_long_impact' "
                                                                          "is longer than 16 bytes"),
    ("<ReplaceAtomic>yes</ReplaceAtomic>", "<ReplaceAtomic>Yes</ReplaceAtomic>",
     "line 15: <ReplaceAtomic> 'Yes': yes or no (OniSplit reads anything but yes as no)"),
], ids=["not_a_number", "beyond_float32", "nan", "too_few_numbers", "negative", "past_a_byte", "past_int16",
        "not_whole", "unknown_name", "empty_enum", "past_the_enum", "two_numbers", "empty_flags", "long_name",
        "yes_no"])
def test_bad_values(tmp_path, old, new, message):
    refused(tmp_path, edited(old, new), message)


@pytest.mark.parametrize("old, new, message", [
    ("            <Soft>5</Soft>\n", "", "line 43: missing <Soft> in <Pause>"),
    ("<Impact>punch_hit</Impact>", "<Impac>punch_hit</Impac>", "line 53: unexpected <Impac> in <Animation>"),
    ("<Impact>punch_hit</Impact>", "<Impact>punch_hit</Impact><Impact />", "line 53: <Impact> given twice in "
                                                                            "<Animation>"),
    ("<Heights>", "<Foo /><Heights>", "line 93: unexpected <Foo> in <Animation>"),
    ("<Lookup>", '<Import Path="walk.dae" /><Lookup>', "line 4: <Import>: an animation OniSplit imports from a "
                                                       "Collada file is not supported"),
    ("<Shortcuts>", "<Shortcut>", "line 11: unexpected <Shortcut> in <Lookup>"),
], ids=["missing", "renamed", "twice", "unknown", "collada_import", "list_item_outside"])
def test_structure_errors(tmp_path, old, new, message):
    refused(tmp_path, edited(old, new), message)


def test_an_element_out_of_order(tmp_path):
    offset = re.search(r"\s*<PositionOffset>.*</PositionOffset>", PUNCH, flags=re.S).group(0)
    text = PUNCH.replace(offset, "").replace("</Positions>", "</Positions>" + offset)
    refused(tmp_path, text, "line 644: <PositionOffset> out of order in <Animation> (OniSplit reads its elements "
                            "in order)")


def test_missing_heights(tmp_path):
    text = re.sub(r"<Heights>.*</Heights>\s*", "", PUNCH, flags=re.S)
    refused(tmp_path, text, "line 93: missing <Heights> before <Velocities>")


def punch_with(pattern, replacement, count=1):
    return re.sub(pattern, replacement, PUNCH, count=count, flags=re.S)


@pytest.mark.parametrize("text, message", [
    (punch_with(r"<Height>[^<]*</Height>\s*", ""), "line 167: 35 <Height> for 36 <Velocity>: one of each per frame"),
    (punch_with(r"<Heights>.*</Velocities>", "<Heights /><Velocities />"), "line 93: no <Velocity>: an animation has "
                                                                             "at least one frame"),
    (punch_with(r"<EKey>1 ", "<EKey>2 "), "line 186: part 0's key durations sum to 37, not the 36 frames of "
                                          "<Velocities>"),
    (punch_with(r"<Rotations>.*</Rotations>", "<Rotations />"), "line 169: no <Bone> in <Rotations>"),
    (punch_with(r"<Position>.*?</Position>\s*", ""), "line 643: 35 <Position> for 36 frames: none, or one per frame"),
    (punch_with(r"<Link />\s*", ""), "line 39: 1 <Link> in <DirectAnimations>: OniSplit reads two"),
    (punch_with(r"<Length>9</Length>\s*", ""), "line 737: 35 <Length> in <AttackRing>: OniSplit reads 36"),
    (punch_with(r"<Link />", "<Link>TRAM</Link>"), "line 40: a <Link> of just 'TRAM' names no animation"),
], ids=["heights", "no_frames", "durations", "no_parts", "positions", "links", "ring", "link_tram"])
def test_wrong_counts(tmp_path, text, message):
    refused(tmp_path, text, message)


def test_the_last_key_lasts_one_frame(tmp_path):
    """Keys on frames 0 and 1 of 3 (durations 1 and 2): OniSplit would store keys ending on frame 1."""
    tram = Tram(name="bad", frames=3, key_size=6, flags=0, used_parts=0, replaced_parts=0,
                heights=np.ones(3, F32), velocities=np.zeros((3, 2), F32),
                tracks=[Track(np.array([0, 2]), np.zeros((2, 3), np.uint16))])
    first, last = "<EKey>2 0 0 0</EKey>", "<EKey>1 0 0 0</EKey>"
    text = tram_xml_bytes(tram).decode("utf-8").replace(first, "@").replace(last, first).replace("@", last)
    refused(tmp_path, text, "part 0's last key lasts 2 frames: OniSplit writes no duration for the last key, so it "
                            "must be 1 (the keys would end at frame 1, not the last frame 2)")


@pytest.mark.parametrize("text, message", [
    (punch_with(r"<EKey>([^<]*)</EKey>", r"<QKey>\1 1</QKey>"),
     "line 171: <QKey> in an animation without the Overlay flag: OniSplit's -create turns such keys into EKeys"),
    (edited("<Footsteps />", '<Footsteps><Footstep Frame="1" Type="Left" /></Footsteps>'),
     "line 78: <Footstep> with attributes: OniSplit's reader throws on them (docs/characters.md 9)"),
    (punch_with(r"<Extents>.*</Extents>", "<Extents />"), "line 656: the first attack has no <Extents>: OniSplit "
                                                          "computes them from a body"),
    (punch_with(r"<Positions>.*</Positions>", "<Positions />"), "line 511: the extent on frame 12 (of the attack from "
                                                                "frame 12) has no position point (there are none)"),
    (punch_with(r"<Start>12</Start>(\s*<End>16</End>\s*<Bones>)", r"<Start>33</Start>\1"),
     "line 656: the extent on frame 36 (of the attack from frame 33) has no position point: OniSplit fails on it"),
    (punch_with(r"<Attacks>.*</Attacks>\s*", ""), "line 655: <AttackRing> without <Attacks>"),
    (edited("</Animation>", "</Animation><Animation />"), "line 739: unexpected <Animation> in <Oni>"),
], ids=["qkey_not_overlay", "footstep_attributes", "attack_without_extents", "extents_without_positions",
        "extent_past_the_points", "ring_without_attacks", "two_animations"])
def test_what_onisplit_refuses_or_would_write_wrong(tmp_path, text, message):
    refused(tmp_path, text, message)


def test_mixed_key_kinds(tmp_path):
    overlay = open(sample_xml("TRAMchar0_overlay_q01"), encoding="utf-8-sig").read()
    refused(tmp_path, re.sub(r"<QKey>([0-9]+) (\S+) (\S+) (\S+) \S+</QKey>", r"<EKey>\1 \2 \3 \4</EKey>", overlay,
                             count=1), "<QKey> among <EKey>: one animation's keys are all EKeys or all QKeys")


def test_rotation_data_past_a_u16_offset(tmp_path):
    frames, parts = 1000, 11
    keys = "".join("<EKey>1 0 0 0</EKey>" for _ in range(frames))
    text = re.sub(r"<Heights>.*</Rotations>", "<Heights>" + "<Height>1</Height>" * frames + "</Heights><Velocities>"
                  + "<Velocity>0 0</Velocity>" * frames + "</Velocities><Rotations>" + f"<Bone>{keys}</Bone>" * parts
                  + "</Rotations>", PUNCH, flags=re.S)
    text = re.sub(r"<Positions>.*</Positions>", "<Positions />", text, flags=re.S)
    text = re.sub(r"<Attacks>.*</AttackRing>", "", text, flags=re.S)
    refused(tmp_path, text, "line 93: part 10's keys would start at byte 70012 or later of the rotation data, past "
                            "what a u16 offset reaches (OniSplit would write a wrong offset)")


@pytest.mark.parametrize("case, edit, message", [
    ("aim_q", lambda t: {"flags": 0}, "16-byte keys without the Overlay flag: OniSplit's -create turns QKeys into "
                                      "EKeys"),
    ("walk", lambda t: {"attacks": with_field(t.attacks, "knockback", np.nan)},
     "<Knockback> would hold nan: OniSplit's XML holds finite numbers only"),
    ("walk", lambda t: {"particles": with_field(t.particles, "name", b"\xff")}, "<Name> b'\\xff' is not UTF-8 text"),
    ("walk", lambda t: {"sounds": with_field(t.sounds, "name", b"a\x01")}, "<Name> 'a\\x01': OniSplit's XML holds "
                                                                           "printable"),
    ("walk", lambda t: {"extents": t.extents[:0]}, "the first attack has no <Extents>"),
    ("walk", lambda t: {"positions": t.positions[:0]}, "has no position point (there are none)"),
    ("walk", lambda t: {"frames": 0}, "0 frames"),
], ids=["qkeys_not_overlay", "nan", "not_utf8", "control_character", "no_extents", "no_positions", "no_frames"])
def test_the_writer_refuses_what_onisplit_would_not_take(case, edit, message):
    base = CASES[case]
    with pytest.raises(ValueError) as error:
        tram_xml_bytes(Tram(**{**base.__dict__, **edit(base)}))
    assert str(error.value).startswith(f"TRAM{case}: ") and message in str(error.value), str(error.value)


def test_the_writer_refuses_rotation_data_past_a_u16_offset():
    frames = 5000
    tram = Tram(name="long", frames=frames, key_size=6, flags=0, used_parts=0, replaced_parts=0,
                heights=np.ones(frames, F32), velocities=np.zeros((frames, 2), F32),
                tracks=[Track(np.arange(frames), np.zeros((frames, 3), np.uint16))] * 3)
    with pytest.raises(ValueError, match="TRAMlong: part 2's keys would start at byte 70004 of the rotation data, "
                                         "past what a u16 offset reaches"):
        tram_xml_bytes(tram)


def with_field(records, field, value):
    out = records.copy()
    out[field][0] = value
    return out


@pytest.mark.parametrize("old, new, message", [
    ("<Velocity>0.0283692032 0.355621755</Velocity>", "<Velocity>3e38 0.355621755</Velocity>",
     "TRAMbad: its root motion at frame 1 (summed velocities) lies 3e+38 units from its start"),
    ("<Height>16.3859978</Height>", "<Height>2e19</Height>", "TRAMbad: its height at frame 0 is 2e+19 units"),
    ("<Height>16.3859978</Height>", "<Height>NaN</Height>", "line 94: <Height> 'NaN' is not finite in float32"),
])
def test_motion_the_engine_cannot_square_is_refused_from_xml_too(tmp_path, old, new, message):
    """The same limits as a TRAM read from an .oni (docs/characters.md 8)."""
    path = tmp_path / "TRAMbad.xml"
    path.write_bytes(edited(old, new).encode("utf-8"))
    with pytest.raises(ObanError, match=re.escape(f"{path}: {message}")):
        read_tram_file(str(path))
