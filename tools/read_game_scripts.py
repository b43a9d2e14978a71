"""Reads every .bsl under FOLDER with the add-on's BSL reader (docs/bsl.md) and prints, per
file, its functions and statements or its error; then, per folder holding scripts, any
error reading them as one level (a name defined twice). Exit 1 if anything failed.

    .venvs/bpy-5.0/bin/python tools/read_game_scripts.py FOLDER
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from oban_import.core.errors import ObanError  # noqa: E402
from oban_import.oni.io.bsl.read import read_script, read_scripts  # noqa: E402
from oban_import.oni.io.bsl.script import If  # noqa: E402


def statements(nodes) -> int:
    """How many statements `nodes` hold, those inside an if's branches included."""
    return sum(1 + (statements(n.then) + statements(n.otherwise) if isinstance(n, If) else 0) for n in nodes)


def main(folder: str) -> int:
    failed = files = functions = count = 0
    folders = []
    for here, subfolders, names in os.walk(folder):
        subfolders.sort()
        scripts = sorted(n for n in names if n.lower().endswith(".bsl"))
        if scripts:
            folders.append(here)
        for name in scripts:
            path = os.path.join(here, name)
            files += 1
            try:
                script = read_script(path)
            except ObanError as error:
                failed += 1
                print(f"{path}: ERROR {error.problem}")
                continue
            body = sum(statements(f.body) for f in script.functions) + len(script.variables)
            functions += len(script.functions)
            count += body
            print(f"{path}: {len(script.functions)} functions, {body} statements")
    for here in folders:
        try:
            read_scripts(here)
        except ObanError as error:
            failed += 1
            print(f"{here} (as a level): ERROR {error}")
    print(f"{files} files, {functions} functions, {count} statements; {failed} errors")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(f"usage: {sys.argv[0]} FOLDER")
    sys.exit(main(sys.argv[1]))
