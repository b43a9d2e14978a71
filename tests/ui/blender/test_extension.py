"""The add-on as users install it.

Blender 4.2+ (extensions): the repository root is the extension's source. It is
built and validated with Blender's own builder (bl_pkg/cli/blender_ext.py, what
``blender -c extension build`` runs), installed with
``bpy.ops.extensions.package_install_files`` and exercised as
``bl_ext.user_default.oban_import``. Blender 3.4-4.1 have no extensions: they load
``oban_import/`` as a legacy add-on through its bl_info, which is checked in every
version (4.2+ still load legacy add-ons).

Installing and enabling happen in a fresh Blender (a subprocess: the venv's Python
importing bpy, or the blender binary running a script) whose BLENDER_USER_* and
cache directories are inside pytest's temporary directory: nothing lands in the
home directory, and this session, where conftest's ``addon`` fixture registers
``oban_import`` from the repository, never sees a second copy of the operator.
"""

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile

import bpy
import pytest
from paths import ROOT

SAMPLE = os.path.join(ROOT, "tests", "data", "raw", "00011-fan_loop.OBAN")
SAMPLE_OBJECT = "fan_loop"
SAMPLE_KEYS = 48

EXTENSION_ID = "oban_import"
EXTENSION_REPO = "user_default"
EXTENSION_MODULE = f"bl_ext.{EXTENSION_REPO}.{EXTENSION_ID}"
# What the archive may hold besides oban_import/ (the manifest is always there).
ROOT_FILES = {"blender_manifest.toml", "__init__.py", "LICENSE", "README.md"}
# Top-level entries that must never be shipped (besides anything not listed above).
NEVER_SHIPPED = ("tests/", "tools/", "benchmarks/", "examples/", "build/", ".ci/", ".venvs/", ".git")

HAS_EXTENSIONS = bpy.app.version >= (4, 2, 0)
needs_extensions = pytest.mark.extensions  # deselected before 4.2 (tests/blender/conftest.py)

TIMEOUT = 600  # seconds, for each subprocess

