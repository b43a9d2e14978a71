"""Every reader fuzzed (docs/bad_input.md, "Fuzzing"): raw .oban, OniSplit .oni, level .dat and OniSplit XML.

Hypothesis mutates valid files: byte flips, truncations, insertions, deletions,
splices of valid files of any kind, header, descriptor and record fields set to
boundary values (0, 1, 0xFFFF, 0xFFFFFFFF, sizes just past the end, another
field's value); for XML, elements dropped, duplicated, moved or renamed, numbers
replaced by huge, non-finite or garbage text, DOCTYPE, entity, CDATA and other
markup injected, deep nesting, huge text and other encodings. For every input:

- `read_file` returns checked animations or raises ObanError whose message starts
  with the path; no other exception escapes;
- its tracemalloc peak stays under max(1 MiB, 6 x the file size). The fixed cost
  (numpy, the expat parser, one 64 KiB chunk) stays under 300 KiB. What grows
  with the file is what is returned: the largest legitimate ratios are about
  4.5 x for a level file of many one-key OBANs (an Animation's Python and numpy
  objects weigh some 850 bytes against a 188-byte record) and 3.2 x for XML
  written with the shortest numbers (Python floats held until the key array is
  built); test_legitimate_worst_cases_fit_the_limits keeps those true. A count
  read from a file and trusted would cost far more than 6 x.

The runs are derandomized and keep no example database, so every run tries the
same inputs. `tools/fuzz.py` is the long run (atheris, or these strategies with
random seeds); what it finds goes to tests/data/regressions/, replayed below.
"""

import codecs
import encodings.aliases
import math
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limits import measured
from oban_generate import random_animation
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container import container
from oban_import.oni.io.container.container import DESCRIPTOR_DTYPE, HEADER_DTYPE, OBAN_TAG, PC_CHECKSUM, SIGNATURE
from oban_import.oni.io.oban import onisplit_xml
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import KEY_DTYPE, RECORD_DTYPE, Animation, record_bytes
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes

REGRESSIONS = os.path.join(DATA, "regressions")
MEMORY_FLOOR = 1 << 20
MEMORY_FACTOR = 6


def memory_limit(size):
    return max(MEMORY_FLOOR, MEMORY_FACTOR * size)


# ---- the one property every input must have --------------------------------------------

def read_within_limits(path, name_glob=None):
    """read_file(path): the animations, or the ObanError; anything else propagates.

    Fails if its tracemalloc peak is over the limit (limits.measured).
    """
    size = os.path.getsize(path)
    outcome, peak = measured(lambda: read_file(path, name_glob))
    assert peak < memory_limit(size), f"peak {peak} bytes for a file of {size} bytes"
    if isinstance(outcome, ObanError):
        message = str(outcome)
        assert message.startswith(f"{path}: ") and outcome.path == path, message
        assert len(message) < 1000, message[:200]  # a clear message, not a dump of the file
    else:
        assert isinstance(outcome, list)
        for animation in outcome:
            assert_playable(animation)
    return outcome


def assert_playable(a):
    """What check() promises to everything after the reader."""
    assert isinstance(a, Animation) and isinstance(a.name, str)
    assert a.keys.dtype == KEY_DTYPE and 1 <= len(a.keys) <= 0xFFFF
    assert 1 <= a.frames <= 0xFFFF and 0 <= a.ticks_per_frame <= 0xFFFF and 0 <= a.door_open_frame <= 0xFFFF
    assert 0 <= a.flags <= 0xFFFFFFFF
    for matrix in (a.start_matrix, a.base_matrix):
        assert matrix.dtype == np.float32 and matrix.shape == (12,) and np.isfinite(matrix).all()
    assert np.isfinite(a.keys["rotation"]).all() and np.isfinite(a.keys["position"]).all()
    assert a.keys["rotation"].any(axis=1).all()
    assert (np.diff(a.keys["frame"].astype(np.int64)) > 0).all()
    assert all(isinstance(w, str) for w in a.warnings)


# ---- valid files to start from ---------------------------------------------------------

def _files(folder, count):
    """The bytes of the `count` files of a tests/data folder (asserted: none missing, none unread)."""
    names = sorted(os.listdir(os.path.join(DATA, folder)))
    assert len(names) == count, (folder, names)
    return [open(os.path.join(DATA, folder, n), "rb").read() for n in names]


def container_bytes(entries, version=b"13RV"):
    """A level-style container: entries are (tag, name or None, record or None, flags);
    a None name is unnamed (flag 1), a None record a placeholder (data offset 0)."""
    names, name_offsets = bytearray(), []
    for tag, name, _, _ in entries:
        name_offsets.append(len(names))
        if name is not None:
            names += tag[::-1] + name.encode("latin-1") + b"\0"
    data, data_offsets = bytearray(), []
    for _, _, record, _ in entries:
        data_offsets.append(len(data) + 8 if record is not None else 0)
        data += record or b""
    table = 64 + DESCRIPTOR_DTYPE.itemsize * len(entries)
    header = np.zeros(1, HEADER_DTYPE)
    header["checksum"], header["version"], header["signature"] = PC_CHECKSUM, version, SIGNATURE
    header["instance_count"] = header["name_count"] = len(entries)
    header["data_offset"], header["data_size"] = table, len(data)
    header["name_offset"], header["name_size"] = table + len(data), len(names)
    descriptors = np.zeros(len(entries), DESCRIPTOR_DTYPE)
    for d, (tag, name, record, flags), name_offset, data_offset in zip(descriptors, entries, name_offsets,
                                                                       data_offsets):
        d["tag"], d["data_offset"], d["name_offset"] = tag, data_offset, name_offset
        d["data_size"] = len(record) if record is not None else 0
        d["flags"] = flags | (1 if name is None else 0) | (2 if record is None else 0)
    return header.tobytes() + descriptors.tobytes() + bytes(data) + bytes(names)


