"""The layout's rules (oban_import/README.md and each folder's README): a wing per game with
its layers (io, engine, blender), the shared core and Blender helpers, the front ends on
top; bpy only where a scene is built or a front end needs it; no import from one game's
wing into the other's; nothing imports upwards; a listing needs no Blender."""

import ast
import os
import subprocess
import sys

import pytest
from paths import EXAMPLES, ROOT

PACKAGE = os.path.join(ROOT, "oban_import")
# Oni's bytes by format (oni/io/README.md): each folder may import those before it, and the
# import's scale and axes (oni/io/import_frame.py, room "oni.io").
ONI_IO = ("oni.io.container", "oni.io.oban", "oni.io.objects", "oni.io.level", "oni.io.trams", "oni.io.characters",
          "oni.io.level_rebuild", "oni.io.stage", "oni.io.bsl")
ONI_FORMATS = {room: {"core", *ONI_IO[:n + 1]} for n, room in enumerate(ONI_IO)}
# Oni in Blender by kind (oni/blender/README.md): each folder may import those before it; the
# import driver (oni/blender/importer.py) all of them.
ONI_BLENDER = ("oni.blender.shared", "oni.blender.oban", "oni.blender.characters", "oni.blender.level")
ONI_BELOW_BLENDER = {"core", "blender", "oni.io", *ONI_IO, "oni.engine", "oni"}
ONI_KINDS = {room: ONI_BELOW_BLENDER | set(ONI_BLENDER[:n + 1]) for n, room in enumerate(ONI_BLENDER)}
# The way back (oni/export/README.md): the floor every export stands on, then one driver per
# kind, which may import the floor and what is below it, never another kind's export.
ONI_BELOW_EXPORT = ONI_BELOW_BLENDER | {*ONI_BLENDER, "oni.blender"}
ONI_EXPORTS = ("oni.export.oban", "oni.export.meshes", "oni.export.trams", "oni.export.bodies", "oni.export.level")
# What each room may import of the add-on. A game's layers: io < engine < blender < export.
ALLOWED = {
    "core": {"core"},
    "blender": {"core", "blender"},
    "oni.io": {"core", "oni.io"},
    **ONI_FORMATS,
    "oni.engine": {"core", "oni.io", *ONI_IO, "oni.engine"},
    "oni": {"core", "oni.io", *ONI_IO, "oni.engine", "oni"},   # the plan: what a file brings (oni/plan.py)
    **ONI_KINDS,
    "oni.blender": ONI_BELOW_BLENDER | {*ONI_BLENDER, "oni.blender"},
    "oni.blender.cutscene": ONI_BELOW_BLENDER | {*ONI_BLENDER, "oni.blender", "oni.blender.cutscene"},   # above the importer
    "oni.export.shared": ONI_BELOW_EXPORT | {"oni.export.shared"},
    **{room: ONI_BELOW_EXPORT | {"oni.export.shared", room} for room in ONI_EXPORTS},
    "oni.export.cutscene": ONI_BELOW_EXPORT | {"oni.export.shared", *ONI_EXPORTS, "oni.export.cutscene"},   # above them
    "outpost2.io": {"core", "outpost2.io"},
    "outpost2.engine": {"core", "outpost2.io", "outpost2.engine"},
    "outpost2.blender": {"core", "blender", "outpost2.io", "outpost2.engine", "outpost2.blender"},
    "ui": {"core", "blender", "oni.io", *ONI_IO, "oni.engine", "oni", "oni.blender", *ONI_BLENDER, "oni.blender.cutscene",
           "oni.export.shared", *ONI_EXPORTS, "oni.export.cutscene", "outpost2.io", "outpost2.engine", "outpost2.blender",
           "ui"},
    "": {"ui"},   # the package's register() and __main__
    "outpost2": set(), "oni.export": set(),   # packages' own __init__.py
}
WITH_BPY = {"blender", "oni.blender", *ONI_BLENDER, "oni.blender.cutscene", "oni.export.shared", *ONI_EXPORTS,
            "oni.export.cutscene", "outpost2.blender", "ui"}
BLENDER_MODULES = {"bpy", "mathutils", "bpy_extras"}
# front ends that run without Blender, or import it only where a scene is built
NO_BPY_AT_IMPORT = {"ui/options.py", "ui/listing.py", "ui/cli.py"}


def rooms():
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield _room(os.path.relpath(path, PACKAGE)), path


def _room(relative):
    """'oni/io/oban/read.py' -> 'oni.io.oban', 'oni/blender/level/environment.py' -> 'oni.blender.level',
    'oni/export/level/patch.py' -> 'oni.export.level', 'oni/export/oban.py' -> 'oni.export.oban',
    'oni/blender/importer.py' -> 'oni.blender', 'oni/engine/frames.py' -> 'oni.engine', 'core/errors.py' ->
    'core', '__main__.py' -> ''."""
    parts = relative.split(os.sep)[:-1]
    if parts[:2] == ["oni", "export"] and len(parts) == 2 and not relative.endswith("__init__.py"):
        return "oni.export." + os.path.splitext(os.path.basename(relative))[0]   # a kind's export in one module
    if parts[:2] in (["oni", "io"], ["oni", "blender"], ["oni", "export"]):
        return ".".join(parts[:3])
    return ".".join(parts[:2] if parts and parts[0] in ("oni", "outpost2") else parts[:1])


