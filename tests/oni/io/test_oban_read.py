"""Readers: the samples (some written by OniSplit), names, and every class of bad input."""

import copy
import fnmatch
import os
import struct

import numpy as np
import pytest
from oban_generate import random_animation
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.core.id_properties import unsigned32
from oban_import.oni.io.container.container import DESCRIPTOR_DTYPE, HEADER_DTYPE
from oban_import.oni.io.oban import properties as oni_properties
from oban_import.oni.io.oban import read as reader_module
from oban_import.oni.io.oban.properties import descriptions, keys_from_property, properties, stored_data
from oban_import.oni.io.oban.read import read_file, read_files
from oban_import.oni.io.oban.record import (RECORD_DTYPE, SCREENED_AT_ONCE, SCREENED_FROM, check, check_all,
                                            parse_record, raw_name)
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes

KEYS_AT = RECORD_DTYPE.itemsize  # 128: keys start here in a raw file


def sample(*parts):
    return os.path.join(DATA, *parts)


@pytest.fixture
def valid():
    return random_animation(np.random.default_rng(1), name="door", frames=40, key_count=5, flags=0x10)


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def expect_error(path, *fragments):
    with pytest.raises(ObanError) as caught:
        read_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_samples_read_with_their_names_and_fields():
    door = read_file(sample("raw", "00010-door_swing.OBAN"))[0]
    assert (door.name, door.flags, door.frames, len(door.keys), door.door_open_frame) == ("door_swing", 0x10, 100, 18, 50)
    assert door.ticks_per_frame == 80 and door.warnings == []
    assert read_file(sample("oni", "OBANfan_loop.oni"))[0].name == "fan_loop"
    level = read_file(sample("level", "level1_Final.dat"))
    assert sorted(a.name for a in level) == ["camera_flyby", "door_swing", "fan_loop", "lift_pingpong", "spec_example"]
    assert [a.name for a in read_file(sample("level", "level1_Final.dat"), "*door*")] == ["door_swing"]
    assert [a.name for a in read_file(sample("level", "level1_Final.dat"), "*LOOP*")] == ["fan_loop"]


def test_the_same_animation_reads_the_same_from_every_container():
    raw = read_file(sample("raw", "00013-lift_pingpong.OBAN"))[0]
    for other in (read_file(sample("oni", "OBANlift_pingpong.oni"))[0],
                  read_file(sample("level", "level1_Final.dat"), "lift_pingpong")[0]):
        assert properties(other) == properties(raw)
        assert np.array_equal(stored_data(other)["oban_keys"], stored_data(raw)["oban_keys"])
        assert other.keys.tobytes() == raw.keys.tobytes()


def test_writer_reproduces_onisplit_files_byte_for_byte():
    names = os.listdir(sample("oni"))
    assert len(names) == 5
    for name in names:
        data = open(sample("oni", name), "rb").read()
        assert oni_file_bytes(read_file(sample("oni", name))[0]) == data


def test_properties_hold_the_stored_fields():
    fan = read_file(sample("raw", "00011-fan_loop.OBAN"))[0]
    p = properties(fan)
    assert p["oban_name"] == "fan_loop" and p["oban_flags"] == 1 and p["oban_loop"] and not p["oban_pingpong"]
    assert p["oban_frames"] == 48 and p["oban_ticks_per_frame"] == 80 and p["oban_door_open_frame"] == 0
    assert np.array(p["oban_start_matrix"], np.float32).tobytes() == fan.start_matrix.tobytes()
    assert np.array(p["oban_base_matrix"], np.float32).tobytes() == fan.base_matrix.tobytes()
    stored = stored_data(fan)
    assert keys_from_property(stored["oban_keys"]).tobytes() == fan.keys.tobytes()
    assert [unsigned32(v) for v in stored["oban_record_header"]] == list(struct.unpack(
        "<II", open(sample("raw", "00011-fan_loop.OBAN"), "rb").read(8)))