# Runs in the child Blender: argv = MODE RESULT_JSON SOURCE SAMPLE, where SOURCE is
# the zip ("install") or a scripts directory holding addons/oban_import ("legacy").
# Writes what it found to RESULT_JSON; the assertions are in the tests.
CHILD = r'''
import contextlib
import io
import json
import os
import sys
import traceback

import bpy  # first: with the bpy module, addon_utils is importable only after bpy

import addon_utils

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
mode, result_path, source, sample = argv
result = {"blender": list(bpy.app.version), "errors": []}


def save():
    with open(result_path, "w") as f:
        json.dump(result, f, indent=1)


def fcurves_of(obj):
    action = obj.animation_data.action if obj.animation_data else None
    if action is None:
        return []
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    return [fcurve for layer in action.layers for strip in layer.strips
            for channelbag in strip.channelbags for fcurve in channelbag.fcurves]


def import_sample():
    before = set(bpy.data.objects)
    ret = bpy.ops.import_anim.oban(filepath=sample)
    result["import_result"] = sorted(ret)
    new = [obj for obj in bpy.data.objects if obj not in before]
    result["new_objects"] = {
        obj.name: {
            "type": obj.type,
            "fcurves": {f"{fc.data_path}[{fc.array_index}]": len(fc.keyframe_points)
                        for fc in fcurves_of(obj)},
        }
        for obj in new
    }


def operator_module():
    cls = getattr(bpy.types, "IMPORT_ANIM_OT_oban", None)
    return None if cls is None else cls.__module__


def install():
    # bpy.utils.register_cli_command cannot be called from Python (only
    # `blender -c ID` runs it), so record what the add-on registers instead.
    cli = result["cli"] = {"registered": [], "unregistered": 0}
    callbacks = {}
    if hasattr(bpy.utils, "register_cli_command"):
        real_register, real_unregister = bpy.utils.register_cli_command, bpy.utils.unregister_cli_command

        def register_cli_command(id, execute):
            cli["registered"].append(id)
            callbacks[id] = execute
            return real_register(id, execute)

        def unregister_cli_command(handle):
            cli["unregistered"] += 1
            return real_unregister(handle)

        bpy.utils.register_cli_command = register_cli_command
        bpy.utils.unregister_cli_command = unregister_cli_command

    op = bpy.ops.extensions.package_install_files
    result["install_properties"] = sorted(op.get_rna_type().properties.keys())
    repo = next(r for r in bpy.context.preferences.extensions.repos if r.module == "user_default")
    result["repo_directory"] = repo.directory
    result["install_result"] = sorted(op(filepath=source, repo="user_default", enable_on_install=True))

    module = "bl_ext.user_default.oban_import"
    installed = os.path.join(repo.directory, "oban_import")
    result["installed_files"] = sorted(
        os.path.relpath(os.path.join(dirpath, name), installed).replace(os.sep, "/")
        for dirpath, dirnames, filenames in os.walk(installed)
        if "__pycache__" not in dirpath.split(os.sep)
        for name in filenames)
    result["enabled_in_preferences"] = module in bpy.context.preferences.addons
    result["addon_check"] = list(addon_utils.check(module))
    result["operator_module"] = operator_module()
    result["module_file"] = getattr(sys.modules.get(module), "__file__", None)
    result["module_has_bl_info"] = hasattr(sys.modules.get(module), "bl_info")

    import_sample()

    if "oban_import" in callbacks:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = callbacks["oban_import"](["--list", sample])
            except SystemExit as exit:
                code = exit.code
        cli["list_exit_code"] = code
        cli["list_stdout"] = out.getvalue()
        cli["list_stderr"] = err.getvalue()

    addon_utils.disable(module, default_set=True)
    result["operator_after_disable"] = operator_module()


def legacy():
    # `source` is a scripts directory (BLENDER_USER_SCRIPTS) holding addons/oban_import
    errors = []
    mod = addon_utils.enable("oban_import", default_set=True, handle_error=lambda ex: errors.append(repr(ex)))
    result["errors"] += errors
    result["enabled"] = mod is not None
    result["module_file"] = getattr(mod, "__file__", None)
    result["bl_info"] = {k: list(v) if isinstance(v, tuple) else v for k, v in getattr(mod, "bl_info", {}).items()}
    result["enabled_in_preferences"] = "oban_import" in bpy.context.preferences.addons
    result["operator_module"] = operator_module()
    import_sample()
    addon_utils.disable("oban_import", default_set=True)
    result["operator_after_disable"] = operator_module()


try:
    {"install": install, "legacy": legacy}[mode]()
except BaseException:
    result["errors"].append(traceback.format_exc())
save()
if not bpy.app.binary_path and bpy.app.version[:2] == (4, 2):
    # the bpy 4.2 module crashes while tearing down once a Python-defined panel or get/set
    # property was registered (not the binary, not 4.5+); the result is saved: leave now
    sys.stdout.flush()
    os._exit(0)
'''


def isolated_env(base):
    """Environment for a child Blender whose user directories are all under `base`."""
    env = dict(os.environ)
    for name, sub in [("BLENDER_USER_RESOURCES", "resources"), ("BLENDER_USER_CONFIG", "config"),
                      ("BLENDER_USER_SCRIPTS", "scripts"), ("BLENDER_USER_DATAFILES", "datafiles"),
                      ("BLENDER_USER_EXTENSIONS", "extensions"), ("XDG_CACHE_HOME", "cache"),
                      ("XDG_CONFIG_HOME", "xdg-config"), ("HOME", "home")]:
        env[name] = os.path.join(base, sub)
        os.makedirs(env[name], exist_ok=True)
    env.pop("PYTHONPATH", None)  # the child must not find the repository's oban_import
    return env


