"""The TRAM reader and writer (docs/characters.md 2-4, 6, 8).

Against OniSplit's own files (tests/data/characters: six TRAMs as loose .oni, packed in a level,
and as OniSplit's XML): every number the XML holds equals the stored value as OniSplit reads it;
the loose files and the level give the same Trams; read -> write gives OniSplit's bytes back.
Against generated files of every case (tools/generate/characters_generate.py), a key-by-key
reference walker, and one test per bad input (docs/bad_input.md).
"""

import json
import os
import struct
import xml.etree.ElementTree as ET

import characters_generate as cg
import numpy as np
import pytest
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.engine import poses
from oban_import.oni.io.container.container import HEADER_DTYPE
from oban_import.oni.io.container.library import Library
from oban_import.oni.io.trams import read as tram_read
from oban_import.oni.io.trams import tram as tram_module
from oban_import.oni.io.trams.files import read_tram_file, read_trams
from oban_import.oni.io.trams.read import read_tram_instances
from oban_import.oni.io.trams.tram import PART_NAMES, RECORD_DTYPE, Track, Tram
from oban_import.oni.io.trams.write import tram_oni_bytes

DATA = os.path.join(TEST_DATA, "characters")
MANIFEST = json.load(open(os.path.join(DATA, "manifest.json")))
SAMPLES = [a["name"] for a in MANIFEST["animations"]]
LEVEL = os.path.join(DATA, "level", "level3_Final.dat")
F32 = np.float32

# OniSplit's names for the values in these files (Oni.Totoro enums: AnimationType,
# AnimationState, AnimationFlags, AnimationVarient, Direction, FootstepType, AttackFlags).
TYPES = {"None": 0, "Walk": 2, "Stand": 6, "Punch": 22, "HitHead": 76, "Idle": 93, "AutopistolRecoil": 149}
STATES = {"None": 0, "WalkingLeftDown": 5, "WalkingRightDown": 6, "Standing": 7, "RunJumpLand": 14, "Crouch": 19}
ANIMATION_FLAGS = {"Attack": 0x10, "Atomic": 0x80, "AttackForward": 0x200, "Overlay": 0x2000, "RealWorld": 0x20000}
VARIENTS = {"Sprint": 0x100, "Combat": 0x200, "RightPistol": 0x800, "LeftPistol": 0x1000}
DIRECTIONS = {"None": 0, "Forward": 1, "Backward": 2, "Left": 3, "Right": 4}
FOOTSTEPS = {"Left": 1, "Right": 2}
ATTACK_FLAGS = {"Unblockable": 1, "High": 2, "Low": 4, "HalfDamage": 8}
PARTS = {name: p for p, name in enumerate(PART_NAMES)}
BONES = {name: 1 << p for p, name in enumerate(PART_NAMES)}
# elements that hold a list: childless when it is empty, not a value
LISTS = {"Shortcuts", "Particles", "MotionBlur", "Footsteps", "Sounds", "SelfDamage", "ThrowSource", "Positions",
         "Attacks", "Extents", "Heights", "Velocities", "Rotations"}


def sample_path(name):
    return os.path.join(DATA, "oni", name + ".oni")


@pytest.fixture(scope="module")
def samples():
    return {name: read_tram_file(sample_path(name)) for name in SAMPLES}


# --- what OniSplit's XML says ------------------------------------------------------------------

def xml_leaves(path):
    """[(path, text)] of every value element of OniSplit's XML of one TRAM, in document order."""
    found = []

    def walk(element, prefix):
        for child in element:
            where = prefix + child.tag
            if len(child):
                walk(child, where + "/")
            elif child.tag not in LISTS:
                found.append((where, (child.text or "").strip()))
    walk(ET.parse(path).getroot().find("Animation"), "")
    return found


