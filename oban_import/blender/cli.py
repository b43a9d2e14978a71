"""The command line: `python -m oban_import`, `blender -P oban_import/__main__.py --`,
and `blender -c oban_import` all end here.

    oban_import IN... -o OUT.blend [options]        import
    oban_import IN... --list [--filter GLOB]        list (plain Python and numpy: no bpy)
    oban_import op2_art.prt -o OUT.blend [options]  Outpost 2 sprite animations (any .prt input)
    oban_import export IN.blend -o OUTDIR [options] export

Exit codes: 0 every file (object) done; 1 some failed (the others are still written);
2 usage error (bad option, no input, output equal to an input). bpy is imported only
where a scene is built, so that listing needs nothing of Blender.
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile

from ..errors import ObanError
from ..listing import format_table, objects_table, table
from ..oni.library import read_mesh_file, read_objects, read_texture_file
from ..oni.objects import at_origin
from ..oni.reader import object_kind, read_file
from ..oni.textures import FORMAT_NAMES
from ..options import EXPORT_OPTIONS, IMPORT_OPTIONS, SPRITE_OPTIONS, ExportSettings, Settings, SpriteSettings
from ..outpost2.listing import LIST_HEADER, list_rows
from ..outpost2.prt import read_prt


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def add_options(parser, options):
    """One flag per option that has one: a bool's flag turns it off."""
    for option in options:
        if not option.flag:
            continue
        if option.kind == "bool":
            action = "store_false" if option.flag.startswith("--no-") else argparse.BooleanOptionalAction
            parser.add_argument(option.flag, dest=option.name, action=action, default=option.default,
                                help=option.description)
            continue
        choices = option.cli_items or [item[0] for item in option.items] or None
        kind = type(option.default)
        if option.cli_lower:  # argparse converts, then checks the choice
            kind = lambda text: text.upper().replace("-", "_")  # noqa: E731
        shown = [_cli_spelling(option, c) for c in choices] if choices else None
        parser.add_argument(option.flag, dest=option.name, default=option.default, choices=choices, type=kind,
                            metavar="{" + ",".join(shown) + "}" if shown else None,
                            help=f"{option.description} (default {_cli_spelling(option, option.default)})")


def _cli_spelling(option, value):
    return str(value).lower().replace("_", "-") if option.cli_lower else value


def parser():
    p = _Parser(prog="oban_import", description="Import Oni object animations (OBAN) into a .blend file.")
    p.add_argument("inputs", nargs="+", metavar="IN",
                   help=".oban, .oni, level .dat or OniSplit .xml files (globs are expanded)")
    p.add_argument("-o", "--output", metavar="OUT.blend", help="the .blend to write (required unless --list)")
    p.add_argument("--list", action="store_true", help="print the OBANs each file holds; import nothing")
    add_options(p, IMPORT_OPTIONS)
    p.add_argument("--random-start-seed", dest="random_seed", type=int, default=-1, metavar="SEED",
                   help="with --playback ENGINE, RandomStart animations start at a frame drawn with SEED")
    return p


def main(argv):
    """Run the command line; returns the exit code."""
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if any(arg.lower().endswith(".prt") for arg in argv if not arg.startswith("-")):
        return sprites_main(argv)
    try:
        args = parser().parse_args(argv)
        args.use_random_start = args.random_seed >= 0
        paths = expand(args.inputs)
        settings = Settings.from_options(_checked(args))
        if not args.list:
            _check_output(args.output, paths)
    except UsageError as error:
        return _usage(parser(), error)
    if args.list:
        return _list(paths, args.name_filter, args.objects)
    return _import(paths, settings, args.output)