@pytest.mark.parametrize("chunk_keys", [1, 7, 40, 1 << 16])
def test_descriptions_are_each_animations_properties_and_stored_data(monkeypatch, chunk_keys):
    """descriptions() makes several animations' keys properties together, a chunk of keys
    at a time (here down to one key, and animations longer than a chunk): the same as
    properties() and stored_data() of each, in order."""
    monkeypatch.setattr(oni_properties, "CHUNK_KEYS", chunk_keys)
    rng = np.random.default_rng(5)
    animations = [read_file(sample("raw", "00011-fan_loop.OBAN"))[0]] + [
        random_animation(rng, name=f"a{i}", frames=60, key_count=int(rng.integers(1, 30)), flags=int(rng.integers(32)))
        for i in range(12)]
    animations[3].record_header = (0xFFFFFFFF, 7)
    described = list(descriptions(animations))
    assert len(described) == len(animations)
    for animation, (on_object, on_action) in zip(animations, described):
        assert on_object == properties(animation)
        expected = properties(animation) | stored_data(animation)
        assert on_action.keys() == expected.keys()
        for key, value in expected.items():
            if key == "oban_keys":
                assert value.tobytes() == np.asarray(on_action[key]).tobytes()
            else:
                assert on_action[key] == value, key
        assert keys_from_property(on_action["oban_keys"]).tobytes() == animation.keys.tobytes()


# ---- bad input: raw files -------------------------------------------------------

def test_empty_file(tmp_path):
    expect_error(write(tmp_path, "a.oban", b""), "empty file")


def test_truncated_header(tmp_path, valid):
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)[:100]), "truncated at byte 100")


def test_truncated_keys(tmp_path, valid):
    data = raw_file_bytes(valid)[:-40]
    expect_error(write(tmp_path, "a.oban", data), "key count says 5 but only 3 fit", f"truncated at byte {len(data)}")


def test_key_count_beyond_the_file(tmp_path, valid):
    data = bytearray(raw_file_bytes(valid))
    struct.pack_into("<H", data, KEYS_AT - 2, 65535)
    expect_error(write(tmp_path, "a.oban", bytes(data)), "key count says 65535 but only 5 fit")


@pytest.mark.parametrize("frames, message", [([0, 10, 10, 20, 39], "key frames not increasing at key 2"),
                                             ([0, 10, 5, 20, 39], "key frames not increasing at key 2")])
def test_unsorted_or_duplicate_key_frames(tmp_path, valid, frames, message):
    valid.keys["frame"] = frames
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), message)


def test_frame_count_zero(tmp_path, valid):
    valid.frames = 0
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), "frame count is 0")


def test_no_keys(tmp_path, valid):
    valid.keys = valid.keys[:0]
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), "no keys")


@pytest.mark.parametrize("field, index", [("rotation", 3), ("position", 1)])
def test_non_finite_key(tmp_path, valid, field, index):
    valid.keys[field][index][0] = np.nan if field == "rotation" else np.inf
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), f"non-finite value in key {index}")


def test_non_finite_base_matrix(tmp_path, valid):
    valid.base_matrix[4] = np.inf
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), "non-finite value in the base matrix")


def test_zero_quaternion(tmp_path, valid):
    valid.keys["rotation"][2] = 0
    expect_error(write(tmp_path, "a.oban", raw_file_bytes(valid)), "key 2 has a zero quaternion")


def test_keys_not_covering_the_frames_are_warned_about(tmp_path, valid):
    valid.keys["frame"] = [3, 10, 20, 30, 35]
    animation = read_file(write(tmp_path, "a.oban", raw_file_bytes(valid)))[0]
    assert any("first key is at frame 3" in w for w in animation.warnings)
    assert any("last key is at frame 35, not 39" in w for w in animation.warnings)


def test_unknown_flag_bits_are_kept_and_warned_about(tmp_path, valid):
    valid.flags = 0x80000011
    animation = read_file(write(tmp_path, "a.oban", raw_file_bytes(valid)))[0]
    assert animation.flags == 0x80000011
    assert animation.warnings == ["unknown flag bits 0x80000000 kept"]
    assert properties(animation)["oban_flags"] & 0xFFFFFFFF == 0x80000011


def test_trailing_bytes_are_warned_about(tmp_path, valid):
    animation = read_file(write(tmp_path, "a.oban", raw_file_bytes(valid) + bytes(7)))[0]
    assert animation.warnings == ["7 bytes after the last key ignored"]