def onisplit_leaves(t: Tram):
    """[(path, kind, value)] of what OniSplit's XML writer writes for the stored values, as
    OniSplit's reader computes them (float32 arithmetic, 6-byte codes read as int16)."""
    out = []

    def add(path, kind, value):
        out.append((path, kind, value))
    for path, table, value in (("Lookup/Type", TYPES, t.type), ("Lookup/AimingType", TYPES, t.aiming_type),
                               ("Lookup/FromState", STATES, t.from_state), ("Lookup/ToState", STATES, t.to_state)):
        add(path, ("enum", table), value)
    add("Lookup/Varient", ("flags", VARIENTS), t.varient)
    add("Lookup/FirstLevel", "int", t.first_level)
    for s in t.shortcuts:
        add("Lookup/Shortcuts/Shortcut/FromState", ("enum", STATES), s["state"])
        add("Lookup/Shortcuts/Shortcut/Length", "int", s["length"])
        add("Lookup/Shortcuts/Shortcut/ReplaceAtomic", "str", "yes" if s["flags"] else "no")
    add("Flags", ("flags", ANIMATION_FLAGS), t.flags)
    for path, value in (("Atomic/Start", t.atomic_start), ("Atomic/End", t.atomic_end),
                        ("Invulnerable/Start", t.invulnerable_start), ("Invulnerable/End", t.invulnerable_length)):
        add(path, "int", value)
    add("Overlay/UsedBones", ("flags", BONES), t.used_parts)
    add("Overlay/ReplacedBones", ("flags", BONES), t.replaced_parts)
    for name in t.direct_animations:
        add("DirectAnimations/Link", "str", "TRAM" + name if name else "")
    for path, value in (("Pause/Hard", t.hard_pause), ("Pause/Soft", t.soft_pause),
                        ("Interpolation/End", t.interpolation_end), ("Interpolation/Max", t.interpolation_max)):
        add(path, "int", value)
    add("FinalRotation", "f32", t.final_rotation * F32(57.295773))
    add("Direction", ("enum", DIRECTIONS), t.move_direction)
    add("Vocalization", "int", t.vocalization)
    add("ActionFrame", "int", t.action_frame & 0xFFFF)
    add("Impact", "str", t.impact_name)
    for p in t.particles:
        for field, kind, value in (("Start", "int", p["first_frame"]), ("End", "int", p["last_frame"]),
                                   ("Bone", ("enum", PARTS), int(p["part"]) | int(p["pad"]) << 16),
                                   ("Name", "str", p["name"].decode("latin-1"))):
            add("Particles/Particle/" + field, kind, value)
    for b in t.motion_blur:
        for field, kind, value in (("Bones", ("flags", BONES), b["parts"]), ("Start", "int", b["first_frame"]),
                                   ("End", "int", b["last_frame"]), ("Lifetime", "int", b["quantity"]),
                                   ("Alpha", "int", b["amount"]), ("Interval", "int", b["skip"])):
            add("MotionBlur/MotionBlur/" + field, kind, value)
    for f in t.footsteps:
        add("Footsteps/Footstep/Frame", "int", f["frame"])
        add("Footsteps/Footstep/Type", ("flags", FOOTSTEPS), f["type"])
    for s in t.sounds:
        add("Sounds/Sound/Name", "str", s["name"].decode("latin-1"))
        add("Sounds/Sound/Start", "int", s["frame"])
    out += [("Heights/Height", "f32", h) for h in t.heights]
    out += [("Velocities/Velocity", ("f32s",), tuple(v)) for v in t.velocities]
    for track in t.tracks:
        durations = np.append(np.diff(track.frames), 1)
        if t.key_size == 6:
            angles = track.values.view(np.int16).astype(F32) * F32(180) / F32(32767.5)
            out += [("Rotations/Bone/EKey", ("key",), (d, *a)) for d, a in zip(durations, angles)]
        else:
            out += [("Rotations/Bone/QKey", ("key",), (d, *q)) for d, q in zip(durations, track.values)]
    first = t.positions[:1]
    add("PositionOffset/X", "f32", first["x"][0] * F32(0.01) if len(first) else F32(0))
    add("PositionOffset/Z", "f32", first["z"][0] * F32(0.01) if len(first) else F32(0))
    for p in t.positions:
        add("Positions/Position/Height", "f32", F32(p["height"]) * F32(0.01))
        add("Positions/Position/YOffset", "f32", F32(p["y_offset"]) * F32(0.01))
    for w in t.throw:
        add("ThrowSource/TargetAdjustment/Position", ("f32s",), tuple(w["offset"]))
        add("ThrowSource/TargetAdjustment/Angle", "f32", w["relative_facing"])
        add("ThrowSource/Distance", "f32", w["distance"])
        add("ThrowSource/TargetType", ("enum", TYPES), w["type"])
    for d in t.self_damage:
        add("SelfDamage/Damage/Points", "int", d["damage"])
        add("SelfDamage/Damage/Frame", "int", d["frame"])
    out += _attacks(t)
    return out


def _attacks(t):
    out, extents = [], _onisplit_extents(t)
    for a in t.attacks:
        where = "Attacks/Attack/"
        for field, kind, value in (
                ("Start", "int", a["first_frame"]), ("End", "int", a["last_frame"]),
                ("Bones", ("flags", BONES), a["parts"]), ("Flags", ("flags", ATTACK_FLAGS), a["flags"]),
                ("Knockback", "f32", a["knockback"]), ("HitPoints", "int", a["damage"].view(np.int16)),
                ("HitType", ("enum", TYPES), a["hit_type"]), ("HitLength", "int", a["hit_stun"]),
                ("StunLength", "int", a["block_stun"]), ("StaggerLength", "int", a["stagger"])):
            out.append((where + field, kind, value))
        for frame in range(int(a["first_frame"]), int(a["last_frame"]) + 1):
            if frame in extents:
                out += [(where + "Extents/Extent/" + field, "f32", value)
                        for field, value in zip(("Angle", "Length", "MinY", "MaxY"), extents[frame])]
    if len(t.attacks):
        out += [("AttackRing/Length", "f32", r) for r in t.extent_info["ring"]]
    return out


