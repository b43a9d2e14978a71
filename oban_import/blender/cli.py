"""The command line: `python -m oban_import`, `blender -P oban_import/__main__.py --`,
and `blender -c oban_import` all end here.

    oban_import IN... -o OUT.blend [options]        import
    oban_import export IN.blend -o OUTDIR [options] export

Exit codes: 0 every file (object) done; 1 some failed (the others are still written);
2 usage error (bad option, no input, output equal to an input).
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile

import bpy

from ..axes import EULER_AXES
from ..errors import ObanError
from ..listing import format_table, table
from ..reader import read_file
from .scene import Settings, axes_matrix, import_files

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")
ROTATION_MODES = ("QUATERNION",) + tuple(EULER_AXES)


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parser():
    p = _Parser(prog="oban_import", description="Import Oni object animations (OBAN) into a .blend file.")
    p.add_argument("inputs", nargs="+", metavar="IN", help=".oban, .oni, level .dat or OniSplit .xml files (globs are expanded)")
    p.add_argument("-o", "--output", metavar="OUT.blend", help="the .blend to write (required unless --list)")
    p.add_argument("--list", action="store_true", help="print the OBANs each file holds; import nothing")
    p.add_argument("--filter", metavar="GLOB", default="", help="only instances whose name matches, e.g. '*door*'")
    p.add_argument("--scale", type=float, default=1.0, help="Blender units per Oni unit (default 1.0)")
    p.add_argument("--forward", choices=AXES, default="-Z", help="Oni axis that points forward (default -Z)")
    p.add_argument("--up", choices=AXES, default="Y", help="Oni axis that points up (default Y)")
    p.add_argument("--frame-start", type=int, default=1, help="scene frame of OBAN frame 0 (default 1)")
    p.add_argument("--rotation-mode", choices=ROTATION_MODES, default="QUATERNION")
    p.add_argument("--no-scene-fps", action="store_true", help="leave the scene's frame rate (default: 60 fps)")
    p.add_argument("--no-scene-duration", action="store_true", help="leave the scene's frame range")
    p.add_argument("--target", choices=("EMPTY", "CAMERA"), default="EMPTY",
                   help="make an Empty (default) or a Camera for each animation")
    p.add_argument("--playback", choices=("FRAMES", "ENGINE"), default="FRAMES",
                   help="FRAMES: keys for 0 .. frames-1 (default); ENGINE: loops repeat as in the game")
    p.add_argument("--random-start-seed", type=int, default=-1, metavar="SEED",
                   help="with --playback ENGINE, RandomStart animations start at a frame drawn with SEED")
    return p


def main(argv):
    """Run the command line; returns the exit code."""
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    try:
        args = parser().parse_args(argv)
        paths = expand(args.inputs)
        settings = _settings(args)
        if not args.list:
            _check_output(args.output, paths)
    except UsageError as error:
        print(f"oban_import: error: {error}\n{parser().format_usage()}", file=sys.stderr, end="")
        return 2
    if args.list:
        return _list(paths, args.filter)
    bpy.ops.wm.read_homefile(use_empty=True)
    result = import_files(bpy.context, paths, settings, progress=_Progress())
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    for message in result.errors:
        print(f"error: {message}", file=sys.stderr)
    if result.objects:
        print(table([(os.path.basename(path), a) for path, a, _ in result.imported]))
        save_atomically(args.output)
        print(f"wrote {args.output}: {len(result.objects)} animation(s) from "
              f"{len(paths) - len(result.errors)} of {len(paths)} file(s)")
    else:
        print(f"oban_import: nothing imported; {args.output} not written", file=sys.stderr)
    return 1 if result.errors else 0


def export_parser():
    p = _Parser(prog="oban_import export",
                description="Write the animated objects of a .blend as OBAN files, one per object.")
    p.add_argument("blend", metavar="IN.blend")
    p.add_argument("-o", "--output", metavar="OUTDIR", required=True, help="folder for the files (made if needed)")
    p.add_argument("--objects", nargs="+", metavar="NAME", help="these objects (default: every animated one)")
    p.add_argument("--format", choices=("oni", "xml", "raw"), default="oni")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest relative error on any frame's matrix (default 1e-4)")
    p.add_argument("--scale", type=float, default=1.0, help="Blender units per Oni unit, as imported (default 1.0)")
    p.add_argument("--forward", choices=AXES, default="-Z")
    p.add_argument("--up", choices=AXES, default="Y")
    return p


def export_main(argv):
    from .export import ExportSettings, animated_objects, export_objects
    try:
        args = export_parser().parse_args(argv)
        if not os.path.isfile(args.blend):
            raise UsageError(f"{args.blend!r} is not a file")
        if not args.tolerance > 0:
            raise UsageError("--tolerance must be positive")
        settings = ExportSettings(global_scale=args.scale, axes=_axes(args), format=args.format,
                                  tolerance=args.tolerance)
    except UsageError as error:
        print(f"oban_import export: error: {error}\n{export_parser().format_usage()}", file=sys.stderr, end="")
        return 2
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


def _axes(args):
    if args.forward[-1] == args.up[-1]:
        raise UsageError(f"--forward {args.forward} and --up {args.up} use the same axis")
    if not args.scale > 0:
        raise UsageError("--scale must be positive")
    return axes_matrix(args.forward, args.up)


def _settings(args):
    return Settings(global_scale=args.scale, axes=_axes(args),
                    frame_start=args.frame_start, rotation_mode=args.rotation_mode,
                    update_scene_fps=not args.no_scene_fps,
                    update_scene_duration=not args.no_scene_duration, name_glob=args.filter,
                    target=args.target, playback=args.playback, random_start_seed=args.random_start_seed)


def _check_output(output, paths):
    if not output:
        raise UsageError("-o OUT.blend is required")
    if os.path.isdir(output):
        raise UsageError(f"output {output!r} is a directory")
    target = os.path.realpath(output)
    if any(os.path.realpath(path) == target for path in paths):
        raise UsageError(f"output {output!r} is also an input")


def _list(paths, name_glob):
    rows, failed = [], False
    for path in paths:
        try:
            rows += [(os.path.basename(path), a) for a in read_file(path, name_glob or None)]
        except ObanError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
    print(table(rows))
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
    folder = tempfile.mkdtemp(prefix=".oban_import-", dir=os.path.dirname(os.path.abspath(output)))
    try:
        temporary = os.path.join(folder, os.path.basename(output))
        bpy.ops.wm.save_as_mainfile(filepath=temporary, check_existing=False, copy=True)
        os.replace(temporary, output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