def _import(paths, settings, output):
    import bpy

    from .importer import import_files
    bpy.ops.wm.read_homefile(use_empty=True)
    result = import_files(bpy.context, paths, settings, progress=_Progress())
    for message in result.notes:
        print(f"note: {message}", file=sys.stderr)
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    for message in result.errors:
        print(f"error: {message}", file=sys.stderr)
    if result.imported:
        print(table([(os.path.basename(path), a) for path, a, _ in result.imported]))
    if result.placed:
        print(objects_table([(os.path.basename(path), p) for path, p, _ in result.placed]))
    if result.objects or result.images:
        save_atomically(output)
        print(f"wrote {output}: {len(result.imported)} animation(s), {len(result.placed)} placed object(s), "
              f"{len(result.images)} image(s) from {len(paths) - len(result.errors)} of {len(paths)} file(s)")
    else:
        print(f"oban_import: nothing imported; {output} not written", file=sys.stderr)
    return 1 if result.errors else 0


def sprites_parser():
    p = _Parser(prog="oban_import", description="Import Outpost 2 sprite animations (op2_art.prt) into a .blend file.")
    p.add_argument("inputs", nargs="+", metavar="IN.prt", help="op2_art.prt files, each with its .bmp beside it")
    p.add_argument("-o", "--output", metavar="OUT.blend", help="the .blend to write (required unless --list)")
    p.add_argument("--list", action="store_true", help="print each file's animations; import nothing")
    add_options(p, SPRITE_OPTIONS)
    return p


def sprites_main(argv):
    try:
        args = sprites_parser().parse_args(argv)
        paths = expand(args.inputs)
        if not all(path.lower().endswith(".prt") for path in paths):
            raise UsageError("Outpost 2 .prt files and Oni files cannot be imported in one run")
        if args.bmp_path and len(paths) > 1:
            raise UsageError("--bmp names the bitmaps of one .prt file, not of several")
        if not args.pixel_scale > 0:
            raise UsageError("--scale must be positive")
        try:
            settings = SpriteSettings.from_options(args)
        except ValueError as error:
            raise UsageError(f"--animations: {error}") from None
        if not args.list:
            _check_output(args.output, paths)
    except UsageError as error:
        return _usage(sprites_parser(), error)
    if args.list:
        return _list_sprites(paths)
    import bpy

    from .sprites import import_sprites
    bpy.ops.wm.read_homefile(use_empty=True)
    failed, imported = False, 0
    for path in paths:
        result = import_sprites(bpy.context, path, settings, progress=_Progress())
        for message in result.warnings:
            print(f"warning: {message}", file=sys.stderr)
        for message in result.errors:
            print(f"error: {message}", file=sys.stderr)
        failed |= bool(result.errors)
        imported += len(result.empties)
    if not imported:
        print(f"oban_import: nothing imported; {args.output} not written", file=sys.stderr)
        return 1
    save_atomically(args.output)
    print(f"wrote {args.output}: {imported} sprite animation(s) from {len(paths)} file(s)")
    return 1 if failed else 0


def _list_sprites(paths):
    rows, failed = [], False
    for path in paths:
        try:
            rows += [(os.path.basename(path),) + row for row in list_rows(read_prt(path))]
        except ObanError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
    print(format_table(("file",) + LIST_HEADER, rows, numeric=LIST_HEADER))
    return 1 if failed else 0


def export_parser():
    p = _Parser(prog="oban_import export",
                description="Write the animated objects of a .blend as OBAN files, one per object.")
    p.add_argument("blend", metavar="IN.blend")
    p.add_argument("-o", "--output", metavar="OUTDIR", required=True, help="folder for the files (made if needed)")
    p.add_argument("--objects", nargs="+", metavar="NAME", help="these objects (default: every animated one)")
    add_options(p, EXPORT_OPTIONS)
    return p


