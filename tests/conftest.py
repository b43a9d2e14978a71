"""Shared by every test folder: the repository root, tests/fixtures and the generators the
benchmarks share (tools/generate) on sys.path (also
inside the blender binary, whose Python does not see the working directory), and the
fixtures of the tests that need Blender (the `blender/` folders).

``bpy`` is imported inside the fixtures, not at module level: under pytest-blender this
conftest is also loaded by the outer pytest (plain Python, no bpy) before the plugin
hands the run over to the blender binary.
"""

import os
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
for folder in (os.path.dirname(TESTS), os.path.join(TESTS, "fixtures"),
               os.path.join(os.path.dirname(TESTS), "tools", "generate")):
    if folder not in sys.path:
        sys.path.insert(0, folder)


def in_blender_folder(path) -> bool:
    return "blender" in os.path.relpath(str(path), TESTS).split(os.sep)[:-1]


@pytest.fixture(autouse=True)
def factory_scene(request):
    """Every Blender test starts from Blender's factory settings with an empty scene."""
    if in_blender_folder(request.path):
        import bpy

        bpy.ops.wm.read_factory_settings(use_empty=True)
    yield


@pytest.fixture(scope="session")
def addon():
    """Registers the add-on once for the session (request it by name, or with
    ``@pytest.mark.usefixtures("addon")``); unregisters it at the end."""
    import oban_import

    oban_import.register()
    yield oban_import
    oban_import.unregister()


@pytest.fixture
def sample_level(tmp_path, addon):
    """A copy of OniSplit's sample level (tests/data/environment/level) in tmp_path/in, imported
    with the defaults; its .dat's path."""
    import shutil

    import bpy

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        shutil.copy(os.path.join(TESTS, "data", "environment", "level", name), folder / name)
    path = str(folder / "level5_Final.dat")
    assert bpy.ops.import_anim.oban(filepath=path) == {"FINISHED"}
    return path


def pytest_configure(config):
    config.addinivalue_line("markers", "extensions: needs Blender 4.2+ (extensions); deselected before")
    config.addinivalue_line("markers", "window: drives Debian's blender binary in a window; run once, "
                                       "inside that binary (the bpy module runs deselect it)")


def pytest_collection_modifyitems(config, items):
    """Blender 3.4-4.1 have no extensions, and the window test runs once, from the blender
    binary's run: their tests are left out elsewhere, not skipped."""
    if not any(item.get_closest_marker(m) for item in items for m in ("extensions", "window")):
        return
    try:
        import bpy
    except ImportError:  # the outer pytest of pytest-blender
        return
    markers = ([] if bpy.app.version >= (4, 2, 0) else ["extensions"]) + ([] if bpy.app.binary_path else ["window"])
    left_out = [item for item in items if any(item.get_closest_marker(m) for m in markers)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]


_exit_status = None


def pytest_sessionfinish(session, exitstatus):
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """The bpy 4.2 module (not the binary, not 4.5+) crashes while tearing down once a
    Python-defined panel or get/set property was registered, as the add-on does: with
    every report written, leave with pytest's own exit status before that teardown."""
    if "bpy" not in sys.modules:
        return
    import bpy

    if not bpy.app.binary_path and bpy.app.version[:2] == (4, 2) and _exit_status is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status)