def _generated(seed, **kwargs):
    return random_animation(np.random.default_rng(seed), **kwargs)


def _numbers(values):
    return " ".join(f"{float(v):.9g}" for v in values)


def xml_text(animations, extra=""):
    """OniSplit XML holding `animations` (ids 0, 1, ...), `extra` after the first."""
    body = []
    for i, a in enumerate(animations):
        keys = "".join(f"<OBANKeyFrame><Rotation>{_numbers(k['rotation'])}</Rotation>"
                       f"<Translation>{_numbers(k['position'])}</Translation><Time>{k['frame']}</Time>"
                       "</OBANKeyFrame>\n" for k in a.keys)
        body.append(f'<OBAN id="{i}"><Flags>{a.flags}</Flags>'
                    f"<InitialTransform>{_numbers(a.start_matrix)}</InitialTransform>"
                    f"<BaseTransform>{_numbers(a.base_matrix)}</BaseTransform>"
                    f"<FrameLength>{a.ticks_per_frame}</FrameLength><FrameCount>{a.frames}</FrameCount>"
                    f"<HalfStopFrame>{a.door_open_frame}</HalfStopFrame><KeyFrames>\n{keys}</KeyFrames></OBAN>\n")
        if i == 0:
            body.append(extra)
    return '<?xml version="1.0" encoding="utf-8"?>\n<Oni>\n' + "".join(body) + "</Oni>\n"


def _seeds():
    small = [_generated(s, name=f"gen{s}", frames=int(f), key_count=int(k))
             for s, (f, k) in enumerate([(2, 2), (1, 1), (12, 5), (30, 30), (60, 7)])]
    raw = _files("raw", 5) + [raw_file_bytes(a) for a in small]
    oni = _files("oni", 5) + [oni_file_bytes(a) for a in small]
    level = _files("level", 2)[:1] + [
        container_bytes([(b"TBUS", "sample", bytes(36), 0),
                         (OBAN_TAG, "gen2", record_bytes(small[2]), 0),
                         (OBAN_TAG, None, record_bytes(small[3]), 0),      # unnamed
                         (OBAN_TAG, "elsewhere", None, 0),                 # placeholder
                         (b"CSBS", "other", bytes(40), 8),
                         (OBAN_TAG, "gen4", record_bytes(small[4]), 0)]),
        container_bytes([(OBAN_TAG, "gen0", record_bytes(small[0]), 0)], version=b"23RV"),
        container_bytes([]),
    ]
    xml = [b.decode("utf-8") for b in _files("xml", 5)] + [
        xml_text(small[2:3]),
        xml_text(small[:2] + small[4:], extra='<TXMP id="7"><Anything>1 2</Anything></TXMP>\n'
                                             '<Instance id="9" type="OBAN"><Flags/></Instance>\n'),
    ]
    return {"raw": raw, "oni": oni, "dat": level, "xml": xml}


SEEDS = _seeds()
BINARY_SEEDS = SEEDS["raw"] + SEEDS["oni"] + SEEDS["dat"]
ALL_SEEDS = BINARY_SEEDS + [x.encode("utf-8") for x in SEEDS["xml"]]


# ---- binary mutations ---------------------------------------------------------------------

U16 = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF]
U32 = [0, 1, 2, 7, 8, 9, 0x13, 0x14, 0x20, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
       0xFFFFFFF8, 0xFFFFFFFE, 0xFFFFFFFF]
F32 = [0.0, -0.0, 1.0, -1.0, math.nan, -math.nan, math.inf, -math.inf, 3.4028235e38, -3.4028235e38, 1e-45,
       1.1754944e-38, 65535.0, 16777217.0]
TAGS = [OBAN_TAG, b"OBAN", b"TBUS", b"CSBS", b"\0\0\0\0", b"NAB\0", b"\xff\xff\xff\xff"]
VERSIONS = [b"13RV", b"23RV", b"33RV", b"VR32", b"\0\0\0\0"]
CHECKSUMS = [PC_CHECKSUM, 0x0003BCDF23C13061, 0, 0xFFFFFFFFFFFFFFFF, PC_CHECKSUM + 1]
SIGNATURES = [SIGNATURE, 0, SIGNATURE + 1]
PACK = {"u16": "<H", "u32": "<I"}


def _record_fields(start, data):
    fields = [(start + RECORD_DTYPE.fields[n][1], "u32") for n in ("instance_id", "level_id", "flags")]
    fields += [(start + RECORD_DTYPE.fields[n][1] + 4 * i, "f32") for n in ("start_matrix", "base_matrix")
               for i in range(12)]
    fields += [(start + RECORD_DTYPE.fields[n][1], "u16")
               for n in ("ticks_per_frame", "frames", "door_open_frame", "key_count")]
    keys = start + RECORD_DTYPE.itemsize
    for k in range(keys, len(data) - KEY_DTYPE.itemsize + 1, KEY_DTYPE.itemsize):
        fields += [(k + 4 * i, "f32") for i in range(7)] + [(k + 28, "u32")]
    return fields