def test_directory_and_missing_file(tmp_path):
    expect_error(str(tmp_path), "is a directory")
    expect_error(str(tmp_path / "missing.oban"), "cannot be read", "No such file")


def test_unreadable_file(tmp_path, valid, monkeypatch):
    path = write(tmp_path, "a.oban", raw_file_bytes(valid))

    def refuse(*args, **kwargs):  # as root every file is readable: make this one not
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr("os.open", refuse)   # every reader opens files through os.open
    expect_error(path, "cannot be read", "Permission denied")


# ---- bad input: containers --------------------------------------------------------

def container(valid, header=(), descriptor=()):
    """A valid .oni file with header or descriptor fields changed."""
    data = bytearray(oni_file_bytes(valid))
    changed = np.frombuffer(data, HEADER_DTYPE, count=1).copy(), \
        np.frombuffer(data, DESCRIPTOR_DTYPE, count=1, offset=64).copy()
    for target, changes in zip(changed, (dict(header), dict(descriptor))):
        for key, value in changes.items():
            target[key] = value
    header, descriptor = changed
    data[:64] = header.tobytes()
    data[64:84] = descriptor.tobytes()
    return bytes(data)


def test_oni_truncated_header(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", oni_file_bytes(valid)[:40]), "truncated at byte 40")


def test_oni_wrong_checksum(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, header={'checksum': 12345})), "not an Oni file")


def test_oni_wrong_version(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, header={"version": b"33RV"})), "unknown version b'VR33'")


def test_oni_wrong_tag_holds_no_oban(tmp_path, valid):
    assert read_file(write(tmp_path, "OBANa.oni", container(valid, descriptor={"tag": b"CSBS"}))) == []


def test_oni_instance_count_beyond_the_file_is_refused_before_reading(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, header={"instance_count": 0xFFFFFFFF})),
                 "85899345900 bytes", "outside the file")


def test_oni_data_table_outside_the_file(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, header={"data_size": 1 << 30})), "data table", "outside the file")


def test_oni_descriptor_outside_the_data_table(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, descriptor={"data_offset": 4096})),
                 "descriptor 0 points outside the data table")


def test_oni_bad_name_offset(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, descriptor={"name_offset": 999})),
                 "name offset 999 is outside the name table")


def test_oni_record_smaller_than_its_keys(tmp_path, valid):
    expect_error(write(tmp_path, "OBANa.oni", container(valid, descriptor={"data_size": 200})),
                 "key count says 5 but only 2 fit")


def test_level_overlapping_descriptors(tmp_path):
    data = bytearray(open(sample("level", "level1_Final.dat"), "rb").read())
    descriptors = np.frombuffer(data, DESCRIPTOR_DTYPE, count=6, offset=64).copy()
    descriptors[2]["data_offset"] = descriptors[1]["data_offset"] + 64
    data[64:64 + descriptors.nbytes] = descriptors.tobytes()
    expect_error(write(tmp_path, "level1_Final.dat", bytes(data)), "descriptors 1 and 2 overlap")


def test_level_truncated_inside_an_oban(tmp_path):
    data = open(sample("level", "level1_Final.dat"), "rb").read()
    expect_error(write(tmp_path, "level1_Final.dat", data[:5000]), "outside the file")


def _defective(rng, index):
    """A generated animation with, often, one of the defects check() refuses or warns about,
    or values it accepts that a float32 screening cannot tell from them."""
    animation = random_animation(rng, name=f"a{index}", frames=int(rng.integers(1, 60)))
    keys, defect = animation.keys, int(rng.integers(14))
    values = keys.view("<f4").reshape(-1, 8)
    k = int(rng.integers(len(keys)))
    if defect == 0:
        animation.frames = 0
    elif defect == 1:
        animation.keys = keys[:0]
    elif defect == 2:
        animation.base_matrix[int(rng.integers(12))] = rng.choice([np.nan, np.inf, -np.inf])
    elif defect == 3:
        animation.start_matrix[int(rng.integers(12))] = np.nan
    elif defect == 4:
        values[k, int(rng.integers(7))] = rng.choice([np.nan, np.inf])
    elif defect == 5:
        values[k, :4] = 0.0
    elif defect == 6 and len(keys) > 1:
        keys["frame"][k] = keys["frame"][k - 1] if k else keys["frame"][1]   # a repeat, or decreasing
    elif defect == 7:
        keys["frame"] += np.uint32(rng.integers(1, 5))                       # first key after 0
    elif defect == 8:
        animation.flags |= 0x100
    elif defect == 9:
        values[k, :7] = 3e38 * rng.choice([-1.0, 1.0], 7)    # finite, their float32 sum is not
    elif defect == 10:
        values[k, :4] = 1e-25 * rng.choice([-1.0, 1.0], 4)   # not zero, their float32 squares are
    return animation


