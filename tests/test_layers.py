"""The layout's rules (oban_import/*/README.md): the format and math packages never import
bpy or the Blender package, nothing imports upwards, and a listing needs no Blender."""

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "oban_import")
# What each bpy-free part may import of the add-on ("" is the shared top level: errors, files, ...)
ALLOWED = {"oni": {"", "oni"}, "engine": {"", "oni", "engine"}, "outpost2": {"", "outpost2"},
           "": {"", "oni", "engine", "outpost2"}}
PARTS = ("oni", "engine", "outpost2", "blender")
SHARED = ("errors.py", "files.py", "properties.py", "options.py", "listing.py")


def modules():
    for part in ("oni", "engine", "outpost2"):
        for name in sorted(os.listdir(os.path.join(PACKAGE, part))):
            if name.endswith(".py"):
                yield part, os.path.join(PACKAGE, part, name)
    for name in SHARED:
        yield "", os.path.join(PACKAGE, name)


def imports(path, part):
    """(absolute module names, add-on parts) a module imports, its relative imports resolved."""
    tree = ast.parse(open(path).read())
    external, internal = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            external |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                external.add(node.module.split(".")[0])
                continue
            base = [part] if part and node.level == 1 else []
            target = (base + (node.module or "").split("."))[0] if node.module or base else ""
            if not node.module and node.level == 1 and part:   # from . import x
                target = part
            internal.add(target if target in PARTS else "")
    return external, internal


@pytest.mark.parametrize("part, path", list(modules()), ids=lambda v: os.path.relpath(v, PACKAGE)
                         if isinstance(v, str) and os.sep in v else v)
def test_no_bpy_and_nothing_upwards(part, path):
    external, internal = imports(path, part)
    assert not external & {"bpy", "mathutils", "bpy_extras", "oban_import"}, external
    assert internal <= ALLOWED[part], (path, internal)


def test_listing_runs_without_blender():
    """`python -m oban_import FILE --list` with bpy made unimportable."""
    code = ("import runpy, sys; sys.modules['bpy'] = sys.modules['mathutils'] = None; "
            "sys.argv = ['oban_import'] + sys.argv[1:]; runpy.run_module('oban_import', run_name='__main__')")
    files = [os.path.join(ROOT, "examples", name) for name in
             ("00002-fan_loop.OBAN", "level9_Final.dat", "TXMPtex03_rgba.oni")]
    done = subprocess.run([sys.executable, "-c", code, *files, "--list"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "fan_loop" in done.stdout and "object05" in done.stdout and "tex03_rgba" in done.stdout
    sprites = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "examples", "op2_art.prt"), "--list"],
                             cwd=ROOT, capture_output=True, text=True)
    assert sprites.returncode == 0 and sprites.stdout.splitlines()[0].split()[:3] == ["file", "index", "frames"]