def _onisplit_extents(t):
    """frame: (angle, length, min y, max y) as OniSplit's reader makes an attack's extents: the
    raw extent, or the first/max attack bound of that frame, snapped to the extent ring's
    heights within 0.01."""
    info, found = t.extent_info, {}
    for e in t.extents:
        values = [F32(e["angle"]) * F32(360) / F32(65535), F32(e["distance"]) * F32(0.01),
                  F32(e["min_y"]) * F32(0.01), F32(e["max_y"]) * F32(0.01)]
        for bound in (info["first_attack"], info["max_attack"]):
            if int(e["frame"]) == int(bound["frame"]):
                values = [bound["angle"] * F32(57.295773), bound["distance"], bound["min_height"], bound["max_height"]]
                break
        for k, limit in ((2, info["min_height"]), (3, info["max_height"])):
            if abs(values[k] - limit) < F32(0.01):
                values[k] = limit
        found.setdefault(int(e["frame"]), values)
    return found


def same_value(kind, text, value):
    if kind == "int":
        return int(text) == int(value)
    if kind == "str":
        return text == value
    if kind == "f32":
        return F32(float(text)) == F32(value)
    if kind[0] in ("f32s", "key"):
        numbers = text.split()
        return len(numbers) == len(value) and all(F32(float(n)) == F32(v) for n, v in zip(numbers, value))
    if kind[0] == "enum":
        return (int(text) if text.isdigit() else kind[1][text]) == int(value)
    return sum(int(n) if n.isdigit() else kind[1][n] for n in text.split()) == int(value)   # flags


@pytest.mark.parametrize("name", SAMPLES)
def test_every_number_equals_onisplit_xml(samples, name):
    theirs = xml_leaves(os.path.join(DATA, "xml", name + ".xml"))
    ours = onisplit_leaves(samples[name])
    assert [path for path, _ in theirs] == [path for path, _, _ in ours]
    wrong = [(path, text, value) for (path, text), (_, kind, value) in zip(theirs, ours)
             if not same_value(kind, text, value)]
    assert not wrong, wrong[:5]


def test_the_xml_comparison_catches_one_code_off(samples):
    t = samples["TRAMchar0_wrap03"]
    t = Tram(**{**t.__dict__, "tracks": [Track(t.tracks[0].frames, t.tracks[0].values + np.uint16(1))]
                + t.tracks[1:]})
    theirs = xml_leaves(os.path.join(DATA, "xml", "TRAMchar0_wrap03.xml"))
    assert not all(same_value(kind, text, value) for (_, text), (_, kind, value) in zip(theirs, onisplit_leaves(t)))


@pytest.mark.parametrize("entry", MANIFEST["animations"], ids=SAMPLES)
def test_samples_equal_the_manifest(samples, entry):
    t = samples[entry["name"]]
    assert (t.name, t.frames, t.key_size) == (entry["name"][4:], entry["frames"], entry["compression"])
    assert t.used_parts == sum(BONES[n] for n in entry["used_bones"])
    assert t.replaced_parts == sum(BONES[n] for n in entry["replaced_bones"])
    assert t.has(0x2000) == ("Overlay" in entry["flags"]) and t.parts == 19
    assert all(track.frames[0] == 0 and track.frames[-1] == t.frames - 1 for track in t.tracks)


def test_sample_features(samples):
    """What the samples' README says each one exercises."""
    long = samples["TRAMchar0_long05"]
    gaps = set(np.concatenate([np.diff(track.frames) for track in long.tracks]).tolist())
    assert {255, 254, 200, 128, 127, *range(1, 11)} <= gaps
    codes = set(np.concatenate([track.values.ravel() for track in samples["TRAMchar0_wrap03"].tracks]).tolist())
    assert {32766, 32767, 32768, 32769, 65534, 65535, 0, 1} <= codes
    assert all(len(track.frames) == 1 for track in samples["TRAMchar0_stand104"].tracks)
    q = np.concatenate([track.values for track in samples["TRAMchar0_overlay_q01"].tracks])
    assert q.dtype == np.float32 and np.abs(np.linalg.norm(q, axis=1) - 1).max() > 1e-3
    punch = samples["TRAMchar0_punch02"]
    assert [len(punch.attacks), len(punch.extents), len(punch.self_damage), len(punch.motion_blur),
            len(punch.particles), len(punch.sounds), len(punch.shortcuts)] == [1, 5, 1, 1, 2, 3, 2]


def test_loose_files_and_level_give_the_same_trams(samples):
    packed = {"TRAM" + t.name: t for t in read_trams(LEVEL)}
    assert sorted(packed) == sorted(SAMPLES)
    for name in SAMPLES:
        assert cg.tram_differences(samples[name], packed[name]) == [], name


@pytest.mark.parametrize("name", SAMPLES)
def test_reader_equals_the_reference_walker(samples, name):
    data = open(sample_path(name), "rb").read()
    assert_tracks_equal_reference(samples[name], data)


def rotation_data(data):
    """A one-TRAM .oni's rotation data, from its raw table."""
    header = np.frombuffer(data, HEADER_DTYPE, 1)[0]
    record = np.frombuffer(data, RECORD_DTYPE, 1, int(header["data_offset"]) + 8)[0]
    return data[int(header["raw_offset"]) + int(record["rotations_at"]):]


def assert_tracks_equal_reference(tram, data):
    reference = cg.reference_tracks(rotation_data(data), tram.parts, tram.frames, tram.key_size)
    for track, (frames, values) in zip(tram.tracks, reference, strict=True):
        assert np.array_equal(track.frames, frames) and track.frames.dtype == np.int64
        assert track.values.tobytes() == values.tobytes() and track.values.shape == values.shape