def run_child(base, mode, source):
    """Run CHILD in a fresh Blender: the bpy module with this Python, or the blender
    binary this session runs in. Returns the child's result dict."""
    os.makedirs(base, exist_ok=True)
    script = os.path.join(base, "child.py")
    with open(script, "w") as f:
        f.write(CHILD)
    result_path = os.path.join(base, "result.json")
    args = [mode, result_path, source, SAMPLE]
    if bpy.app.binary_path:  # inside the blender binary (pytest-blender, --python-expr)
        cmd = [bpy.app.binary_path, "-b", "--factory-startup", "-noaudio", "--python-exit-code", "1",
               "--python", script, "--", *args]
    else:  # Blender as a Python module
        cmd = [sys.executable, script, *args]
    proc = subprocess.run(cmd, cwd=base, env=isolated_env(base), capture_output=True, text=True,
                          timeout=TIMEOUT)
    log = f"$ {' '.join(cmd)}\n--- exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert os.path.exists(result_path), f"the child Blender wrote no result\n{log}"
    with open(result_path) as f:
        result = json.load(f)
    assert not result["errors"], "\n".join(result["errors"]) + "\n" + log
    assert proc.returncode == 0, log
    result["log"] = log
    result["base"] = base
    return result


def assert_sample_imported(result):
    assert result["import_result"] == ["FINISHED"], result["log"]
    assert SAMPLE_OBJECT in result["new_objects"], result["new_objects"]
    obj = result["new_objects"][SAMPLE_OBJECT]
    assert obj["type"] == "EMPTY"
    assert obj["fcurves"], "no F-curves"
    assert set(obj["fcurves"].values()) == {SAMPLE_KEYS}, obj["fcurves"]


def blender_ext():
    """Blender's extension builder and its list of valid tags, as `blender -c extension` uses them."""
    scripts = bpy.utils.system_resource("SCRIPTS")
    tool = os.path.join(scripts, "addons_core", "bl_pkg", "cli", "blender_ext.py")
    tags = os.path.join(scripts, "modules", "_bpy_internal", "extensions", "tags.py")
    assert os.path.isfile(tool), tool
    return tool, tags


