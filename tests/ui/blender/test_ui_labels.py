"""No option label is cut in the file browser's sidebar: Debian's Blender 3.4 in a real
window (Xvfb), each dialog opened as the File menu opens it, each label measured with the
interface's own font and size against the room its column leaves.

The sidebar splits each row (property split): a checkbox's text takes the right column, a
field's label the left one. Measured in 3.4 at its default width (249 px at the default
scale): a checkbox's text of 100 px shows whole and one of 105 px is cut with '...'; so the
right column leaves 40 % of the region to its text, the left one 36 %."""

import pytest
from paths import ROOT
from window import run_in_window

SCRIPT = r"""
import time
import blf
from oban_import.ui.options import DIALOGS, ORIENTATION
WAIT = 60.0   # seconds a dialog's file browser may take to show its sidebar on a busy machine
found = {}
opened = []
deadline = []


def sidebar():   # the open file browser's sidebar, or None while there is none yet
    found = file_browser()
    return next((region for region in found[1].regions if region.type == "TOOL_PROPS"), None) if found else None


def step():
    try:
        if opened:   # the last dialog opened: measure it, close its window
            dialog = opened[-1]
            region = sidebar()
            if region is None:
                if time.monotonic() > deadline[-1]:
                    raise TimeoutError(f"{dialog.idname}: no file browser sidebar {WAIT:g} s after opening it")
                return 0.25
            scale = bpy.context.preferences.system.ui_scale
            points = bpy.context.preferences.ui_styles[0].widget_label.points
            blf.size(0, points, int(72 * scale))
            found[dialog.idname] = {"width": region.width, "labels": {
                option.label: [blf.dimensions(0, option.label)[0], option.kind == "bool"]
                for option in dialog.options if option.name not in ORIENTATION}}
            bpy.ops.wm.window_close({"window": bpy.context.window_manager.windows[-1]})
        if len(opened) == len(DIALOGS):
            leave(found)
        dialog = DIALOGS[len(opened)]
        opened.append(dialog)
        module, name = dialog.idname.split(".")
        window = bpy.context.window_manager.windows[0]
        getattr(getattr(bpy.ops, module), name)({"window": window, "screen": window.screen}, "INVOKE_DEFAULT")
        deadline.append(time.monotonic() + WAIT)
        return 0.5
    except Exception:
        leave(found, failed=True)


bpy.app.timers.register(step, first_interval=1.0)
"""


@pytest.mark.window
def test_no_label_is_cut_in_blender_3_4s_sidebar(tmp_path):
    from oban_import.ui.options import DIALOGS

    found = run_in_window(tmp_path, SCRIPT, ROOT=ROOT)
    assert sorted(found) == sorted(d.idname for d in DIALOGS)
    cut = []
    for idname, sidebar in found.items():
        assert sidebar["width"] > 200, sidebar   # the default sidebar, not a squeezed one
        for label, (width, checkbox) in sidebar["labels"].items():
            if width > (0.40 if checkbox else 0.36) * sidebar["width"]:
                cut.append((idname, label, round(width)))
    assert not cut, cut