# --- generated ------------------------------------------------------------------------------------

GENERATED = cg.every_tram(np.random.default_rng(7))


@pytest.mark.parametrize("cells", [tram_read.TRACK_CELLS, 64])
def test_trams_read_together_equal_the_reference_walker(tmp_path, monkeypatch, cells):
    """Every generated TRAM read at once (a character's collection is: their tracks decoded
    together, by key size, in runs of at most TRACK_CELLS track-frames; 64 makes a run of
    each) gives each one's tracks as the reference walker reads that file alone."""
    monkeypatch.setattr(tram_read, "TRACK_CELLS", cells)
    monkeypatch.setattr(tram_read, "_track", None)   # where a TRAM is at fault: none is here
    monkeypatch.setattr(tram_read, "check_motion", None)   # their values are screened together
    files = {}
    for name, tram in GENERATED.items():
        files[name] = tmp_path / f"TRAM{name}.oni"
        files[name].write_bytes(tram_oni_bytes(tram))
    with Library(str(files[next(iter(files))])) as library:
        instances = [(library.open(str(path)), 0) for path in files.values()]
        read = library.cached_all(instances, read_tram_instances)
    assert [tram.name for tram in read] == list(files)
    for tram, path in zip(read, files.values()):
        assert_tracks_equal_reference(tram, path.read_bytes())


def test_the_tracks_are_one_form_whatever_made_the_tram(tmp_path):
    """A read TRAM and one built from a list of Track hold the same Tracks: every part's keys
    end to end (the counts, frames and values a key walk of the written file gives); a
    part's Track, by index (negative too), slice or iteration, is the one it was built from."""
    written = GENERATED[sorted(GENERATED)[0]]
    parts = [Track(track.frames.copy(), track.values.copy()) for track in written.tracks]
    built = Tram(**{**written.__dict__, "tracks": parts})
    path = tmp_path / "TRAMone.oni"
    path.write_bytes(tram_oni_bytes(written))
    read = read_tram_file(str(path))
    walked = cg.reference_tracks(rotation_data(path.read_bytes()), len(parts), written.frames, written.key_size)
    for tram in (read, built):
        assert isinstance(tram.tracks, tram_module.Tracks) and len(tram.tracks) == len(parts)
        assert tram.tracks.counts.tolist() == [len(frames) for frames, _ in walked]
        assert np.array_equal(tram.tracks.frames, np.concatenate([frames for frames, _ in walked]))
        assert tram.tracks.values.tobytes() == b"".join(values.tobytes() for _, values in walked)
        for got, want in zip([*tram.tracks, tram.tracks[-1], *tram.tracks[1:3]], [*parts, parts[-1], *parts[1:3]],
                             strict=True):
            assert np.array_equal(got.frames, want.frames) and np.array_equal(got.values, want.values)
        with pytest.raises(IndexError):
            tram.tracks[len(parts)]


def test_a_track_whose_frames_and_values_differ_in_count_is_refused():
    frames = 9
    tracks = [Track(np.array([0, 8]), np.zeros((2, 3), np.uint16)),
              Track(np.array([0, 8]), np.zeros((3, 3), np.uint16))]
    with pytest.raises(ValueError, match="part 1's track has 2 key frames and 3 key values"):
        Tram(name="x", frames=frames, key_size=6, flags=0, used_parts=0, replaced_parts=0,
             heights=np.ones(frames, np.float32), velocities=np.zeros((frames, 2), np.float32), tracks=tracks)


def test_a_faulty_tram_read_with_others_is_named(tmp_path):
    """Among TRAMs read together, the one with a track at fault is refused as it is alone."""
    paths = [tmp_path / f"TRAM{name}.oni" for name in ("a", "bad", "c")]
    for path in paths:
        tram = plain_tram(frames=9)
        data = tram_oni_bytes(tram)
        path.write_bytes(raw_patched(data, "rotations_at", gap_at(tram, 5, 0), b"\x00") if "bad" in path.name
                         else data)
    with Library(str(paths[0])) as library, pytest.raises(ObanError) as error:
        library.cached_all([(library.open(str(path)), 0) for path in paths], read_tram_instances)
    message = str(error.value)
    assert message.startswith(str(paths[1])) and "part 5's track: key 1 has a gap of 0 frames" in message


def laid_out_again(data, tram, order, junk, shared):
    """`data` (plain_tram's .oni) with its tracks laid out in `order`, `junk` random bytes before
    each (a gap byte among them may be 0), and part shared[1] reading part shared[0]'s track."""
    rng = np.random.default_rng(len(junk))
    old = rotation_data(data)
    stride, parts = tram.key_size + 1, len(tram.tracks)
    starts = struct.unpack_from(f"<{parts}H", old)
    body, offsets = b"", [0] * parts
    for part, extra in zip(order, junk):
        body += rng.integers(0, 256, extra, np.uint8).tobytes()
        offsets[part] = 2 * parts + len(body)
        body += old[starts[part]:starts[part] + len(tram.tracks[part].frames) * stride - 1]
    offsets[shared[1]] = offsets[shared[0]]
    out = data[:len(data) - len(old)] + struct.pack(f"<{parts}H", *offsets) + body
    header = np.frombuffer(out, HEADER_DTYPE, 1).copy()
    header["raw_size"] = len(out) - header["raw_offset"]
    return header.tobytes() + out[64:]


