"""BSL's lexer (docs/bsl.md 2): the text of a script as tokens, each with its line, as the
engine's BFW_ScriptLang_Token.c reads it: words, numbers (`f80` is 80), strings without escapes,
`#` comments, and the few symbols the parser knows. A token is followed by a new line where
the next one's line is another (parse.py asks, as the engine's parser does)."""

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

# Each match: spaces, then one of the groups (numbered as the lexer tells them apart).
_TOKEN = re.compile(r"""[ \t\v\f]*(?:
 (\r\n|\n\r?|\r)                     # 1 a new line
|(\#[^\r\n]*)                        # 2 a comment
|(f[0-9][0-9.]*)                      # 3 a number of frames: f80
|([A-Za-z_][A-Za-z0-9_]*)             # 4 a word
|((?:[0-9.]|-[0-9])[0-9.\-]*)         # 5 a number, as far as the engine's lexer reads one
|("[^"\r\n]*")                        # 6 a string
|(==|!=|<=|>=|&&|\|\||[-+(){},;=<>!]) # 7 a symbol
|("[^"\r\n]*)                         # 8 a string the line ends
|(.)                                  # 9 anything else
|\Z)""", re.VERBOSE | re.DOTALL)
_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")


class Token(NamedTuple):
    kind: str         # "name", "keyword", "number", "string", "bool", "symbol", "end"
    text: str         # as written ("f80", "\"hi\"")
    value: object     # the number, the string without its quotes, the bool; else the text
    line: int         # 1-based


def tokenize(text: str, file: str) -> list:
    """Every token of `text`, then one of kind "end"; ObanError(file, "line N: expected X,
    found Y") at the first character or number the engine would not read."""
    tokens = []
    append = tokens.append
    line = 1
    new = tuple.__new__
    for match in _TOKEN.finditer(text):
        group = match.lastindex
        if group == 1:
            line += 1
        elif group == 4:
            word = match.group(4)
            if word in KEYWORDS:
                append(new(Token, ("keyword", word, word, line)))
            elif word == "true" or word == "false":
                append(new(Token, ("bool", word, word == "true", line)))
            else:
                append(new(Token, ("name", word, word, line)))
        elif group == 7:
            symbol = match.group(7)
            append(new(Token, ("symbol", symbol, symbol, line)))
        elif group == 3 or group == 5:
            number = match.group(group)
            append(new(Token, ("number", number, _number(number, group == 3, file, line), line)))
        elif group == 6:
            string = match.group(6)
            append(new(Token, ("string", string, string[1:-1], line)))
        elif group == 8:
            refuse(file, line, 'a closing " on the same line', f"the end of the line after {shown(match.group(8))}")
        elif group == 9:
            refuse(file, line, "a word, number, string or symbol", f"the character {shown(match.group(9))}")
    append(Token("end", "", None, line))
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
