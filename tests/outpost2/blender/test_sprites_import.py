"""Outpost 2 through the operator, the file handler and both command lines; and the
import dialogs' option groups."""

import os

import bpy
import pytest
from commands import COMMANDS, ROOT, run

from oban_import.blender import compat
from oban_import.outpost2.io.op2_properties import INDEX
from oban_import.ui.options import IMPORT_OPTIONS, SPRITE_IMPORT, SPRITE_OPTIONS, groups

pytestmark = pytest.mark.usefixtures("addon")
PRT = os.path.join(ROOT, "examples", "op2_art.prt")


def empties():
    return sorted((o for o in bpy.data.objects if INDEX in o), key=lambda o: o[INDEX])


def test_the_example_through_the_operator():
    assert bpy.ops.import_anim.op2_sprites(filepath=PRT, animations="1") == {"FINISHED"}
    assert [e.name for e in empties()] == ["anim_1"]
    assert bpy.context.scene.render.fps == 100
    assert all(image.packed_file for image in bpy.data.images)
    with pytest.raises(RuntimeError, match="Animations: '1-x' is not an index or a range"):
        bpy.ops.import_anim.op2_sprites(filepath=PRT, animations="1-x")


def test_menu_and_drag_and_drop():
    entries = [getattr(f, "dialog", None) for f in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()]
    assert SPRITE_IMPORT in entries and "UNDO" in bpy.types.IMPORT_ANIM_OT_op2_sprites.bl_options
    if compat.HAS_FILE_HANDLER:
        assert bpy.types.OP2_FH_import.bl_file_extensions == ".prt"
        assert bpy.types.OP2_FH_import.bl_import_operator == "import_anim.op2_sprites"


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_lines(tmp_path, command):
    out = tmp_path / "sprites.blend"
    done = run(command, PRT, "-o", out, "--animations", "0-1", "--scale", "0.1")
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "importing: 100%" in done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert [e.name for e in empties()] == ["anim_0", "anim_1"]
    listed = run(command, PRT, "--list")
    assert listed.returncode == 0
    assert [line.split()[:2] for line in listed.stdout.splitlines() if line.startswith("op2_art.prt")] == \
        [["op2_art.prt", "0"], ["op2_art.prt", "1"]]
    beyond = run(command, PRT, "-o", tmp_path / "beyond.blend", "--animations", "0-40,500")
    assert beyond.returncode == 1 and "op2_art.prt: animation index 2 is out of range (2 animations)" in beyond.stderr
    assert not (tmp_path / "beyond.blend").exists()
    bad = run(command, PRT, "-o", out, "--animations", "x")
    assert bad.returncode == 2 and "--animations: 'x' is not an index" in bad.stderr
    mixed = run(command, PRT, os.path.join(ROOT, "examples", "00002-fan_loop.OBAN"), "-o", out)
    assert mixed.returncode == 2 and "imported in separate runs" in mixed.stderr


class _Layout:
    """Records what a dialog draws: groups (layout panels or boxes) and the options in them."""

    def __init__(self, drawn, group=None):
        self.drawn, self.group = drawn, group
        self.use_property_split = self.use_property_decorate = None

    def panel(self, idname, default_closed=False):
        return _Layout(self.drawn), _Layout(self.drawn, idname.rsplit("_", 1)[1])

    def box(self):
        return _Layout(self.drawn, "box")

    def label(self, text):
        if self.group == "box":
            self.group = text

    def prop(self, owner, name):
        self.drawn.append((self.group, name))


@pytest.mark.parametrize("operator, options", [("ImportOBAN", IMPORT_OPTIONS),
                                               ("ImportOP2Sprites", SPRITE_OPTIONS)])
def test_the_dialogs_draw_every_option_in_its_group(operator, options):
    from oban_import.ui import operators
    drawn = []

    class Owner:
        layout = _Layout(drawn)
    getattr(operators, operator).draw(Owner(), bpy.context)
    assert drawn == [(group, name) for group, names in groups(options).items() for name in names]