def test_tracks_not_laid_end_to_end_are_walked(tmp_path):
    """Tracks in another order than their parts', with bytes between them, one read by two
    parts: each part's keys are those the engine's walk finds from its offset, alone or
    among others (whose tracks are end to end, as files have them)."""
    tram = plain_tram(frames=40)
    data = tram_oni_bytes(tram)
    order = np.random.default_rng(1).permutation(len(tram.tracks)).tolist()
    moved = laid_out_again(data, tram, order, [0, 3, 7, 1, 0, 14, 2] * 3, (4, 9))
    paths = [tmp_path / "TRAMmoved.oni", tmp_path / "TRAMplain.oni"]
    paths[0].write_bytes(moved)
    paths[1].write_bytes(data)
    alone = read_tram_file(str(paths[0]))
    with Library(str(paths[0])) as library:
        together = library.cached_all([(library.open(str(path)), 0) for path in paths], read_tram_instances)
    for read in (alone, together[0]):
        assert_tracks_equal_reference(read, moved)
        for part, (track, written) in enumerate(zip(read.tracks, tram.tracks)):
            expected = tram.tracks[4] if part == 9 else written
            assert np.array_equal(track.frames, expected.frames) and np.array_equal(track.values, expected.values)
    assert_tracks_equal_reference(together[1], data)


def test_the_first_faulty_file_of_those_opened_together_is_named(tmp_path):
    """Files opened together (Library.open_all, as a collection's TRAMs are): the first one at
    fault, in the order given, is refused as it is when opened alone (its own descriptor named);
    the records of the others, at the same offsets of their own files, are no fault."""
    data = tram_oni_bytes(plain_tram(frames=9))
    paths = {name: tmp_path / f"TRAM{name}.oni" for name in ("a", "b", "c", "bad1", "bad2")}
    for name, path in paths.items():
        content = bytearray(data)
        if name.startswith("bad"):   # descriptor 0's data offset past the data table
            content[64 + 4:64 + 8] = (int(name[-1]) << 20).to_bytes(4, "little")
        path.write_bytes(bytes(content))
    alone = {}
    for name in ("bad1", "bad2"):
        with pytest.raises(ObanError) as error:
            Library(str(paths[name]))
        alone[name] = str(error.value)
        assert alone[name].startswith(f"{paths[name]}: descriptor 0 points outside the data table")
    with Library(str(paths["a"])) as library:
        assert len(library.open_all([str(paths[name]) for name in ("b", "c", "b")])) == 3
    for first, second in (("bad1", "bad2"), ("bad2", "bad1")):
        with Library(str(paths["a"])) as library, pytest.raises(ObanError) as error:
            library.open_all([str(paths[name]) for name in ("b", first, "c", second)])
        assert str(error.value) == alone[first]


def test_generated_cases_cover_the_brief():
    trams = GENERATED.values()
    assert {t.key_size for t in trams} == {6, 16} and any(t.frames == 1 for t in trams)
    assert max(t.frames for t in trams) >= 5000 and any(t.has(0x2000) and t.key_size == 6 for t in trams)
    gaps = np.concatenate([np.diff(track.frames) for t in trams for track in t.tracks])
    assert gaps.max() == 255 and {1, 127, 128, 254, 255} <= set(gaps.tolist())
    codes = set(np.concatenate([track.values.ravel() for track in GENERATED["wrap"].tracks]).tolist())
    assert set(cg.SPECIAL_CODES) <= codes


def test_generated_level_gives_the_loose_trams(tmp_path):
    scene = cg.standard_scene(np.random.default_rng(2))
    packed = {t.name: t for t in read_trams(cg.write_level(scene, str(tmp_path)))}
    assert sorted(packed) == sorted(scene.trams)
    for name, tram in scene.trams.items():
        assert cg.tram_differences(packed[name], tram) == [], name


# --- bad input (docs/bad_input.md) -------------------------------------------------------------

def plain_tram(frames=5, key_size=6, parts=19, **fields):
    """A Tram whose rotation data is the last of its raw arrays (no sounds, no extents)."""
    rng = np.random.default_rng(0)
    return Tram(name="bad", frames=frames, key_size=key_size, flags=0, used_parts=0, replaced_parts=0,
                heights=np.ones(frames, np.float32), velocities=np.zeros((frames, 2), np.float32),
                tracks=[cg.random_track(rng, frames, key_size, max_gap=2) for _ in range(parts)], **fields)


def record_at(data):
    return int(np.frombuffer(data, HEADER_DTYPE, 1)[0]["data_offset"]) + 8


def patched(data, field, value):
    """`data` (a one-TRAM .oni) with a header field set."""
    out = bytearray(data)
    dtype, offset = RECORD_DTYPE.fields[field][:2]
    at = record_at(data) + offset
    out[at:at + dtype.itemsize] = np.array(value, dtype.base).tobytes()
    return bytes(out)