def layout(data):
    """Every field of a valid binary file as (offset, kind), and the sizes worth trying in them."""
    size = len(data)
    anchors = {0, 8, 64, RECORD_DTYPE.itemsize}
    if not container.looks_like_container(data[:12]):
        fields = _record_fields(0, data)
    else:
        header = np.frombuffer(data, HEADER_DTYPE, count=1)[0]
        fields = [(0, "checksum"), (8, "version"), (12, "signature")]
        fields += [(HEADER_DTYPE.fields[n][1], "u32") for n in HEADER_DTYPE.names
                   if HEADER_DTYPE.fields[n][0] == np.dtype("<u4")]
        count = int(header["instance_count"])
        table = int(header["data_offset"])
        anchors |= {table, int(header["name_offset"]), int(header["data_size"]), int(header["name_size"])}
        for i, d in enumerate(np.frombuffer(data, DESCRIPTOR_DTYPE, count=count, offset=64)):
            at = 64 + DESCRIPTOR_DTYPE.itemsize * i
            fields += [(at, "tag")] + [(at + o, "u32") for o in (4, 8, 12, 16)]
            anchors |= {int(d["data_offset"]), int(d["data_size"]), int(d["name_offset"])}
            if d["tag"] == OBAN_TAG and d["data_offset"]:
                start = table + int(d["data_offset"]) - 8
                fields += _record_fields(start, data[:start + int(d["data_size"])])
                anchors.add(start)
    sizes = {size + d - a for a in anchors for d in (-1, 0, 1) if 0 <= size + d - a <= 0xFFFFFFFF}
    sizes |= {(size - a - RECORD_DTYPE.itemsize) // KEY_DTYPE.itemsize + d for a in anchors for d in (0, 1)
              if size - a >= RECORD_DTYPE.itemsize}
    return fields, sorted(sizes | anchors)


LAYOUTS = {id(data): layout(data) for data in BINARY_SEEDS}


@st.composite
def field_value(draw, kind, sizes, old):
    if kind == "f32":
        return struct.pack("<f", draw(st.sampled_from(F32)))
    if kind == "tag":
        return draw(st.sampled_from(TAGS))
    if kind == "version":
        return draw(st.sampled_from(VERSIONS))
    if kind in ("checksum", "signature"):
        return struct.pack("<Q", draw(st.sampled_from(CHECKSUMS if kind == "checksum" else SIGNATURES)))
    top = 0xFFFF if kind == "u16" else 0xFFFFFFFF
    old = struct.unpack(PACK[kind], old)[0]
    nearby = [old - 1, old + 1, old * 2, old + 0x8000, old + 0x10000]
    value = draw(st.sampled_from(U16 if kind == "u16" else U32) | st.sampled_from(sizes) | st.sampled_from(nearby)
                 | st.integers(0, top))
    return struct.pack(PACK[kind], value & top)


WIDTH = {"u16": 2, "u32": 4, "f32": 4, "tag": 4, "version": 4, "checksum": 8, "signature": 8}
BINARY_OPS = ["field", "field", "field", "flip", "truncate", "insert", "delete", "splice", "overwrite", "copy"]


@st.composite
def mutated_binary(draw, seeds, own_extensions):
    original = draw(st.sampled_from(seeds))
    fields, sizes = LAYOUTS[id(original)]
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(BINARY_OPS))
        if op == "field" and fields:
            at, kind = draw(st.sampled_from(fields))
            width = WIDTH[kind]
            if at + width <= len(data):
                data[at:at + width] = draw(field_value(kind, sizes, bytes(data[at:at + width])))
        elif op == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= draw(st.integers(1, 255))
        elif op == "truncate":
            del data[draw(st.integers(0, len(data))):]
        elif op == "insert":
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=64))
        elif op == "delete" and data:
            at = draw(st.integers(0, len(data) - 1))
            del data[at:at + draw(st.integers(1, 256))]
        elif op == "splice":
            other = draw(st.sampled_from(ALL_SEEDS))
            a = draw(st.integers(0, len(other)))
            b = draw(st.integers(a, min(len(other), a + 4096)))
            at = draw(st.integers(0, len(data)))
            if draw(st.booleans()):
                data[at:at + b - a] = other[a:b]
            else:
                data[at:] = other[a:]
        elif op == "overwrite" and len(data) >= 4:  # a boundary value anywhere, 4-aligned or not
            at = draw(st.integers(0, len(data) - 2))
            kind = draw(st.sampled_from(["u16", "u32"]))
            if at + WIDTH[kind] <= len(data):
                data[at:at + WIDTH[kind]] = draw(field_value(kind, sizes, bytes(data[at:at + WIDTH[kind]])))
        elif op == "copy" and len(data) > 8:  # a run of the file over another place in it
            a = draw(st.integers(0, len(data) - 1))
            n = draw(st.sampled_from([4, 8, 20, 32, 128]))
            at = draw(st.integers(0, len(data) - 1))
            data[at:at + n] = data[a:a + n]
    extension = draw(st.sampled_from(own_extensions * 6 + [".oban", ".OBAN", ".oni", ".dat", ".xml", ".bin", ""]))
    return bytes(data), extension


# ---- XML mutations ---------------------------------------------------------------------------

START_TAG = re.compile(r"<([A-Za-z_][\w.-]*)\b[^<>]*?(/?)>")
NUMBER_TOKEN = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
ELEMENT_NAMES = list(onisplit_xml.FIELDS + onisplit_xml.KEY_FIELDS) + [
    "Oni", "OBAN", "OBANKeyFrame", "KeyFrames", "TXMP", "Instance", "oban", "Flag", "a"]
BAD_NUMBERS = ["1e39", "-1e39", "1e400", "nan", "NaN", "-nan", "inf", "-Infinity", "infinity", "0", "-0", "-1",
               "+1", "4294967295", "4294967296", "65535", "65536", "18446744073709551616", "1" * 400,
               "0" * 70_000 + "1", "0" * 20_000 + "x", "9" * 5000, "0x10", "1_000", "1,5", "\u0661\u0662",
               "\uff11", "", " ", "\u00a0", "1e", ".", "+", "--1", "3.4028236e38", "1e-46", "&#49;", "&amp;",
               "&#0;", "<![CDATA[1]]>", "1 2", "1\n2", "1e99999999999", "0." + "0" * 5000 + "1"]
