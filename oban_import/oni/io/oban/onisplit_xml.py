"""OniSplit XML (docs/formats.md, containers 4): OBAN instances as `onisplit -extract:xml` writes them.

Parsed with expat directly and hardened against hostile files (xml_guard.py): a DOCTYPE is
refused as soon as it starts, so no entity is ever declared, expanded or fetched; nesting
depth, element count, the text of one field and the size of one piece of markup are capped;
the file size is checked first and the file fed in chunks, so time and memory stay bounded.
Every field is converted when it ends (memory grows with the keys, not with the text) and the
key array is built once per instance.

Numbers become float32 as OniSplit's XmlConvert.ToSingle makes them (.NET 4):
text -> nearest double -> nearest float32, so an .oni file made from the same XML
holds the same bits.
"""

import numpy as np

from ....core.errors import ObanError
from ..container.xml_guard import MAX_FILE_SIZE, MAX_NAME, GuardedXml, check_size, quote  # noqa: F401 (the size cap, kept here)
from .record import FLAGS, KEY_DTYPE, MAX_COUNT, Animation, onisplit_name

MAX_KEYS = MAX_COUNT
MAX_ELEMENTS = 4 * MAX_KEYS + 4096   # an OBAN with the most keys (4 elements each), and to spare

XML_FLAGS = {flag.xml: flag.bit for flag in FLAGS}
FIELDS = ("Flags", "InitialTransform", "BaseTransform", "FrameLength", "FrameCount", "HalfStopFrame",
          "KeyFrames")
KEY_FIELDS = ("Rotation", "Translation", "Time")
LIMITS = {"Flags": 0xFFFFFFFF, "FrameLength": MAX_COUNT, "FrameCount": MAX_COUNT, "HalfStopFrame": MAX_COUNT,
          "Time": 0xFFFFFFFF}


XML_STARTS = (b"<?", b"<!", b"<Oni")   # a declaration or instruction, a comment or DOCTYPE, OniSplit's root


def looks_like_xml(head: bytes) -> bool:
    """Whether a file's first bytes begin XML (after a UTF-8 byte-order mark and blanks).
    Not a lone '<': a raw record begins with one where its instance id's low byte is 0x3C."""
    return head[:1024].removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(XML_STARTS)


def read_xml(f, path: str, size: int, name_filter=None) -> list[Animation]:
    """Every OBAN instance of an OniSplit XML file open as `f` (`size` bytes), in file order, unchecked.

    The first is named after the file (without extension and 'OBAN' prefix), the
    others '<that name>_<id>'. `name_filter(name) -> bool` skips instances unread.
    """
    check_size(path, size)
    return _OniXml(path, name_filter).read(f)