def raw_patched(data, field, delta, value: bytes):
    """`data` with bytes written at raw array `field`'s pointer + delta."""
    header = np.frombuffer(data, HEADER_DTYPE, 1)[0]
    at = int(header["raw_offset"]) + int(np.frombuffer(data, RECORD_DTYPE, 1, record_at(data))[0][field]) + delta
    out = bytearray(data)
    out[at:at + len(value)] = value
    return bytes(out)


def refused(tmp_path, data, *fragments, name="TRAMbad.oni"):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ObanError) as error:
        read_tram_file(str(path))
    message = str(error.value)
    assert message.startswith(str(path)) and "TRAMbad" in message
    for fragment in fragments:
        assert fragment in message
    return message


def gap_at(tram, part, key):
    """The raw offset (from the rotation data) of the gap after key `key` of part `part`."""
    before = sum(len(t.frames) * (tram.key_size + 1) - 1 for t in tram.tracks[:part])
    return 2 * len(tram.tracks) + before + key * (tram.key_size + 1) + tram.key_size


def test_gaps_that_do_not_reach_the_last_frame(tmp_path):
    tram = plain_tram(frames=9)
    last = Track(np.array([0, 1, 8]), np.zeros((3, 3), np.uint16))   # the last bytes of the raw data
    tram = Tram(**{**tram.__dict__, "tracks": [*tram.tracks[:-1], last]})
    data = raw_patched(tram_oni_bytes(tram), "rotations_at", gap_at(tram, 18, 1), bytes([6]))
    refused(tmp_path, data, "part 18's track", "its gaps reach frame 7 where the raw data ends, not the last frame 8")


def test_gaps_that_pass_the_last_frame(tmp_path):
    tram = plain_tram(frames=9)
    data = raw_patched(tram_oni_bytes(tram), "rotations_at", gap_at(tram, 3, 0), b"\xff")
    refused(tmp_path, data, "part 3's track", "pass the last frame 8")


def test_a_gap_of_zero(tmp_path):
    tram = plain_tram(frames=9)
    data = raw_patched(tram_oni_bytes(tram), "rotations_at", gap_at(tram, 0, 0), b"\x00")
    refused(tmp_path, data, "part 0's track", "key 1 has a gap of 0 frames")


@pytest.mark.parametrize("size", [3, 4, 8])
def test_key_sizes_only_the_engine_reads(tmp_path, size):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "key_size", size), f"{size}-byte rotation keys",
            "not supported")


@pytest.mark.parametrize("size", [0, 5, 7, 12, 0xFFFF])
def test_key_sizes_the_engine_does_not_read(tmp_path, size):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "key_size", size), f"key size {size} is not one")


@pytest.mark.parametrize("parts", [18, 20])
def test_part_count_differs_from_the_rotation_offsets(tmp_path, parts):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "parts", parts), f"part count ({parts}) differs",
            "rotation data")


@pytest.mark.parametrize("parts", [0, 33, 0xFFFF])
def test_part_count_out_of_range(tmp_path, parts):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "parts", parts), f"{parts} body parts")


def test_zero_frames(tmp_path):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "frames", 0), "0 frames")


@pytest.mark.parametrize("field,value,fragment", [
    ("heights_at", 0xFFFFF0, "heights: 20 bytes of raw data at 16777200 lie outside the raw table"),
    ("frames", 0xFFFF, "heights: 262140 bytes"),
    ("sound_count", 0xFFFFFFFF, "sounds: 146028888030 bytes"),
    ("extent_count", 0x10000000, "extents: 3221225472 bytes"),
    ("attack_count", 0xFF, "attacks: 8160 bytes"),
    ("rotations_at", 0x7FFFFFFF, "rotation offsets"),
])
def test_offsets_and_counts_beyond_the_raw_data(tmp_path, field, value, fragment):
    data = tram_oni_bytes(plain_tram())
    pointer = {"sound_count": "sounds_at", "extent_count": "extents_at", "attack_count": "attacks_at"}.get(field)
    if pointer:
        data = patched(data, pointer, 32)
    refused(tmp_path, patched(data, field, value), fragment)


def test_a_track_offset_beyond_the_raw_data(tmp_path):
    data = raw_patched(tram_oni_bytes(plain_tram()), "rotations_at", 2, b"\xf0\xff")
    refused(tmp_path, data, "part 1's track", "first key at byte 65520 lies past the end of the raw data")


@pytest.mark.parametrize("field", ["heights_at", "velocities_at", "rotations_at"])
def test_a_required_array_absent(tmp_path, field):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), field, 0), "raw pointer 0")


def test_a_count_without_its_array(tmp_path):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "footstep_count", 3), "3 footsteps but no raw data")


def test_a_record_too_short(tmp_path):
    data = bytearray(tram_oni_bytes(plain_tram()))
    struct.pack_into("<I", data, 64 + 12, 8 + 0x100)    # descriptor 0's data size
    refused(tmp_path, bytes(data), "256 bytes, too short for a TRAM")


def test_a_direct_animation_of_the_wrong_tag(tmp_path):
    data = bytearray(tram_oni_bytes(plain_tram(direct_animations=("other", ""))))
    data[64 + 20:64 + 24] = b"CART"    # descriptor 1, the placeholder, becomes a TRAC
    refused(tmp_path, bytes(data), "direct animation 0 link points to instance 1", "not a TRAM")