INJECTIONS = [
    '<!DOCTYPE Oni [<!ENTITY a "b">]>', '<!DOCTYPE Oni SYSTEM "http://127.0.0.1:9/x.dtd">', "<!DOCTYPE Oni>",
    '<!DOCTYPE Oni [<!ENTITY a "&b;&b;"><!ENTITY b "&c;&c;"><!ENTITY c "xx">]>',
    '<!DOCTYPE Oni [<!ENTITY x SYSTEM "file:///etc/passwd">]>', '<!DOCTYPE Oni [<!ENTITY % p "x"> %p;]>',
    "&a;", "&x;", "&lt;", "&#0;", "&#x110000;", "&#65;", "<![CDATA[1 2 3]]>", "<!-- c -->", "<?pi x?>",
    '<?xml version="1.0"?>', "<a>" * 40 + "</a>" * 40, "<a>" * 31 + "</a>" * 31, "<a/>", "</a>", "<", ">", "&",
    "]]>", "\0", "\x01", "\ufeff", "\ud800", "\uffff", "9" * 70_000, " " * 70_000,
    "<OBANKeyFrame><Rotation>0 0 0 1</Rotation><Translation>0 0 0</Translation><Time>1</Time></OBANKeyFrame>",
    '<OBAN id="0"/>', '<OBAN id="x"><Flags/></OBAN>', '<Instance type="OBAN" id="3"/>',
]
ATTRIBUTES = [' id="0"', ' id="1"', ' type="OBAN"', ' type="TXMP"', ' xmlns="urn:x"', ' xmlns:a="b"', ' a:b="c"',
              ' id="' + "x" * 5000 + '"', " id='&a;'", ' id="&lt;"', " id"]
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "ascii", "cp1252",
             "koi8-r", "shift_jis", "klingon", "rot13", "hex", "undefined", "idna", "punycode", "utf-7",
             "unicode_escape", "mbcs", "cp037", ""]
XML_OPS = ["drop", "duplicate", "move", "rename", "rename_one", "drop_tag", "number", "number", "number", "text",
           "inject", "attribute", "flip", "truncate", "insert"]


def _elements(text):
    """(start, end) of every element of `text` that has a matching end tag (or none needed)."""
    spans = []
    for m in START_TAG.finditer(text):
        if m.group(2):
            spans.append((m.start(), m.end(), m.group(1)))
            continue
        close = text.find(f"</{m.group(1)}>", m.end())
        if close >= 0:
            spans.append((m.start(), close + len(m.group(1)) + 3, m.group(1)))
    return spans


@st.composite
def mutated_xml(draw, seeds=None):
    text = draw(st.sampled_from(seeds or SEEDS["xml"]))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(XML_OPS))
        spans = _elements(text)
        if op in ("drop", "duplicate", "move", "rename", "rename_one", "drop_tag") and spans:
            start, end, name = draw(st.sampled_from(spans))
            element = text[start:end]
            if op == "drop":
                text = text[:start] + text[end:]
            elif op == "duplicate":
                text = text[:end] + element + text[end:]
            elif op == "move":
                rest = text[:start] + text[end:]
                at = draw(st.sampled_from([s for s, _, _ in _elements(rest)] or [0]))
                text = rest[:at] + element + rest[at:]
            else:
                new = draw(st.sampled_from(ELEMENT_NAMES) | st.from_regex(r"[A-Za-z_][\w.-]{0,8}", fullmatch=True))
                if op == "rename":
                    element = re.sub(rf"^<{name}\b", f"<{new}", element)
                    element = re.sub(rf"</{name}>$", f"</{new}>", element)
                elif op == "rename_one":
                    element = (re.sub(rf"^<{name}\b", f"<{new}", element) if draw(st.booleans())
                               else re.sub(rf"</{name}>$", f"</{new}>", element))
                else:  # drop_tag: the start or the end tag alone
                    tag_end = element.index(">") + 1
                    element = element[tag_end:] if draw(st.booleans()) else element[:-(len(name) + 3)]
                text = text[:start] + element + text[end:]
        elif op == "number":
            numbers = list(NUMBER_TOKEN.finditer(text))
            if numbers:
                m = draw(st.sampled_from(numbers))
                new = draw(st.sampled_from(BAD_NUMBERS) | st.text(max_size=12))
                text = text[:m.start()] + new + text[m.end():]
        elif op == "text":  # the whole content of one leaf element
            leaves = [(text.index(">", s) + 1, e - len(n) - 3) for s, e, n in spans if text[e - 2:e] != "/>"]
            leaves = [(a, b) for a, b in leaves if "<" not in text[a:b]]
            if leaves:
                inner, close = draw(st.sampled_from(leaves))
                new = draw(st.sampled_from(BAD_NUMBERS + ["None", "NormalLoop  ZAxisUp", "Loop", "ZAxisUp"])
                           | st.text(max_size=30))
                text = text[:inner] + new + text[close:]
        elif op == "inject":
            where = draw(st.sampled_from(["start", "after_declaration", "anywhere"]))
            at = {"start": 0, "after_declaration": text.find("?>") + 2 if "?>" in text else 0}.get(where)
            if at is None:
                at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(INJECTIONS)) + text[at:]
        elif op == "attribute" and spans:
            start, _, name = draw(st.sampled_from(spans))
            at = start + 1 + len(name)
            text = text[:at] + draw(st.sampled_from(ATTRIBUTES)) + text[at:]
        elif op == "flip" and text:
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + chr(ord(text[at]) ^ draw(st.integers(1, 127))) + text[at + 1:]
        elif op == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        elif op == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.text(min_size=1, max_size=20)) + text[at:]
    data = _encode(text, draw(st.sampled_from(["utf-8"] * 12 + ENCODINGS)))
    extension = draw(st.sampled_from([".xml"] * 8 + [".XML", ".oban", ".txt", ".oni"]))
    return data, extension