def _checked_alone(animation, path):
    """(message or None, warnings) check() gives one animation, on a copy."""
    alone = copy.deepcopy(animation)
    try:
        check(alone, path)
    except ObanError as error:
        return str(error), []
    return None, alone.warnings


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("seed, count", [(seed, None) for seed in range(40)] + [(40, 2 * SCREENED_AT_ONCE + 5)])
def test_checking_files_together_says_what_checking_each_says(seed, count):
    """check_all (one vectorised pass over many files' keys, a group at a time) refuses
    exactly the animations check() refuses, with its message, and adds the same warnings
    to the others; numpy warns of nothing on the way."""
    rng = np.random.default_rng(seed)
    animations = [_defective(rng, i) for i in range(count or int(rng.integers(SCREENED_FROM, 40)))]
    paths = [f"file{i}.oban" for i in range(len(animations))]
    expected = [_checked_alone(a, path) for a, path in zip(animations, paths)]
    errors = check_all(animations, paths)
    assert any(errors) and not all(errors)
    for animation, error, (message, warnings) in zip(animations, errors, expected):
        assert (str(error) if error else None) == message
        assert (animation.warnings if not error else []) == warnings


@pytest.mark.parametrize("count", [SCREENED_FROM, SCREENED_FROM + 3, SCREENED_AT_ONCE + SCREENED_FROM])
def test_a_batch_warns_of_each_last_key_off_the_last_frame(count):
    """check_all of a batch big enough to be screened together (SCREENED_FROM animations or more,
    SCREENED_AT_ONCE a group) warns, for each animation whose last key is not on its last frame,
    where that key is (docs/bad_input.md): the 8th, the first of a second group and the last of
    the batch among them, a key before the last frame and one past it, with the first key on 0
    and known flags (no other warning to come with it); the others get none."""
    rng = np.random.default_rng(count)
    animations = [random_animation(rng, name=f"a{i}", frames=40, key_count=5, flags=0x10) for i in range(count)]
    expected = [[] for _ in animations]
    for i in sorted({SCREENED_FROM - 1, count - 1} | ({SCREENED_AT_ONCE} if count > SCREENED_AT_ONCE else set())):
        animation = animations[i]
        if i % 2:
            animation.keys = animation.keys[:-1]          # the last key before frame 39
        else:
            animation.frames = 30                         # the last key, on 39, past frame 29
        last, frames = int(animation.keys["frame"][-1]), animation.frames
        assert animation.keys["frame"][0] == 0 and last != frames - 1
        expected[i] = [f"last key is at frame {last}, not {frames - 1} (frame count - 1)"]
    assert check_all(animations, "batch.oban") == [None] * count
    assert [animation.warnings for animation in animations] == expected


def test_read_files_refuses_only_the_bad_files_and_reads_the_rest(tmp_path, valid):
    good = write(tmp_path, "good.oban", raw_file_bytes(valid))
    broken = copy.deepcopy(valid)
    broken.keys["position"][2, 1] = np.nan
    bad = write(tmp_path, "bad.oban", raw_file_bytes(broken))
    empty = write(tmp_path, "empty.oban", b"")
    read = read_files([good, bad, empty, good])
    assert [type(r) for r in read] == [list, ObanError, ObanError, list]
    assert str(read[1]) == f"{bad}: 'bad': non-finite value in key 2"
    assert str(read[2]) == f"{empty}: empty file"
    assert np.array_equal(read[0][0].keys, valid.keys) and np.array_equal(read[3][0].keys, valid.keys)


