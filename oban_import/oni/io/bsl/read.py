"""Reading BSL scripts (docs/bsl.md): one file, its text, or a level's folder of them with
its functions and global variables looked up by name across the files."""

import os

from ....core.errors import ObanError
from ....core.files import open_regular
from .parse import parse
from .script import LevelScripts, Script

MAX_BYTES = 16 * 2 ** 20   # the engine stops at 8192 tokens a file (BFW_ScriptLang_Token.c): a few 100 KiB
BOM = b"\xef\xbb\xbf"


def read_script(path: str) -> Script:
    """The script in the file at `path`; ObanError naming it otherwise. The engine reads
    bytes, not an encoding: each byte is read as one latin-1 character, so that any byte
    (past 127) a string or comment holds comes back as it was; a UTF-8 BOM is skipped."""
    f, size = open_regular(path)
    with f:
        if size > MAX_BYTES:
            raise ObanError(path, f"expected at most {MAX_BYTES} bytes for a script, found {size}")
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError as error:
            raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
    if len(data) > MAX_BYTES:
        raise ObanError(path, f"expected at most {MAX_BYTES} bytes for a script, found more")
    return parse((data[len(BOM):] if data.startswith(BOM) else data).decode("latin-1"), path)


def read_script_text(text: str, file: str) -> Script:
    """The script `text` holds (`file` names it in the Script and in any ObanError)."""
    return parse(text[1:] if text.startswith("\ufeff") else text, str(file))


def read_scripts(folder: str) -> LevelScripts:
    """Every `*.bsl` (any case) directly in `folder`, as the engine loads a level's IGMD
    folder (Oni_Script.c: not its subfolders), in file-name order (`folder` may also be one
    .bsl file, read alone); ObanError for the first
    file that does not read, or for a function or global variable defined again (the
    engine's "already declared"; a function and a variable may share a name)."""
    if os.path.isfile(folder):
        folder, names = os.path.dirname(folder), [os.path.basename(folder)]
    else:
        names = _script_names(folder)
    scripts = tuple(read_script(os.path.join(folder, n)) for n in names)
    functions, variables, files = {}, {}, {}   # files: (kind, name): the file defining it
    for script in scripts:
        for kind, table, nodes in (("function", functions, script.functions),
                                   ("variable", variables, script.variables)):
            for node in nodes:
                if node.name in table:
                    raise ObanError(script.file, f"line {node.line}: expected one {kind} '{node.name}', found a "
                                                 f"second (the first is {files[kind, node.name]} line "
                                                 f"{table[node.name].line})")
                table[node.name] = node
                files[kind, node.name] = script.file
    return LevelScripts(str(folder), scripts, functions, variables)


def _script_names(folder):
    try:
        return sorted(n for n in os.listdir(folder) if n.lower().endswith(".bsl")
                      and os.path.isfile(os.path.join(folder, n)))
    except OSError as error:
        raise ObanError(folder, f"cannot be read: {error.strerror or error}") from None