def _encode(text, encoding):
    """`text` in `encoding`, its declaration saying so; unencodable characters escaped."""
    declared = re.sub(r'encoding="[^"]*"', f'encoding="{encoding}"', text, count=1)
    try:
        codecs.lookup(encoding)
        data = declared.encode(encoding, errors="xmlcharrefreplace")
        return data if isinstance(data, bytes) else declared.encode("utf-8", "surrogatepass")
    except (LookupError, UnicodeError, TypeError):
        return declared.encode("utf-8", errors="surrogatepass")


# ---- the runs ------------------------------------------------------------------------------

NAMES = {"raw": "00010-fuzz", "oni": "OBANfuzz", "dat": "level1_Final", "xml": "OBANfuzz"}
GLOBS = [None] * 6 + ["*", "*door*", "fuzz", "*_1", "[", "*a*b*c*d*e*f*g*h*", "?"]
# pyexpat decodes a table of all 256 bytes with a declared unknown encoding; unicode_escape
# warns about the invalid escape in it before the encoding is refused as multi-byte
CODEC_WARNINGS = "ignore:invalid escape sequence:DeprecationWarning"
SHORT_RUN = 6000   # examples a binary reader's run tries in the suite (tools/fuzz.py runs on for as long as asked)
FUZZ_SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much, HealthCheck.large_base_example])


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="oban-fuzz-") as path:
        yield path


@pytest.fixture(scope="module")
def no_network():
    """An XML reader that fetched anything (an external entity or DTD) would fail the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("network access")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "getaddrinfo", refuse)
        yield


def replay(folder, reader, data, extension, name_glob=None):
    path = os.path.join(folder, NAMES[reader] + extension)
    with open(path, "wb") as f:
        f.write(data)
    return read_within_limits(path, name_glob)


@settings(max_examples=SHORT_RUN, **FUZZ_SETTINGS)
@given(case=mutated_binary(SEEDS["raw"], [".oban", ".OBAN"]), name_glob=st.sampled_from(GLOBS))
def test_raw_reader_fuzz(folder, case, name_glob):
    replay(folder, "raw", *case, name_glob)


@settings(max_examples=SHORT_RUN, **FUZZ_SETTINGS)
@given(case=mutated_binary(SEEDS["oni"], [".oni"]), name_glob=st.sampled_from(GLOBS))
def test_oni_reader_fuzz(folder, case, name_glob):
    replay(folder, "oni", *case, name_glob)


@settings(max_examples=SHORT_RUN, **FUZZ_SETTINGS)
@given(case=mutated_binary(SEEDS["dat"], [".dat"]), name_glob=st.sampled_from(GLOBS))
def test_dat_reader_fuzz(folder, case, name_glob):
    replay(folder, "dat", *case, name_glob)


@pytest.mark.filterwarnings(CODEC_WARNINGS)
@settings(max_examples=SHORT_RUN * 11 // 20, **FUZZ_SETTINGS)
@given(case=mutated_xml(), name_glob=st.sampled_from(GLOBS))
def test_xml_reader_fuzz(folder, no_network, case, name_glob):
    replay(folder, "xml", *case, name_glob)


@settings(max_examples=300, **FUZZ_SETTINGS)
@given(data=st.binary(max_size=600), reader=st.sampled_from(sorted(NAMES)),
       extension=st.sampled_from([".oban", ".oni", ".dat", ".xml", ""]))
def test_random_bytes_in_any_container(folder, data, reader, extension):
    replay(folder, reader, data, extension)


@settings(max_examples=300, **FUZZ_SETTINGS)
@given(text=st.text(alphabet=st.sampled_from(list("<>/=\"' \n&;!?[]-OBANniKeyFrame0123456789.")), max_size=300))
def test_random_markup(folder, no_network, text):
    replay(folder, "xml", text.encode("utf-8"), ".xml")


def test_the_seeds_read_cleanly(folder):
    """The mutations start from valid files (the empty level holds no OBAN)."""
    for reader, extension in (("raw", ".oban"), ("oni", ".oni"), ("dat", ".dat")):
        for data in SEEDS[reader]:
            assert isinstance(replay(folder, reader, data, extension), list)
    for text in SEEDS["xml"]:
        assert replay(folder, "xml", text.encode("utf-8"), ".xml")


@pytest.mark.filterwarnings(CODEC_WARNINGS)
def test_every_encoding_a_declaration_can_name(folder, no_network):
    """pyexpat asks Python's codecs for any encoding it does not know itself."""
    names = sorted(set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values()) | set(ENCODINGS))
    for name in names:
        text = SEEDS["xml"][-1].replace('encoding="utf-8"', f'encoding="{name}"', 1)
        replay(folder, "xml", text.encode("utf-8"), ".xml")


def test_legitimate_worst_cases_fit_the_limits(folder):
    """The largest memory ratios a valid file can reach (see the module docstring)."""
    one_key = record_bytes(_generated(0, frames=1, key_count=1))
    many = container_bytes([(OBAN_TAG, f"o{i}", one_key, 0) for i in range(6000)])
    assert len(replay(folder, "dat", many, ".dat")) == 6000
    shortest = _generated(1, frames=0xFFFF, key_count=20000)
    shortest.keys["rotation"], shortest.keys["position"] = (0, 0, 0, 1), 0
    text = re.sub(r">\s+<", "><", xml_text([shortest]))
    assert len(replay(folder, "xml", text.encode("ascii"), ".xml")[0].keys) == 20000


@pytest.mark.parametrize("field", onisplit_xml.FIELDS[:-1] + onisplit_xml.KEY_FIELDS)
@pytest.mark.parametrize("text", ["0" * 65_000 + "x", "0" * 65_000 + "1", "1" * 65_000 + "x", " " * 65_000 + "x",
                                  "-" + "0" * 65_000 + " x", "1 " * 32_000 + "x", "1." + "0" * 65_000 + "x",
                                  "1e" + "0" * 65_000 + "x"],
                         ids=["zeros_x", "zeros_1", "ones_x", "spaces_x", "signed_zeros", "pairs", "decimals",
                              "exponent"])
