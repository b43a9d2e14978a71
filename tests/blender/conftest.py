"""Fixtures for the tests that need Blender (bpy module or the blender binary).

``bpy`` is imported inside the fixtures, not at module level: under
pytest-blender this conftest is also loaded by the outer pytest (plain Python,
no bpy) before the plugin hands the run over to the blender binary.
"""

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
