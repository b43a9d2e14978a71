"""Hardened expat for OniSplit's XML files: what the OBAN reader (onisplit_xml.py, docs/formats.md,
containers 4) and the TRAM reader (oni/io/trams/xml_read.py, docs/characters.md 9) share.

A DOCTYPE is refused as soon as it starts, so no entity is ever declared, expanded or fetched;
nesting depth, element count, the text of one field and the size of one piece of markup are
capped; the file size is checked first and the file fed in chunks, so time and memory stay
bounded. Numbers are read as OniSplit's XmlConvert reads them (.NET 4): text -> nearest double
(-> nearest float32 where the field is one), whole numbers with optional blanks and sign.
"""

import re
from xml.parsers import expat

import numpy as np

from ....core.errors import ObanError

MAX_FILE_SIZE = 256 << 20
MAX_DEPTH = 32
MAX_TEXT = 64 << 10                  # characters in one field
MAX_MARKUP = 1 << 20                 # bytes expat may hold unparsed: one tag, comment or declaration
MAX_NAME = 128                       # characters in an element name or an id, which messages quote
CHUNK = 64 << 10
# what float() accepts, less its underscores and non-ASCII digits; no nested repeats (linear time)
NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))")
WHOLE_NUMBER = re.compile(r"\s*([+-]?)([0-9]+)\s*")  # no "0*" before the digits: quadratic backtracking


def quote(text, limit=40):
    return repr(short(text, limit))


def short(text, limit):
    return text if len(text) <= limit else text[:limit] + "..."


def check_size(path, size):
    """Refuses an empty file, or one over MAX_FILE_SIZE, before anything is read."""
    if size == 0:
        raise ObanError(path, "empty file")
    if size > MAX_FILE_SIZE:
        raise ObanError(path, f"{size} bytes: XML files over {MAX_FILE_SIZE >> 20} MiB are refused")


class GuardedXml:
    """An expat parse with the limits above. A subclass sets `max_elements` and handles
    start(name, attributes, level) and end(name, level) (level: the number of open ancestors);
    start_text() collects an element's text up to its end (take_text()); setting `skip_level`
    to a level skips that element with all it holds. Errors are ObanError naming the file and
    the line."""

    max_elements = 0

    def __init__(self, path):
        self.path = path
        self.parser = expat.ParserCreate()
        self.parser.StartDoctypeDeclHandler = self.refuse_doctype
        self.parser.StartElementHandler = self._start
        self.parser.EndElementHandler = self._end
        self.parser.CharacterDataHandler = self._characters
        self.stack = []            # names of the open elements
        self.skip_level = None
        self.elements = 0
        self.text = None           # pieces of the open field's text
        self.text_length = 0
        self.text_line = 0

    def parse(self, f):
        fed = 0
        try:
            while chunk := f.read(CHUNK):
                self.parser.Parse(chunk, False)
                fed += len(chunk)
                if fed - self.parser.CurrentByteIndex > MAX_MARKUP:
                    self.fail(f"a tag, comment or declaration longer than {MAX_MARKUP >> 20} MiB")
            self.parser.Parse(b"", True)
        except expat.ExpatError as error:
            raise ObanError(self.path, f"{expat.ErrorString(error.code)} at line {error.lineno}, "
                                       f"column {error.offset + 1}") from None
        except (LookupError, ValueError) as error:  # pyexpat's handler for a declared encoding
            raise ObanError(self.path, f"unsupported encoding: {short(str(error), 100)}") from None

    def fail(self, problem, line=None):
        raise ObanError(self.path, f"line {line or self.parser.CurrentLineNumber}: {problem}")

    def refuse_doctype(self, *_):
        self.fail("DOCTYPE and entities are not allowed")

    def _start(self, name, attributes):
        level = len(self.stack)
        self.stack.append(name)
        self.elements += 1
        if self.elements > self.max_elements:
            self.fail(f"more than {self.max_elements} elements")
        if level >= MAX_DEPTH:
            self.fail(f"elements nested deeper than {MAX_DEPTH}")
        if len(name) > MAX_NAME:
            self.fail(f"element name {quote(name)} longer than {MAX_NAME} characters")
        if self.skip_level is not None:
            return
        if self.text is not None:
            self.fail(f"unexpected <{name}> inside <{self.stack[-2]}>")
        self.start(name, attributes, level)

    def _end(self, name):
        self.stack.pop()
        level = len(self.stack)
        if self.skip_level is not None:
            if level == self.skip_level:
                self.skip_level = None
            return
        self.end(name, level)

    def start(self, name, attributes, level):
        raise NotImplementedError

    def end(self, name, level):
        raise NotImplementedError

    # ---- text -------------------------------------------------------------------------

    def start_text(self):
        self.text, self.text_length, self.text_line = [], 0, self.parser.CurrentLineNumber

    def take_text(self):
        """The open field's text; the field is closed."""
        text, self.text = "".join(self.text), None
        return text

    def _characters(self, data):
        if self.text is not None:
            self.text.append(data)
            self.text_length += len(data)
            if self.text_length > MAX_TEXT:
                self.fail(f"text of <{self.stack[-1]}> longer than {MAX_TEXT} characters", self.text_line)
        elif self.skip_level is None and not data.isspace():
            self.fail(f"unexpected text {quote(data.strip())} in <{self.stack[-1]}>")

    def numbers(self, name, text, count):
        """`count` numbers (doubles) separated by blanks."""
        tokens = text.split()
        if len(tokens) != count:
            self.fail(f"<{name}> needs {count} numbers, found {len(tokens)}", self.text_line)
        if text.isascii() and "_" not in text:
            try:
                return list(map(float, tokens))
            except ValueError:
                pass
        for token in tokens:
            if not NUMBER.fullmatch(token):
                self.fail(f"{quote(token)} is not a number", self.text_line)
        return list(map(float, tokens))

    def whole(self, name, text, high, low=0):
        """A whole number from `low` to `high` (blanks around it and a sign allowed)."""
        match = WHOLE_NUMBER.fullmatch(text)
        if not match:
            self.fail(f"<{name}> {quote(text.strip())} is not a whole number", self.text_line)
        sign, digits = match.groups()
        digits = digits.lstrip("0") or "0"
        value = int(sign + digits) if len(digits) <= len(str(max(high, -low))) else None
        if value is None or not low <= value <= high:
            self.fail(f"<{name}> {quote(text.strip())} is out of range ({low} to {high})", self.text_line)
        return value


def float_texts(values):
    """float32 values -> texts that read back (text -> double -> float32) to the same bits."""
    values = np.asarray(values, np.float32)
    texts = [_shortest(v) for v in values]
    back = np.array([float(text) for text in texts]).astype(np.float32)
    for i in np.flatnonzero(back.view(np.uint32) != values.view(np.uint32)):
        texts[i] = repr(float(values[i]))
    return texts


def _shortest(value):
    """The shortest text of a float32, positional from 1e-4 to 1e16 ('30000000.0'), else
    scientific ('1e-05'): what numpy 1's str() gives, whatever numpy this is."""
    if value == 0 or 1e-4 <= abs(value) < 1e16 or not np.isfinite(value):
        return np.format_float_positional(value, unique=True, trim="0")
    return np.format_float_scientific(value, unique=True, trim="-")
