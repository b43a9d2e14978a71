"""BSL's lexer (docs/bsl.md 2): the text of a script as tokens, each with its line and
whether a new line (or the end of the file) follows it, as the engine's
BFW_ScriptLang_Token.c reads it: words, numbers (`f80` is 80), strings without escapes,
`#` comments, and the few symbols the parser knows."""

import re
from typing import NamedTuple

from ....core.errors import ObanError

# The engine's reserved words (case-sensitive); every other word is a name. "true"/"false"
# are read as boolean values.
KEYWORDS = frozenset(("at", "eq", "if", "ne", "or", "and", "for", "int", "var", "bool", "else",
                      "func", "fork", "over", "void", "every", "float", "using", "sleep",
                      "repeat", "return", "string", "iterate", "schedule"))
INT_RANGE = (-2 ** 31, 2 ** 31 - 1)   # the engine's values are 32-bit
FLOAT_MAX = 3.4028234663852886e38     # ... and its floats single precision

_TOKEN = re.compile(r"""
 (?P<newline>\r\n|\n\r?|\r)
|(?P<space>[ \t\v\f]+)
|(?P<comment>\#[^\r\n]*)
|(?P<frames>f[0-9][0-9.]*)
|(?P<word>[A-Za-z_][A-Za-z0-9_]*)
|(?P<number>(?:[0-9.]|-[0-9])[0-9.\-]*)
|(?P<string>"[^"\r\n]*")
|(?P<open_string>"[^"\r\n]*)
|(?P<symbol>==|!=|<=|>=|&&|\|\||[-+(){},;=<>!])
|(?P<bad>.)
""", re.VERBOSE | re.DOTALL)
_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")


class Token(NamedTuple):
    kind: str         # "name", "keyword", "number", "string", "bool", "symbol", "end"
    text: str         # as written ("f80", "\"hi\"")
    value: object     # the number, the string without its quotes, the bool; else the text
    line: int         # 1-based
    ends_line: bool   # a new line or the end of the file follows


def tokenize(text: str, file: str) -> list:
    """Every token of `text`, then one of kind "end"; ObanError(file, "line N: expected X,
    found Y") at the first character or number the engine would not read."""
    tokens = []
    append = tokens.append
    line = 1
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "newline":
            line += 1
            if tokens:
                tokens[-1] = tokens[-1]._replace(ends_line=True)
        elif kind in ("space", "comment"):
            pass
        elif kind == "word":
            word = match.group()
            if word in ("true", "false"):
                append(Token("bool", word, word == "true", line, False))
            else:
                append(Token("keyword" if word in KEYWORDS else "name", word, word, line, False))
        elif kind == "symbol":
            append(Token("symbol", match.group(), match.group(), line, False))
        elif kind == "string":
            append(Token("string", match.group(), match.group()[1:-1], line, False))
        elif kind in ("number", "frames"):
            append(Token("number", match.group(), _number(match.group(), kind == "frames", file, line), line, False))
        elif kind == "open_string":
            refuse(file, line, 'a closing " on the same line', f"the end of the line after {shown(match.group())}")
        else:
            refuse(file, line, "a word, number, string or symbol", f"the character {shown(match.group())}")
    if tokens:
        tokens[-1] = tokens[-1]._replace(ends_line=True)
    append(Token("end", "", None, line, True))
    return tokens


def _number(text: str, frames: bool, file: str, line: int):
    """The value of a number as written (`frames`: after its `f`)."""
    digits = text[1:] if frames else text
    if not _NUMBER.fullmatch(digits):
        refuse(file, line, "a number", shown(text))
    if "." not in digits:
        value = int(digits)
        if not INT_RANGE[0] <= value <= INT_RANGE[1]:
            refuse(file, line, f"a whole number from {INT_RANGE[0]} to {INT_RANGE[1]}", shown(text))
        return value
    value = float(digits)
    if abs(value) > FLOAT_MAX:
        refuse(file, line, "a number within a 32-bit float's range", shown(text))
    return value


def refuse(file: str, line: int, expected: str, found: str):
    raise ObanError(file, f"line {line}: expected {expected}, found {found}")


def shown(text: str) -> str:
    """Quoted, cut short, any control or 8-bit character as an escape."""
    text = text if len(text) <= 40 else text[:40] + "..."
    return "'" + "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in text) + "'"