def test_field_text_at_the_length_cap_is_read(folder, field, text):
    """A field's text at its length cap is read or refused in bounded memory (its time, once 40 s
    for 64 KiB of a backtracking pattern: benchmarks/hostile_reads.py)."""
    spec = open(os.path.join(DATA, "xml", "OBANspec_example.xml"), encoding="utf-8").read()
    inner = re.search(rf"<{field}>(.*?)</{field}>", spec).group(1)
    replay(folder, "xml", spec.replace(f"<{field}>{inner}</{field}>", f"<{field}>{text}</{field}>", 1).encode(),
           ".xml")


# ---- inputs that are not ordinary files, or too big to be OBANs -------------------------------

def test_a_huge_file_is_not_read_whole(folder):
    """A sparse 3 GB file: a raw OBAN is at most 128 + 32 x 65535 bytes; nothing more is read."""
    for name in ("00001-huge.oban", "huge.bin", "huge.xml", "huge.dat"):
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.truncate(3 << 30)
        try:
            error, peak = measured(lambda: read_file(path))
        finally:
            os.remove(path)
        assert isinstance(error, ObanError) and str(error).startswith(f"{path}: "), error
        assert peak < 8 << 20, (name, peak, str(error))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_device_is_refused():
    with pytest.raises(ObanError, match="^/dev/zero: is not a regular file$"):
        read_file("/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(folder):
    path = os.path.join(folder, "pipe.oban")
    os.mkfifo(path)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(_error_of(path)), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # blocked in open(): give it a writer so the thread can end
        with open(path, "wb"):
            pass
        reader.join(5)
    os.remove(path)
    assert outcome == [f"{path}: is not a regular file"]


def _error_of(path):
    try:
        read_file(path)
    except ObanError as error:
        return str(error)
    return None


# ---- crashers found by fuzzing, kept ------------------------------------------------------------

REGRESSION_FILES = sorted(n for n in os.listdir(REGRESSIONS) if not n.endswith(".md"))


def test_every_regression_file_is_replayed():
    assert len(REGRESSION_FILES) == 5


@pytest.mark.parametrize("name", REGRESSION_FILES)
def test_regression_files(name):
    """Each file found by a fuzzer once crashed, hung or ate memory: now it reads or is refused."""
    path = os.path.join(REGRESSIONS, name)
    read_within_limits(path)
    read_within_limits(path, "*x*")


# ---- docs/bad_input.md: the message of every row, exactly -------------------------------------

def _door(edit=None):
    """The 'door' of tests/oni/io/test_oban_read.py: 40 frames, keys at 0 10 20 30 39, flags 0x10."""
    door = random_animation(np.random.default_rng(1), name="door", frames=40, key_count=5, flags=0x10)
    door.keys["frame"] = [0, 10, 20, 30, 39]
    if edit:
        edit(door)
    return door


def _set(**values):
    return lambda animation: [setattr(animation, key, value) for key, value in values.items()]


def _key_frames(*frames):
    return lambda animation: animation.keys.__setitem__("frame", frames)


def _raw(edit=None, cut=None, key_count=None, extra=b""):
    data = bytearray(raw_file_bytes(_door(edit)) + extra)
    if key_count is not None:
        struct.pack_into("<H", data, RECORD_DTYPE.fields["key_count"][1], key_count)
    return bytes(data[:cut])


def _oni(cut=None, tag=OBAN_TAG, name_table=None, **fields):
    """A VR32 .oni holding the door: header (64), descriptor (20), data table at 84 (288), names at 372."""
    data = bytearray(container_bytes([(tag, "door", record_bytes(_door()), 0)], version=b"23RV"))
    for key, value in fields.items():
        dtype, base = (DESCRIPTOR_DTYPE, 64) if key.startswith("d_") else (HEADER_DTYPE, 0)
        field = key[2:] if key.startswith("d_") else key
        kind, offset = dtype.fields[field][0], base + dtype.fields[field][1]
        data[offset:offset + kind.itemsize] = np.array(value, kind).tobytes()
    if name_table is not None:
        data[372:] = name_table
    return bytes(data[:cut])


def _level(cut=None, overlap=False):
    data = bytearray(open(os.path.join(DATA, "level", "level1_Final.dat"), "rb").read())
    if overlap:  # instance 2 starts inside instance 1
        struct.pack_into("<I", data, 64 + 2 * DESCRIPTOR_DTYPE.itemsize + 4, 44 + 64)
    return bytes(data[:cut])


SPEC_XML = open(os.path.join(DATA, "xml", "OBANspec_example.xml"), encoding="utf-8").read()


def _xml(old="", new="", text=None):
    return (text if text is not None else SPEC_XML.replace(old, new, 1)).encode("utf-8")


BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE Oni [\n <!ENTITY lol0 "lol">\n'
                  + "".join(f' <!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">\n' for i in range(1, 10))
                  + "]>\n<Oni>&lol9;</Oni>")

# id: (file name, contents, what the user sees after "PATH: ", or ("warning", text), or [] for nothing)
TABLE = {
    "empty_raw": ("00010-door.OBAN", b"", "empty file"),
    "empty_oni": ("OBANdoor.oni", b"", "empty file"),
    "empty_dat": ("level1_Final.dat", b"", "empty file"),
    "empty_xml": ("OBANdoor.xml", b"", "empty file"),
    "truncated_header_raw": ("00010-door.OBAN", _raw(cut=100),
                             "'door': truncated at byte 100: an OBAN record needs 128 bytes before its keys"),
    "truncated_header_oni": ("OBANdoor.oni", _oni(cut=40), "truncated at byte 40: an Oni file header needs 64 bytes"),
    "truncated_keys": ("00010-door.OBAN", _raw(cut=-40),
                       "'door': key count says 5 but only 3 fit (truncated at byte 248)"),
    "truncated_level": ("level1_Final.dat", _level(cut=5000),
                        "data table at byte 288 (12804 bytes) lies outside the file (5000 bytes)"),
    "key_count_beyond_the_file": ("00010-door.OBAN", _raw(key_count=0xFFFF),
                                  "'door': key count says 65535 but only 5 fit (truncated at byte 288)"),
    "record_shorter_than_its_keys": ("OBANdoor.oni", _oni(d_data_size=200),
                                     "'door': key count says 5 but only 2 fit (truncated at byte 284)"),
    "instance_count_beyond_the_file": ("OBANdoor.oni", _oni(instance_count=0xFFFFFFFF),
                                       "4294967295 instance descriptors at byte 64 (85899345900 bytes) "
                                       "lies outside the file (381 bytes)"),
    "unsorted_key_frames": ("00010-door.OBAN", _raw(_key_frames(0, 10, 5, 20, 39)),
                            "'door': key frames not increasing at key 2 (frame 5 after 10)"),
    "duplicate_key_frames": ("00010-door.OBAN", _raw(_key_frames(0, 10, 10, 20, 39)),
                             "'door': key frames not increasing at key 2 (frame 10 after 10)"),
    "first_key_after_0": ("00010-door.OBAN", _raw(_key_frames(3, 10, 20, 30, 39)),
                          ("warning", "first key is at frame 3, not 0: frames before it hold it")),
    "last_key_before_the_end": ("00010-door.OBAN", _raw(_key_frames(0, 10, 20, 30, 35)),
                                ("warning", "last key is at frame 35, not 39 (frame count - 1)")),
    "frame_count_0": ("00010-door.OBAN", _raw(_set(frames=0)), "'door': frame count is 0"),
    "no_keys": ("00010-door.OBAN", _raw(lambda a: setattr(a, "keys", a.keys[:0])), "'door': no keys"),
    "nan_in_a_key": ("00010-door.OBAN", _raw(lambda a: a.keys["rotation"].__setitem__((3, 0), np.nan)), "'door': non-finite value in key 3"),
    "inf_in_a_matrix": ("00010-door.OBAN", _raw(lambda a: a.base_matrix.__setitem__(4, np.inf)),
                        "'door': non-finite value in the base matrix"),
    "xml_number_beyond_float32": ("OBANdoor.xml", _xml("<Translation>10 25 30", "<Translation>10 1e39 30"),
                                  "'door': non-finite value in key 1"),
    "xml_nan": ("OBANdoor.xml", _xml("<Rotation>0 0 0 1", "<Rotation>nan 0 0 1"),
                "'door': non-finite value in key 0"),
    "zero_quaternion": ("00010-door.OBAN", _raw(lambda a: a.keys["rotation"].__setitem__(2, 0)),
                        "'door': key 2 has a zero quaternion"),
    "unknown_flag_bits": ("00010-door.OBAN", _raw(_set(flags=0x80000010)),
                          ("warning", "unknown flag bits 0x80000000 kept")),
    "bytes_after_the_last_key": ("00010-door.OBAN", _raw(extra=bytes(7)),
                                 ("warning", "7 bytes after the last key ignored")),
    "not_an_oni_file": ("OBANdoor.oni", _oni(checksum=12345),
                        "not an Oni file (template checksum 0x0000000000003039)"),
    "bad_signature": ("OBANdoor.oni", _oni(signature=0), "bad header signature 0x0000000000000000"),
    "wrong_version": ("OBANdoor.oni", _oni(version=b"33RV"), "unknown version b'VR33' (VR31 and VR32 are known)"),
    "wrong_instance_tag": ("OBANdoor.oni", _oni(tag=b"CSBS"), []),
    "descriptor_outside_the_data_table": ("OBANdoor.oni", _oni(d_data_offset=4096),
                                          "descriptor 0 points outside the data table "
                                          "(offset 4096, size 288, table 288 bytes)"),
    "data_table_outside_the_file": ("OBANdoor.oni", _oni(data_size=1 << 30),
                                    "data table at byte 84 (1073741824 bytes) lies outside the file (381 bytes)"),
    "name_table_outside_the_file": ("OBANdoor.oni", _oni(name_offset=0xFFFFFFFF),
                                    "name table at byte 4294967295 (9 bytes) lies outside the file (381 bytes)"),
    "overlapping_descriptors": ("level1_Final.dat", _level(overlap=True),
                                "descriptors 1 and 2 overlap in the data table"),
    "name_offset_outside_the_name_table": ("OBANdoor.oni", _oni(d_name_offset=999),
                                           "descriptor 0: name offset 999 is outside the name table"),
    "unterminated_name": ("OBANdoor.oni", _oni(name_table=b"OBANdoor!"),
                          "descriptor 0: name at offset 0 is unterminated or longer than 255 bytes"),
    "xml_truncated": ("OBANdoor.xml", _xml(text=SPEC_XML[:SPEC_XML.index("</KeyFrames>")]),
                      "no element found at line 21, column 5"),
    "xml_mismatched_tag": ("OBANdoor.xml", _xml("0 0 0 1</Rotation>", "0 0 0 1</Rotatio>"),
                           "mismatched tag at line 12, column 28"),
    "xml_tag_dropped": ("OBANdoor.xml", _xml("    <FrameCount>4</FrameCount>\n", ""),
                        "line 8: missing <FrameCount> before <HalfStopFrame>"),
    "xml_tag_duplicated": ("OBANdoor.xml", _xml("<Flags>NormalLoop</Flags>", "<Flags>NormalLoop</Flags><Flags/>"),
                           "line 4: <Flags> given twice in <OBAN>"),
    "xml_tag_renamed": ("OBANdoor.xml", _xml("<Flags>NormalLoop</Flags>", "<Flag>NormalLoop</Flag>"),
                        "line 4: unexpected <Flag> in <OBAN>"),
    "xml_not_a_number": ("OBANdoor.xml", _xml("<Translation>10 20 30", "<Translation>10 abc 30"),
                         "line 13: 'abc' is not a number"),
    "xml_wrong_count": ("OBANdoor.xml", _xml("<Rotation>0 0 0 1<", "<Rotation>0 0 1<"),
                        "line 12: <Rotation> needs 4 numbers, found 3"),
    "xml_out_of_range": ("OBANdoor.xml", _xml("<FrameCount>4<", "<FrameCount>65536<"),
                         "line 8: <FrameCount> '65536' is out of range (0 to 65535)"),
    "xml_unknown_flag": ("OBANdoor.xml", _xml("NormalLoop", "Loop"),
                         "line 4: unknown flag 'Loop' (known: NormalLoop BackToBackLoop RandomStartFrame Autostart "
                         "ZAxisUp or a number, separated by single spaces)"),
    "xml_other_root": ("OBANdoor.xml", _xml(text="<Foo/>"), "not an OniSplit XML file: root element is <Foo>"),
    "xml_no_oban": ("OBANdoor.xml", _xml(text="<Oni><TXMP id='0'/></Oni>"), "no <OBAN> element"),
    "xml_binary_garbage": ("OBANdoor.xml", b"\x00\x01\x02garbage", "not well-formed (invalid token) at line 1, column 1"),
    "xml_unknown_encoding": ("OBANdoor.xml", _xml('encoding="utf-8"', 'encoding="klingon"'),
                             "unsupported encoding: unknown encoding: klingon"),
    "xml_entity_expansion": ("OBANdoor.xml", BILLION_LAUGHS.encode(), "line 2: DOCTYPE and entities are not allowed"),
    "xml_external_entity": ("OBANdoor.xml",
                            b'<!DOCTYPE Oni [<!ENTITY x SYSTEM "file:///etc/passwd">]><Oni>&x;</Oni>',
                            "line 1: DOCTYPE and entities are not allowed"),
    "xml_undefined_entity": ("OBANdoor.xml", b"<Oni>&x;</Oni>", "undefined entity at line 1, column 6"),
    "xml_deep_nesting": ("OBANdoor.xml", b"<Oni>" + b"<a>" * 100_000 + b"</a>" * 100_000 + b"</Oni>",
                         "line 1: elements nested deeper than 32"),
    "xml_huge_text": ("OBANdoor.xml", _xml("<FrameCount>4", "<FrameCount>" + "9" * 10_000_000),
                      "line 8: text of <FrameCount> longer than 65536 characters"),
    "xml_huge_markup": ("OBANdoor.xml", b"<Oni><!--" + b"x" * 3_000_000 + b"--></Oni>",
                        "line 1: a tag, comment or declaration longer than 1 MiB"),
    "xml_too_many_elements": ("OBANdoor.xml", b"<Oni>" + b"<a/>" * 300_000 + b"</Oni>",
                              "line 1: more than 266236 elements"),
    "xml_long_element_name": ("OBANdoor.xml", _xml("<Flags>NormalLoop</Flags>", "<" + "F" * 5000 + "/>"),
                              "line 4: element name 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF...' "
                              "longer than 128 characters"),
    "xml_long_id": ("OBANdoor.xml", _xml('id="0"', 'id="' + "9" * 5000 + '"'),
                    "line 3: id '9999999999999999999999999999999999999999...' longer than 128 characters"),
    "xml_long_encoding_name": ("OBANdoor.xml", _xml('encoding="utf-8"', 'encoding="' + "k" * 5000 + '"'),
                               "unsupported encoding: unknown encoding: " + "k" * 82 + "..."),
    "xml_leading_zeros": ("OBANdoor.xml", _xml("<Flags>NormalLoop", "<Flags>" + "0" * 20_000 + "x"),
                          "line 4: <Flags> '0000000000000000000000000000000000000000...' is not a whole number"),
}


@pytest.mark.parametrize("case", sorted(TABLE))
def test_bad_input_table(tmp_path, case):
    """Each pure-reader row of docs/bad_input.md: the very message, in bounded memory."""
    name, data, expected = TABLE[case]
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(data)
    outcome = read_within_limits(path)
    if isinstance(expected, str):
        assert isinstance(outcome, ObanError), outcome
        assert str(outcome) == f"{path}: {expected}"
    elif expected == []:
        assert outcome == []
    else:
        assert len(outcome) == 1 and outcome[0].warnings == [expected[1]], outcome


@pytest.mark.parametrize("size, name, expected", [
    ((256 << 20) + 1, "OBANbig.xml", "268435457 bytes: XML files over 256 MiB are refused"),
    (3 << 30, "00001-huge.oban", "'huge': frame count is 0"),
])
def test_bad_input_table_huge_files(tmp_path, size, name, expected):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.truncate(size)  # sparse: no disk used
    assert str(read_within_limits(path)) == f"{path}: {expected}"


def test_bad_input_table_paths(tmp_path, monkeypatch):
    missing = tmp_path / "missing.oban"
    assert _error_of(str(missing)) == f"{missing}: cannot be read: No such file or directory"
    assert _error_of(str(tmp_path)) == f"{tmp_path}: is a directory, not a file"
    assert _error_of("/dev/zero") == "/dev/zero: is not a regular file"
    assert _error_of("a\0b.oban") == "a\0b.oban: cannot be read: embedded null byte"


def test_the_long_run_tool_runs_these_strategies(tmp_path):
    """tools/fuzz.py (the long run) imports this module's seeds and strategies: one second of it."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    done = subprocess.run([sys.executable, os.path.join(root, "tools", "fuzz.py"), "--reader", "raw", "--seconds", "1",
                           "--engine", "hypothesis", "--work", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0 and "0 failure(s)" in done.stdout, done.stdout + done.stderr
