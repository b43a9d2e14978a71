"""The command line: `python -m oban_import`, `blender -P oban_import/__main__.py --`,
and `blender -c oban_import` all end here.

Exit codes: 0 every file imported; 1 some file failed (the others are still written);
2 usage error (bad option, no input, output equal to an input).
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile

import bpy

from ..errors import ObanError
from ..listing import table
from ..reader import read_file
from .scene import Settings, import_files

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")
ROTATION_MODES = ("QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


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


def _settings(args):
    if args.forward[-1] == args.up[-1]:
        raise UsageError(f"--forward {args.forward} and --up {args.up} use the same axis")
    if not args.scale > 0:
        raise UsageError("--scale must be positive")
    from .operators import axes_matrix
    return Settings(global_scale=args.scale, axes=axes_matrix(args.forward, args.up),
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