class _OniXml(GuardedXml):
    max_elements = MAX_ELEMENTS

    def __init__(self, path, name_filter):
        super().__init__(path)
        self.stem = onisplit_name(path)
        self.name_filter = name_filter
        self.ids = set()
        self.animations = []

    def read(self, f):
        self.parse(f)
        if not self.ids:
            raise ObanError(self.path, "no <OBAN> element")
        return self.animations

    # ---- structure: Oni > OBAN > fields, KeyFrames > OBANKeyFrame > key fields ----------

    def start(self, name, attributes, level):
        if level == 4:
            self.expect(name, KEY_FIELDS, self.key_field_count)
            self.key_field_count += 1
            self.start_text()
        elif level == 3:
            if name != "OBANKeyFrame":
                self.fail(f"unexpected <{name}> in <KeyFrames>")
            if len(self.times) == MAX_KEYS:
                self.fail(f"more than {MAX_KEYS} key frames")
            self.key_field_count = 0
        elif level == 2:
            self.expect(name, FIELDS, len(self.fields))
            self.fields[name] = None
            if name != "KeyFrames":
                self.start_text()
        elif level == 1:
            self.start_instance(name, attributes, level)
        elif name != "Oni":
            raise ObanError(self.path, f"not an OniSplit XML file: root element is <{name}>")

    def start_instance(self, name, attributes, level):
        if attributes.get("type", name) != "OBAN":
            self.skip_level = level
            return
        if "id" not in attributes:
            self.fail(f"<{name}> has no id attribute")
        xml_id = attributes["id"]
        if len(xml_id) > MAX_NAME:
            self.fail(f"id {quote(xml_id)} longer than {MAX_NAME} characters")
        if xml_id in self.ids:
            self.fail(f"id {quote(xml_id)} is used twice")
        self.name = f"{self.stem}_{xml_id}" if self.ids else self.stem
        self.ids.add(xml_id)
        if self.name_filter and not self.name_filter(self.name):
            self.skip_level = level
            return
        self.instance = name
        self.fields = {}
        self.rotations, self.positions, self.times = [], [], []

    def expect(self, name, order, count):
        """Fail unless `name` is order[count], the child expected next."""
        if count < len(order) and name == order[count]:
            return
        if name not in order:
            self.fail(f"unexpected <{name}> in <{self.stack[-2]}>")
        if order.index(name) < count:
            self.fail(f"<{name}> given twice in <{self.stack[-2]}>")
        self.fail(f"missing <{order[count]}> before <{name}>")

    def end(self, name, level):
        if self.text is not None:
            self.end_text(name)
        elif level == 3 and self.key_field_count < len(KEY_FIELDS):
            self.fail(f"missing <{KEY_FIELDS[self.key_field_count]}> in <OBANKeyFrame>")
        elif level == 1:
            self.end_instance()

    # ---- text -------------------------------------------------------------------------

    def end_text(self, name):
        text = self.take_text()
        if name == "Rotation":
            self.rotations += self.numbers(name, text, 4)
        elif name == "Translation":
            self.positions += self.numbers(name, text, 3)
        elif name == "Time":
            self.times.append(self.unsigned(name, text))
        elif name == "Flags":
            self.fields[name] = self.flags(text)
        elif name.endswith("Transform"):
            self.fields[name] = self.numbers(name, text, 12)
        else:
            self.fields[name] = self.unsigned(name, text)

    def unsigned(self, name, text):
        return self.whole(name, text, LIMITS[name])

    def flags(self, text):
        """XML names separated by single spaces, or a number; empty or 'None' is 0."""
        text = text.strip()
        if text[:1].isdigit() or text[:1] in ("+", "-"):
            return self.unsigned("Flags", text)
        flags = 0
        for word in text.split(" ") if text else ():
            if word not in XML_FLAGS and word != "None":
                self.fail(f"unknown flag {quote(word)} (known: {' '.join(XML_FLAGS)} or a number, "
                          "separated by single spaces)", self.text_line)
            flags |= XML_FLAGS.get(word, 0)
        return flags

    # ---- the instance -------------------------------------------------------------------

    def end_instance(self):
        if len(self.fields) < len(FIELDS):
            self.fail(f"missing <{FIELDS[len(self.fields)]}> in <{self.instance}>")
        count = len(self.times)
        keys = np.empty(count, KEY_DTYPE)
        with np.errstate(over="ignore"):  # beyond float32 becomes inf, which check() refuses
            keys["rotation"] = np.reshape(self.rotations, (count, 4))
            keys["position"] = np.reshape(self.positions, (count, 3))
            start, base = (np.array(self.fields[f], np.float64).astype(np.float32)
                           for f in ("InitialTransform", "BaseTransform"))
        keys["frame"] = self.times
        animation = Animation(
            name=self.name,
            flags=self.fields["Flags"],
            start_matrix=start,
            base_matrix=base,
            ticks_per_frame=self.fields["FrameLength"],
            frames=self.fields["FrameCount"],
            door_open_frame=self.fields["HalfStopFrame"],
            keys=keys,
        )
        self.animations.append(animation)   # checked by the caller, with the file's others
