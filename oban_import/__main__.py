"""`python -m oban_import IN... -o OUT.blend` (with the bpy module; `--list` needs only
numpy), or, in a Blender binary with nothing installed: `blender -b --factory-startup
--python-exit-code 1 -P oban_import/__main__.py -- IN... -o OUT.blend`."""

import os
import sys

if not __package__:  # run as a script by `blender -P`: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "oban_import"

from .ui.cli import main  # noqa: E402


def run(argv):
    try:
        return main(argv)
    except ModuleNotFoundError as error:
        if error.name not in ("bpy", "mathutils", "bpy_extras"):
            raise
        sys.exit("oban_import: needs Blender's Python: run it with the bpy module "
                 "(pip install bpy) or inside Blender (blender -b -P oban_import/__main__.py -- ...)")


if __name__ == "__main__":
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(run(argv))