def export_main(argv):
    try:
        args = export_parser().parse_args(argv)
        if not os.path.isfile(args.blend):
            raise UsageError(f"{args.blend!r} is not a file")
        if not args.tolerance > 0:
            raise UsageError("--tolerance must be positive")
        settings = ExportSettings.from_options(_checked(args))
    except UsageError as error:
        return _usage(export_parser(), error)
    import bpy

    from .export import animated_objects, export_objects
    try:
        bpy.ops.wm.open_mainfile(filepath=args.blend)
    except RuntimeError as error:  # not a .blend, or one from a newer Blender
        print(f"error: {args.blend}: cannot be opened: {str(error).strip()}", file=sys.stderr)
        return 1
    missing = [name for name in args.objects or () if name not in bpy.data.objects]
    for name in missing:
        print(f"error: {args.blend}: no object named {name!r}", file=sys.stderr)
    if args.objects:
        objects = [bpy.data.objects[name] for name in args.objects if name not in missing]
    else:
        objects = animated_objects(bpy.context.scene.objects)
    os.makedirs(args.output, exist_ok=True)
    written, errors = export_objects(bpy.context, objects, args.output, settings)
    for w in written:
        for message in w.warnings:
            print(f"warning: {w.path}: '{w.name}': {message}", file=sys.stderr)
    for message in errors:
        print(f"error: {message}", file=sys.stderr)
    print(format_table(("file", "frames", "keys", "worst error"),
                       [(os.path.basename(w.path), w.frames, w.keys, f"{w.error:.2g}") for w in written],
                       numeric=("frames", "keys")))
    if not written and not errors and not missing:
        print(f"oban_import export: {args.blend} has no animated object", file=sys.stderr)
        return 1
    return 1 if errors or missing else 0


def _usage(parser, error):
    """Print a usage error the argparse way; exit code 2."""
    print(f"{parser.prog}: error: {error}\n{parser.format_usage()}", file=sys.stderr, end="")
    return 2


def expand(inputs):
    """Each input is a path, or a glob that must match something."""
    paths = []
    for item in inputs:
        if glob.has_magic(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise UsageError(f"no file matches {item!r}")
            paths += matches
        else:
            paths.append(item)
    return paths


def _checked(args):
    if args.axis_forward[-1] == args.axis_up[-1]:
        raise UsageError(f"--forward {args.axis_forward} and --up {args.axis_up} use the same axis")
    if not args.global_scale > 0:
        raise UsageError("--scale must be positive")
    return args


def _check_output(output, paths):
    if not output:
        raise UsageError("-o OUT.blend is required")
    if os.path.isdir(output):
        raise UsageError(f"output {output!r} is a directory")
    target = os.path.realpath(output)
    if any(os.path.realpath(path) == target for path in paths):
        raise UsageError(f"output {output!r} is also an input")


def _list(paths, name_glob, objects):
    """The OBANs of every file and, with `objects`, their placed objects, loose meshes
    and textures."""
    rows, placed, textures, failed = [], [], [], False
    for path in paths:
        name = os.path.basename(path)
        try:
            kind = object_kind(path) if objects else None
            if kind == "objects":
                placed += [(name, p) for p in read_objects(path).objects]
            elif kind == "mesh":
                placed.append((name, at_origin(read_mesh_file(path))))
            elif kind == "texture":
                textures.append((name, read_texture_file(path)))
            if kind not in ("mesh", "texture"):
                rows += [(name, a) for a in read_file(path, name_glob or None)]
        except ObanError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
    print(table(rows))
    if placed:
        print("\n" + objects_table(placed))
    if textures:
        print("\n" + format_table(("file", "texture", "width", "height", "format"),
                                  [(name, t.name, t.width, t.height, FORMAT_NAMES.get(t.format, t.format))
                                   for name, t in textures], numeric=("width", "height")))
    return 1 if failed else 0


class _Progress:
    """Prints the share done to stderr at most once per 10%."""

    def __init__(self):
        self.shown = 0

    def __call__(self, fraction):
        if fraction >= 1.0 or int(fraction * 10) > self.shown:
            self.shown = int(fraction * 10)
            print(f"importing: {fraction:4.0%}", file=sys.stderr)


def save_atomically(output):
    """Write the .blend in a temporary folder beside `output`, then rename it into place:
    an interrupted run never leaves a half-written output."""
    import bpy
    folder = tempfile.mkdtemp(prefix=".oban_import-", dir=os.path.dirname(os.path.abspath(output)))
    try:
        temporary = os.path.join(folder, os.path.basename(output))
        bpy.ops.wm.save_as_mainfile(filepath=temporary, check_existing=False, copy=True)
        os.replace(temporary, output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