def test_a_direct_animation_link_out_of_range(tmp_path):
    refused(tmp_path, patched(tram_oni_bytes(plain_tram()), "direct_animations", [0x501, 0]),
            "direct animation 0 link 0x00000501 points outside")


def test_non_finite_heights_and_quaternions(tmp_path):
    data = raw_patched(tram_oni_bytes(plain_tram()), "heights_at", 4, np.float32(np.nan).tobytes())
    refused(tmp_path, data, "non-finite value in its heights")
    tram = plain_tram(key_size=16)
    data = tram_oni_bytes(tram)
    refused(tmp_path, raw_patched(data, "rotations_at", 2 * 19, np.float32(np.inf).tobytes()),
            "non-finite value in part 0's quaternion keys")
    rotations = (int(np.frombuffer(data, HEADER_DTYPE, 1)[0]["raw_offset"])
                 + int(np.frombuffer(data, RECORD_DTYPE, 1, record_at(data))[0]["rotations_at"]))
    third = int(np.frombuffer(data, "<u2", 1, rotations + 4)[0])      # where part 2's track starts
    refused(tmp_path, raw_patched(data, "rotations_at", third + 17 + 4, np.float32(np.nan).tobytes()),
            "non-finite value in part 2's quaternion keys")     # its second key's y


# lengths the import squares (docs/characters.md 8): at most the square root of float32's largest
MAX_SQUARE = float(np.finfo(np.float32).max)
KEY_LONGEST = np.float32(np.sqrt(MAX_SQUARE))
while float(KEY_LONGEST) ** 2 > MAX_SQUARE:
    KEY_LONGEST = np.nextafter(KEY_LONGEST, np.float32(0))
KEY_SHORTEST = np.float32(2.0 ** -63)   # its square, 2^-126, the smallest normal float32


def key_at(tram, part, key):
    """The raw offset (from the rotation data) of key `key` of part `part`."""
    return gap_at(tram, part, key) - tram.key_size


def bad_path(tmp_path):
    return f"{tmp_path / 'TRAMbad.oni'}: instance 0 (TRAMbad)"


@pytest.mark.parametrize("zero", [bytes(16), np.full(4, -0.0, np.float32).tobytes()], ids=["+0", "-0"])
def test_a_zero_quaternion_key(tmp_path, zero):
    """A 16-byte key of length 0 has no rotation (the engine's R(q) divides by its squared length)."""
    tram = plain_tram(frames=9, key_size=16)
    data = raw_patched(tram_oni_bytes(tram), "rotations_at", key_at(tram, 4, 2), zero)
    assert refused(tmp_path, data) == (f"{bad_path(tmp_path)}: part 4's key 2 (frame {tram.tracks[4].frames[2]}) "
                                       f"is a zero quaternion")


@pytest.mark.parametrize("key", [
    (1e-20, 0, 0, 0), (5e-31, -5e-31, 5e-31, 5e-31), (np.nextafter(KEY_SHORTEST, np.float32(0)), 0, 0, 0),
    (0, 2e19, 0, 0), (1e30, 1e30, -1e30, 1e30), (0, 0, 0, np.nextafter(KEY_LONGEST, np.float32(np.inf))),
    (3e38, 3e38, 3e38, 3e38)], ids=["1e-20", "1e-30", "just short", "2e19", "2e30", "just long", "6e38"])
def test_a_quaternion_whose_square_leaves_float32(tmp_path, key):
    tram = plain_tram(frames=9, key_size=16)
    key = np.array(key, np.float32)
    data = raw_patched(tram_oni_bytes(tram), "rotations_at", key_at(tram, 4, 2), key.tobytes())
    length = float(np.sqrt(sum(float(c) ** 2 for c in key)))
    assert refused(tmp_path, data) == (f"{bad_path(tmp_path)}: part 4's key 2 (frame {tram.tracks[4].frames[2]}) "
                                       f"is a quaternion of length {length:.3g}, whose square leaves float32's range")


def test_quaternions_at_the_limits_are_read(tmp_path):
    """The longest and shortest keys kept are played: every part's rotation unit at every frame."""
    tram = plain_tram(frames=9, key_size=16)
    data = tram_oni_bytes(tram)
    for key, value in ((1, (KEY_LONGEST, 0, 0, 0)), (2, (0, 0, KEY_SHORTEST, 0)),
                       (3, (KEY_LONGEST / 2, KEY_LONGEST / 2, -KEY_LONGEST / 2, KEY_LONGEST / 2))):
        data = raw_patched(data, "rotations_at", key_at(tram, 4, key), np.array(value, np.float32).tobytes())
    path = tmp_path / "TRAMlimits.oni"
    path.write_bytes(data)
    read = read_tram_file(str(path))
    assert read.tracks[4].values[1:4].tobytes() == np.array([(KEY_LONGEST, 0, 0, 0), (0, 0, KEY_SHORTEST, 0),
                                                              (KEY_LONGEST / 2, KEY_LONGEST / 2, -KEY_LONGEST / 2,
                                                               KEY_LONGEST / 2)], np.float32).tobytes()
    rotations = poses.part_rotations(read)
    assert np.allclose(np.linalg.norm(rotations, axis=2), 1.0, rtol=0, atol=1e-12)


