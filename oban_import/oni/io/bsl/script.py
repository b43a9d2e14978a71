"""A BSL script as read (docs/bsl.md): its functions and global variables, each statement
and expression a frozen node carrying the line it starts on. No bpy, no engine rules: what
the statements do is oni/engine/cutscene's."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Literal:
    """A number (int or float), a string ("..."), or true/false."""
    value: int | float | str | bool
    line: int = field(default=0, compare=False)   # expressions compare without their line


@dataclass(frozen=True)
class Name:
    """A bare word: a variable's value where one is declared, else the word itself (the
    command form's `chr_envanim 0 TruckKonBox01 norotation`)."""
    name: str
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Unary:
    op: str          # "not" ("!" read as it) or "-"
    operand: object
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Binary:
    op: str          # "eq" "ne" "lt" "le" "gt" "ge" "and" "or" "+" "-" ("==" read as "eq", "&&" as "and", ...)
    left: object
    right: object
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    """`name a b` or `name(a, b)`: as a statement, or as an expression where a value is
    used (`if (did_kill_griffen() eq 1)`)."""
    name: str
    args: tuple
    line: int


@dataclass(frozen=True)
class Sleep:
    ticks: object    # an expression; `sleep f80` reads as Literal(80)
    line: int


@dataclass(frozen=True)
class Fork:
    call: Call
    line: int


@dataclass(frozen=True)
class Assign:
    name: str
    value: object
    line: int


@dataclass(frozen=True)
class Var:
    """`var int x = 1;` (value None where none is given)."""
    type: str
    name: str
    value: object
    line: int


@dataclass(frozen=True)
class If:
    test: object
    then: tuple
    otherwise: tuple  # () where there is no else
    line: int


@dataclass(frozen=True)
class Return:
    value: object     # None for a bare `return`
    line: int


@dataclass(frozen=True)
class Function:
    name: str
    returns: str      # "void", "int", ...
    params: tuple     # ((type, name), ...); () for `(void)` or `()`
    body: tuple       # statements
    file: str
    line: int


@dataclass(frozen=True)
class Script:
    """One .bsl file."""
    file: str
    functions: tuple  # Function, in file order
    variables: tuple  # Var, the file's globals in file order


@dataclass(frozen=True)
class LevelScripts:
    """Every .bsl of a level's folder (read_scripts), and their functions and global
    variables by name across the files (a function and a variable may share a name)."""
    folder: str
    scripts: tuple    # Script, by file name
    functions: dict   # name: Function
    variables: dict   # name: Var