@pytest.mark.parametrize("at_once", [1, 3, 64])
def test_raw_files_parsed_together_as_each_alone(tmp_path, monkeypatch, at_once):
    """Raw files are parsed a group at a time (read_raw_many): good records beside every
    kind of bad one, records with bytes after their keys, other containers named .OBAN
    and a name filter give, file by file, what parse_record() gives each file alone."""
    monkeypatch.setattr(reader_module, "RAW_AT_ONCE", at_once)
    rng = np.random.default_rng(11)
    files = []
    for i in range(14):
        animation = random_animation(rng, name=f"door{i}", frames=int(rng.integers(2, 90)), key_count=None,
                                     flags=int(rng.integers(32)))
        animation.record_header = (int(rng.integers(1 << 32)), int(rng.integers(1 << 32)))
        files.append((f"{i:05d}-door{i}.oban", raw_file_bytes(animation)))
    data = raw_file_bytes(random_animation(rng, name="x", frames=40, key_count=5))
    files += [("empty.oban", b""), ("short.oban", data[:100]), ("cut.oban", data[:-40]),
              ("tail.oban", data + b"\0" * 13), ("zero.oban", data[:KEYS_AT] + b"\0" * (len(data) - KEYS_AT)),
              ("OBANlift.oban", oni_file_bytes(random_animation(rng, name="lift", frames=30, key_count=4)))]
    order = rng.permutation(len(files))
    paths = [write(tmp_path, files[i][0], files[i][1]) for i in order]
    for name_glob in (None, "*door1*"):
        read = read_files(paths, name_glob)
        for path, r in zip(paths, read):
            data = open(path, "rb").read()
            if path.endswith("OBANlift.oban"):
                assert [a.name for a in r] == ([] if name_glob else ["lift"])
                continue
            try:   # what reading the file alone gives: parse errors first, whatever the filter
                if not data:
                    raise ObanError(path, "empty file")
                alone = [parse_record(data, path, raw_name(path), size=len(data))]
                alone = [a for a in alone if not name_glob or fnmatch.fnmatch(a.name.lower(), name_glob)]
                for a in alone:
                    check(a, path)
            except ObanError as error:
                assert isinstance(r, ObanError) and str(r) == str(error), (path, r, error)
                continue
            assert not isinstance(r, ObanError), (path, str(r))
            assert [_fields(a) for a in r] == [_fields(a) for a in alone], path
            assert all(a.keys.flags.writeable and a.start_matrix.flags.writeable for a in r)


def _fields(animation):
    return (animation.name, animation.flags, animation.start_matrix.tobytes(), animation.base_matrix.tobytes(),
            animation.ticks_per_frame, animation.frames, animation.door_open_frame, animation.keys.tobytes(),
            animation.warnings, animation.record_header)


def test_a_raw_record_that_begins_with_a_less_than_sign_is_raw(tmp_path, valid):
    """An instance id whose low byte is 0x3C ('<') starts a raw file with '<': still raw.
    XML is told by how it begins: a declaration, a comment or DOCTYPE, or <Oni>."""
    for instance_id in (0x3C, 0x213C, 0x3F3C):   # '<', '<!', '<?' and two more bytes
        valid.record_header = (instance_id, 0)
        path = write(tmp_path, f"{instance_id:05d}-door.OBAN", raw_file_bytes(valid))
        if instance_id == 0x3C:
            (animation,) = read_file(path)
            assert animation.record_header == (0x3C, 0) and animation.keys.tobytes() == valid.keys.tobytes()
        else:   # read as XML, refused as such
            expect_error(path, "not well-formed")
    xml = open(sample("xml", sorted(os.listdir(sample("xml")))[0]), "rb").read()
    body = xml[xml.index(b"?>") + 2:].lstrip()   # from <Oni>
    for text in (xml, b"\xef\xbb\xbf" + xml, body, b"\xef\xbb\xbf \r\n\t" + body,
                 b"<!-- OniSplit -->" + body):
        assert read_file(write(tmp_path, "00001-door.OBAN", text))