def run_blender_ext(*args):
    tool, tags = blender_ext()
    cmd = [sys.executable, tool, *args, "--valid-tags", tags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    return proc, f"$ {' '.join(cmd)}\n--- exit {proc.returncode}\n{proc.stdout}{proc.stderr}"


def shipped_files():
    """What the archive should hold: the root files that exist, and oban_import/ without caches."""
    files = {name for name in ROOT_FILES if os.path.isfile(os.path.join(ROOT, name))}
    package = os.path.join(ROOT, "oban_import")
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        for name in filenames:
            if name.startswith(".") or name.endswith((".pyc", ".pyo")) or ".blend" in name:
                continue
            files.add(os.path.relpath(os.path.join(dirpath, name), ROOT).replace(os.sep, "/"))
    return files


@pytest.fixture(scope="module")
def extension_zip(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("extension-build"))
    proc, log = run_blender_ext("build", "--source-dir", ROOT, "--output-dir", out)
    assert proc.returncode == 0, log
    zips = [name for name in os.listdir(out) if name.endswith(".zip")]
    assert zips == [f"{EXTENSION_ID}-0.1.0.zip"], f"{zips}\n{log}"
    return os.path.join(out, zips[0])


@pytest.fixture(scope="module")
def installed(extension_zip, tmp_path_factory):
    return run_child(str(tmp_path_factory.mktemp("extension-install")), "install", extension_zip)


# Static checks (every version) ---------------------------------------------------

def test_manifest_follows_blenders_rules():
    with open(os.path.join(ROOT, "blender_manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    import oban_import

    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == EXTENSION_ID
    assert manifest["type"] == "add-on"
    assert manifest["version"] == ".".join(map(str, oban_import.bl_info["version"]))
    assert manifest["blender_version_min"] == "4.2.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert manifest["name"] and manifest["maintainer"]
    assert set(manifest["tags"]) <= {"Import-Export", "Animation"}  # both in Blender's list for add-ons
    # tagline and permission reasons: at most 64 characters, no trailing punctuation
    terse = [manifest["tagline"], *manifest["permissions"].values()]
    assert set(manifest["permissions"]) == {"files"}
    for text in terse:
        assert 0 < len(text) <= 64 and text == text.strip(), text
        assert text[-1].isalnum() or text[-1] in ")]}", text
    assert "paths" not in manifest["build"]  # Blender refuses "paths" together with paths_exclude_pattern
    assert manifest["build"]["paths_exclude_pattern"]


def test_root_init_hands_over_to_the_package():
    with open(os.path.join(ROOT, "__init__.py")) as f:
        tree = ast.parse(f.read())
    assigned = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    assert "bl_info" not in assigned  # an extension takes its metadata from the manifest
    imports = [(node.level, node.module, sorted(alias.name for alias in node.names))
               for node in tree.body if isinstance(node, ast.ImportFrom)]
    assert imports == [(1, "oban_import", ["register", "unregister"])]


def test_license_is_the_gpl3():
    with open(os.path.join(ROOT, "LICENSE")) as f:
        text = f.read()
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Version 3, 29 June 2007" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice


# Legacy add-on (every version; the only way to install before 4.2) ---------------

def test_legacy_addon_from_scripts_addons(tmp_path):
    base = tmp_path / "legacy"
    addons = base / "scripts" / "addons"  # isolated_env points BLENDER_USER_SCRIPTS at base/scripts
    shutil.copytree(os.path.join(ROOT, "oban_import"), addons / "oban_import",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    result = run_child(str(base), "legacy", str(base / "scripts"))
    assert result["enabled"], result["log"]
    assert result["enabled_in_preferences"]
    assert os.path.dirname(result["module_file"]) == str(addons / "oban_import")
    assert result["bl_info"]["category"] == "Import-Export"
    assert tuple(result["bl_info"]["blender"]) <= tuple(result["blender"])
    assert result["operator_module"] == "oban_import.ui.operators"
    assert_sample_imported(result)
    assert result["operator_after_disable"] is None


# Extension (4.2+) ---------------------------------------------------------------

@needs_extensions
def test_build_and_validate_with_blenders_builder(extension_zip):
    proc, log = run_blender_ext("validate", extension_zip)
    assert proc.returncode == 0, log
    with zipfile.ZipFile(extension_zip) as archive:
        names = [info.filename for info in archive.infolist() if not info.is_dir()]
    assert len(names) == len(set(names))
    assert set(names) == shipped_files()
    for name in names:
        assert not name.startswith(NEVER_SHIPPED), name
        assert "__pycache__" not in name and not name.endswith((".pyc", ".zip", ".blend")), name


@needs_extensions
def test_install_enables_the_extension(installed):
    for name in ("filepath", "repo", "enable_on_install"):
        assert name in installed["install_properties"]
    assert installed["install_result"] == ["FINISHED"], installed["log"]
    # installed into the temporary user directories, not the home directory
    assert installed["repo_directory"].startswith(installed["base"] + os.sep), installed["repo_directory"]
    assert installed["enabled_in_preferences"], installed["log"]
    assert installed["addon_check"] == [True, True]  # (enabled by default, loaded)
    assert set(installed["installed_files"]) == shipped_files()
    assert not installed["module_has_bl_info"]
    assert installed["module_file"] == os.path.join(installed["repo_directory"], EXTENSION_ID, "__init__.py")


@needs_extensions
def test_installed_extension_imports_the_sample(installed):
    # the operator is the extension's (bl_ext.user_default.oban_import.oban_import...),
    # not a copy found elsewhere on sys.path
    assert installed["operator_module"] == f"{EXTENSION_MODULE}.oban_import.ui.operators"
    assert_sample_imported(installed)
    assert installed["operator_after_disable"] is None  # unregister() cleans up


@needs_extensions
def test_installed_extension_registers_its_command(installed):
    # `blender -c oban_import ...` can only be run by the blender binary; this checks
    # the registration and runs the registered callback itself.
    cli = installed["cli"]
    assert cli["registered"] == ["oban_import"]
    assert cli["list_exit_code"] == 0, cli
    assert SAMPLE_OBJECT in cli["list_stdout"], cli
    assert cli["unregistered"] == 1  # disabling the extension unregisters the command