def imports(path, top_level_only=False):
    """(external top-level module names, add-on rooms) a module imports."""
    tree = ast.parse(open(path).read())
    package = os.path.relpath(os.path.dirname(path), os.path.dirname(PACKAGE)).split(os.sep)
    external, internal = set(), set()
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            external |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                external.add(node.module.split(".")[0])
                continue
            target = package[:len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            names = [target + [alias.name] for alias in node.names] if not node.module else [target]
            for name in names:
                module = os.path.join(*name[1:])   # a module the name is in or is, or a package
                package_init = os.path.isdir(os.path.join(PACKAGE, module))
                internal.add(_room(os.path.join(module, "__init__.py") if package_init else module + ".py"))
    return external, internal


@pytest.mark.parametrize("room, path", list(rooms()), ids=lambda v: os.path.relpath(v, PACKAGE)
                         if isinstance(v, str) and os.sep in v else v)
def test_each_room_imports_only_what_its_readme_allows(room, path):
    external, internal = imports(path)
    assert "oban_import" not in external, "absolute import of the add-on"
    assert internal <= ALLOWED[room], (path, internal - ALLOWED[room])
    relative = os.path.relpath(path, PACKAGE)
    if room not in WITH_BPY:
        assert not external & BLENDER_MODULES, (path, external & BLENDER_MODULES)
    elif relative in NO_BPY_AT_IMPORT:
        assert not imports(path, top_level_only=True)[0] & BLENDER_MODULES, path


def test_the_rules_see_every_room():
    """A new folder gets its rule here and a README."""
    found = {room for room, _ in rooms()}
    assert found == set(ALLOWED), found ^ set(ALLOWED)
    for folder, dirs, _ in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if folder != PACKAGE:
            assert os.path.isfile(os.path.join(folder, "README.md")), folder


def test_every_folders_readme_names_its_files():
    """A folder's README names each of its modules and folders, so that a reader finds them."""
    unnamed = []
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        text = open(os.path.join(folder, "README.md"), encoding="utf-8").read()
        unnamed += [os.path.relpath(os.path.join(folder, name), PACKAGE)
                    for name in [f for f in files if f.endswith(".py") and f != "__init__.py"] + [d + "/" for d in dirs]
                    if f"`{name}" not in text]
    assert not unnamed, unnamed


def _probed(sample, line) -> set:
    """The rooms a module beside `sample` (oban_import/...) holding `line` and then the sample's
    own text imports, as the checker reads them."""
    sample = os.path.join(PACKAGE, *sample.split("/"))
    probe = os.path.join(os.path.dirname(sample), "_probe_layers.py")
    try:
        with open(probe, "w") as f:
            f.write(line + "\n" + open(sample).read())
        return imports(probe)[1]
    finally:
        os.remove(probe)


@pytest.mark.parametrize("sample, line, room", [
    ("oni/io/oban/record.py", "from ...blender import importer", "oni.blender"),            # upwards
    ("oni/io/oban/record.py", "from ....outpost2.io import prt", "outpost2.io"),            # across the wings
    ("oni/io/oban/record.py", "from ..trams import tram", "oni.io.trams"),                  # a later format
    ("oni/blender/oban/motion.py", "from ..level import placed", "oni.blender.level"),      # a later kind
    ("oni/export/level/rebuild.py", "from ..meshes import export_meshes", "oni.export.meshes")])   # another's export
def test_a_wrong_import_is_caught(sample, line, room):
    """The checker itself: each wrong import is seen, and its room is not one its own may import."""
    assert room in _probed(sample, line) and room not in ALLOWED[_room(sample.replace("/", os.sep))]


def test_listing_runs_without_blender():
    """`python -m oban_import FILE --list` with bpy made unimportable."""
    code = ("import runpy, sys; sys.modules['bpy'] = sys.modules['mathutils'] = None; "
            "sys.argv = ['oban_import'] + sys.argv[1:]; runpy.run_module('oban_import', run_name='__main__')")
    files = [os.path.join(EXAMPLES, name) for name in
             ("00002-fan_loop.OBAN", "level9_Final.dat", "TXMPtex03_rgba.oni")]
    done = subprocess.run([sys.executable, "-c", code, *files, "--list"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "fan_loop" in done.stdout and "object05" in done.stdout and "tex03_rgba" in done.stdout
    sprites = subprocess.run([sys.executable, "-c", code, os.path.join(EXAMPLES, "op2_art.prt"), "--list"],
                             cwd=ROOT, capture_output=True, text=True)
    assert sprites.returncode == 0 and sprites.stdout.splitlines()[0].split()[:3] == ["file", "index", "frames"]
