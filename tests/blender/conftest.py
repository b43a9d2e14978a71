"""Fixtures for the tests that need Blender (bpy module or the blender binary).

``bpy`` is imported inside the fixtures, not at module level: under
pytest-blender this conftest is also loaded by the outer pytest (plain Python,
no bpy) before the plugin hands the run over to the blender binary.
"""

import os
import sys

import pytest


@pytest.fixture(autouse=True)
def factory_scene():
    """Every test starts from Blender's factory settings with an empty scene."""
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


def pytest_configure(config):
    config.addinivalue_line("markers", "extensions: needs Blender 4.2+ (extensions); deselected before")
    config.addinivalue_line("markers", "window: drives Debian's blender binary in a window; run once, "
                                       "inside that binary (the bpy module runs deselect it)")


def pytest_collection_modifyitems(config, items):
    """Blender 3.4-4.1 have no extensions, and the window test runs once, from the blender
    binary's run: their tests are left out elsewhere, not skipped."""
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
    try:
        import bpy
    except ImportError:  # the outer pytest of pytest-blender
        return
    if not bpy.app.binary_path and bpy.app.version[:2] == (4, 2) and _exit_status is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status)
