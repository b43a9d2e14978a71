"""The README says what the UI shows, word for word: each File menu entry, each dialog's
groups, and a row per option (its label, default and help), in the order the dialog draws
them; and the command line's help covers every mode with an example."""

import os
import subprocess
import sys

from paths import ROOT

from oban_import.ui import options

README = os.path.join(ROOT, "README.md")
DIALOGS = ((options.ONI_IMPORT, "Import"), (options.SPRITE_IMPORT, "Import"), (options.ONI_EXPORT, "Export"),
           (options.CHARACTER_EXPORT, "Export"), (options.LEVEL_PATCH, "Export"), (options.LEVEL_REBUILD, "Export"),
           (options.MESH_EXPORT, "Export"), (options.BODY_EXPORT, "Export"), (options.CUTSCENE_EXPORT, "Export"))


def shown(option):
    """The default as the dialog shows it: an enum's label, on/off, a number as typed."""
    if option.items:
        return next(label for value, label, _ in option.items if value == option.default)
    if option.kind == "bool":
        return "on" if option.default else "off"
    return "empty" if option.default == "" else f"{option.default:g}" if option.kind == "float" else str(option.default)


def expected(dialog, menu):
    """The README's lines for a dialog: where it is, its groups, its table."""
    groups = ", ".join(options.groups(dialog.options))
    lines = [f"**File > {menu} > {dialog.menu}** (button **{dialog.button}**; groups: {groups})", "",
             "| option | default | what it does |", "|---|---|---|"]
    lines += [f"| {o.label} | {shown(o)} | {o.description} |" for o in dialog.options]
    return "\n".join(lines)


def test_every_dialog_is_in_the_readme_word_for_word():
    readme = open(README, encoding="utf-8").read()
    missing = [expected(dialog, menu) for dialog, menu in DIALOGS if expected(dialog, menu) not in readme]
    assert not missing, "the README should hold, as they are:\n\n" + "\n\n".join(missing)


def test_the_command_lines_help_shows_each_mode_with_an_example():
    done = subprocess.run([sys.executable, "-m", "oban_import", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0
    for mode in ("-o OUT.blend", "op2_art.prt", "export IN.blend -o OUTDIR", "--list"):
        assert mode in done.stdout, mode
    examples = done.stdout[done.stdout.index("examples:"):]
    assert all(word in examples for word in (".dat -o", ".prt -o", "export ", "--list"))
    assert "(default )" not in done.stdout
    assert "leave the scene's frame rate as it is" in done.stdout   # a --no- flag says what it leaves
    for argv in (["x.prt", "--help"], ["export", "--help"]):
        done = subprocess.run([sys.executable, "-m", "oban_import", *argv], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0 and "example" in done.stdout and "(default )" not in done.stdout