def running_sums(velocities):
    """(frame, distance from the start) of every frame 1 ... F - 1: the velocities before it
    summed one by one in Python floats."""
    x = z = 0.0
    out = []
    for frame, (vx, vz) in enumerate(np.asarray(velocities, np.float32)[:-1].tolist(), 1):
        x, z = x + vx, z + vz
        out.append((frame, (x * x + z * z) ** 0.5))
    return out


@pytest.mark.parametrize("velocities", [
    [(3e38, 3e38)] * 9,                                     # the damaged file: one step leaves float32
    [(1e19, 0.0)] * 9,                                      # each step within, two of them beyond
    [(0.5, 0.5)] * 4 + [(-1.5e19, 0.0), (0.0, -1.5e19)] + [(0.0, 0.0)] * 3,
], ids=["3e38", "two of 1e19", "1.5e19 twice, turned"])
def test_root_motion_whose_square_leaves_float32(tmp_path, velocities):
    tram = plain_tram(frames=9)
    data = tram_oni_bytes(Tram(**{**tram.__dict__, "velocities": np.array(velocities, np.float32)}))
    frame, distance = next((f, d) for f, d in running_sums(velocities) if d * d > MAX_SQUARE)
    assert refused(tmp_path, data) == (f"{bad_path(tmp_path)}: its root motion at frame {frame} (summed velocities) "
                                       f"lies {distance:.3g} units from its start, a distance whose square leaves "
                                       f"float32's range")


@pytest.mark.parametrize("velocities", [
    [(0.0, 0.0)] * 8 + [(3e38, -3e38)],                     # the last velocity moves no frame
    [(1.8e19, 0.0), (-1.8e19, 1.8e19), (0.0, -1.8e19)] * 3,  # steps far beyond together, summed within
], ids=["last", "back and forth"])
def test_root_motion_within_float32_is_read(tmp_path, velocities):
    tram = plain_tram(frames=9)
    path = tmp_path / "TRAMfar.oni"
    path.write_bytes(tram_oni_bytes(Tram(**{**tram.__dict__, "velocities": np.array(velocities, np.float32)})))
    location, _ = poses.root_motion(read_tram_file(str(path)))
    assert max(d for _, d in running_sums(velocities)) ** 2 <= MAX_SQUARE
    assert (np.square(location).sum(axis=1) <= MAX_SQUARE).all()


def test_a_height_whose_square_leaves_float32(tmp_path):
    tram = plain_tram(frames=9)
    heights = np.ones(9, np.float32)
    heights[5] = -KEY_LONGEST                                # the longest kept
    path = tmp_path / "TRAMlow.oni"
    path.write_bytes(tram_oni_bytes(Tram(**{**tram.__dict__, "heights": heights})))
    assert read_tram_file(str(path)).heights[5] == -KEY_LONGEST
    heights[3] = np.nextafter(KEY_LONGEST, np.float32(np.inf))
    data = tram_oni_bytes(Tram(**{**tram.__dict__, "heights": heights}))
    assert refused(tmp_path, data) == (f"{bad_path(tmp_path)}: its height at frame 3 is {float(heights[3]):.3g} "
                                       f"units, a distance whose square leaves float32's range")


def test_trams_read_together_are_checked_each_on_its_own(tmp_path):
    """TRAMs read together: velocities far beyond float32's square added up over all of them,
    each TRAM's own motion within, are read; the one whose motion leaves it is named."""
    tram = plain_tram(frames=9)
    far = np.array([(1.8e19, 0.0), (-1.8e19, 0.0)] * 4 + [(0.0, 0.0)], np.float32)
    velocities = {"a": far, "b": far[::-1].copy(), "bad": np.full((9, 2), 1e19, np.float32), "c": far}
    paths = []
    for name, steps in velocities.items():
        paths.append(tmp_path / f"TRAM{name}.oni")
        paths[-1].write_bytes(tram_oni_bytes(Tram(**{**tram.__dict__, "name": name, "velocities": steps})))
    with Library(str(paths[0])) as library:
        good = [path for path in paths if "bad" not in path.name]
        read = library.cached_all([(library.open(str(path)), 0) for path in good], read_tram_instances)
    assert [t.name for t in read] == ["a", "b", "c"]
    with Library(str(paths[0])) as library, pytest.raises(ObanError) as error:
        library.cached_all([(library.open(str(path)), 0) for path in paths], read_tram_instances)
    assert str(error.value).startswith(f"{paths[2]}: instance 0 (TRAMbad): its root motion at frame 2 ")


def test_a_level_without_its_raw_file(tmp_path):
    scene = cg.CharacterScene(trams={"bad": plain_tram()})
    path = cg.write_level(scene, str(tmp_path))
    os.remove(path[:-4] + ".raw")
    with pytest.raises(ObanError, match="raw data file level7_Final.raw is missing"):
        read_trams(path)


def test_no_tram_in_the_file(tmp_path):
    with pytest.raises(ObanError, match="holds no animation"):
        read_tram_file(os.path.join(DATA, "oni", "TRACchar0.oni"))
