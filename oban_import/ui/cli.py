"""The command line: `python -m oban_import`, `blender -P oban_import/__main__.py --`, and
`blender -c oban_import` all end here.

Exit codes: 0 every file (object) done; 1 some failed (the others are still written);
2 usage error (bad option, no input, an output that cannot be written). bpy is imported
only where a scene is built, so that listing needs nothing of Blender.
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile

from ..core.errors import ObanError
from ..oni.cutscene import list_cutscenes as list_functions
from ..oni.io.characters.model import Character
from ..oni.io.characters.read import body_file, characters_beside
from ..oni.io.container.container import level_of_raw_data
from ..oni.io.level.model import LevelContents
from ..oni.io.level_rebuild.place import place
from ..oni.io.oban.read import read_file
from ..oni.io.oban.record import Animation
from ..oni.io.objects.model import PlacedObject
from ..oni.io.objects.textures import FORMAT_NAMES
from ..oni.io.trams.tram import Tram
from ..oni.plan import KINDS, Choices, bring
from ..outpost2.io.bmp import prt_of_bitmaps
from ..outpost2.io.prt import read_prt
from .exports import BY_FORMAT, EXPORTS
from .listing import (SPRITE_HEADER, characters_table, doors_table, environment_table, format_table, furniture_table,
                      object_lists_table, objects_table, sprite_rows, table, trams_table)
from .options import (CLI_DESPITE_EDITS, IMPORT_OPTIONS, SPRITE_OPTIONS, TRAM_FORMATS, OniImportSettings,
                      SpriteImportSettings, parse_ranges)

PROG = "oban_import"
USAGE = f"""{PROG} IN... -o OUT.blend [options]
       {PROG} op2_art.prt... -o OUT.blend [options]
       {PROG} export IN.blend -o OUTDIR [options]
       {PROG} place OUT DIR/LEVEL
       {PROG} IN... --list"""
MODES = f"""modes:
  IN... -o OUT.blend            Oni: OBANs (.oban, .oni, OniSplit .xml), levels (.dat with their
                                .raw), placed objects (OBOA), loose meshes (M3GM) and textures (TXMP)
  op2_art.prt... -o OUT.blend   Outpost 2 sprite animations (every input a .prt, its .bmp beside it)
  export IN.blend -o OUTDIR     a .blend's animated objects back to OBAN files, and the actions
                                of its character armatures to TRAM files; --format level-patch:
                                its imported levels' shading, flags and textures, in place;
                                --format level: each imported level as the files OniSplit's
                                -create:level rebuilds it from, a folder per level; --format mesh:
                                its mesh objects as M3GM files with their textures' TXMP files;
                                --format body: its character armatures' bodies (TRBS, TRMA, TXMPs,
                                ONCC)
  place OUT DIR/LEVEL           a rebuilt level's placed objects into the level instance OniSplit's
                                -create:level wrote to OUT (run before -import:nosep; no Blender needed)
  IN... --list                  what any mix of files holds, importing nothing (no Blender needed)

examples:
  {PROG} level9_Final.dat -o level9.blend --keys file
  {PROG} op2_art.prt -o sprites.blend --animations 0-40
  {PROG} export level9.blend -o oban/ --format xml
  {PROG} export level9.blend -o rebuild/ --format level
  {PROG} export level9.blend -o meshes/ --format mesh --objects object03
  {PROG} export char0.blend -o bodies/ --format body
  {PROG} place OUT rebuild/level9
  {PROG} examples/* --list

`{PROG} IN.prt --help` and `{PROG} export --help` list their own options. A missing
folder of an output is made. Exit codes: 0 all done, 1 some file or object failed (the rest
is written), 2 usage error."""
LEVELS = {"INFO": "note", "WARNING": "warning", "ERROR": "error"}


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def add_options(parser, options):
    """One flag per option that has one (a bool's --no-... flag turns it off; any other bool
    flag comes with its --no- twin); the others keep their defaults. Returns the parser."""
    for option in options:
        if not option.flag:
            parser.set_defaults(**{option.name: option.default})
        elif option.kind == "bool":
            negative = option.flag.startswith("--no-")
            parser.add_argument(option.flag, dest=option.name, default=option.default,
                                action="store_false" if negative else argparse.BooleanOptionalAction,
                                help=option.off if negative else option.description)
        else:
            choices = option.cli_items or [item[0] for item in option.items] or None
            kind = type(option.default)
            if option.cli_lower:  # argparse converts, then checks the choice
                kind = lambda text: text.upper().replace("-", "_")  # noqa: E731
            shown = [_cli_spelling(option, c) for c in choices] if choices else None
            default = f" (default {_cli_spelling(option, option.default)})" if option.default != "" else ""
            metavar = "{" + ",".join(shown) + "}" if shown else option.flag.lstrip("-").upper().replace("-", "_")
            parser.add_argument(option.flag, dest=option.name, default=option.default, choices=choices, type=kind,
                                metavar=metavar, help=option.description + default)
    return parser


def _cli_spelling(option, value):
    return str(value).lower().replace("_", "-") if option.cli_lower else value


def parser():
    p = _Parser(prog=PROG, usage=USAGE, epilog=MODES,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Import Oni's object animations, levels and their objects, or Outpost 2's sprite "
                            "animations, into a .blend file; or write animated objects back to Oni.")
    p.add_argument("inputs", nargs="+", metavar="IN", help="input files (globs are expanded)")
    p.add_argument("-o", "--output", metavar="OUT.blend", help="the .blend to write (required unless --list)")
    p.add_argument("--list", action="store_true", help="print what each file holds; import nothing")
    return add_options(p, IMPORT_OPTIONS)


def main(argv):
    """Run the command line; returns the exit code."""
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if argv[:1] == ["place"]:
        return place_main(argv[1:])
    if "--list" not in argv and any(arg.lower().endswith(".prt") for arg in argv if not arg.startswith("-")):
        return sprites_main(argv)
    try:
        args = parser().parse_args(argv)
        paths = expand(args.inputs)
        settings = OniImportSettings.from_options(_checked(args))
        if not args.list:
            _check_output(args.output, paths)
    except UsageError as error:
        return _usage(parser(), error)
    if args.list and (args.scripts or all(path.lower().endswith(".bsl") for path in paths)):
        return list_cutscenes(paths, args.scripts)
    if args.list:
        return list_files(paths, args.name_filter, args.objects)
    if args.cutscene:
        return _import_cutscene(paths, settings, args.output)
    return _import(paths, settings, args.output)


def list_cutscenes(paths, scripts):
    """Each function of the scripts (`scripts`, or the .bsl files given) that moves the camera or
    a character: its length in ticks, what it plays, what is missing in the level given."""
    levels = [path for path in paths if not path.lower().endswith(".bsl")]
    if len(levels) > 1:
        return _usage(parser(), UsageError("--list of scripts plays them in one level at most"))
    sources = [scripts] if scripts else [path for path in paths if path.lower().endswith(".bsl")]
    failed = False
    for source in sources:
        try:
            rows = list_functions(levels[0] if levels else None, source)
        except ObanError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
            continue
        print(format_table(("function", "ticks", "plays", "missing", "error"), rows, numeric=("ticks",)))
    return 1 if failed else 0


def _import_cutscene(paths, settings, output):
    if len(paths) != 1 or not paths[0].lower().endswith(".dat"):
        return _usage(parser(), UsageError("--cutscene plays in one level: give its .dat alone"))
    import bpy

    from ..oni.blender.cutscene.build import import_cutscene
    bpy.ops.wm.read_homefile(use_empty=True)
    report = import_cutscene(bpy.context, paths[0], settings.cutscene, settings, settings.scripts or None,
                             {"": settings.character_class}, _Progress())
    print_messages(report)
    return _save(report, output)


def _import(paths, settings, output):
    import bpy

    from ..oni.blender.importer import import_files
    bpy.ops.wm.read_homefile(use_empty=True)
    report = import_files(bpy.context, paths, settings, progress=_Progress())
    print_messages(report)
    animations = report.items(Animation)
    if animations:
        print(table([(os.path.basename(path), a) for path, a in animations]))
    placed = report.items(PlacedObject)
    if placed:
        print(objects_table([(os.path.basename(path), p) for path, p in placed]))
    for kind, tabled in ((Character, characters_table), (Tram, trams_table)):
        rows = report.items(kind)
        if rows:
            print(tabled([(os.path.basename(path), item) for path, item in rows]))
    levels = list({id(item): (os.path.basename(path), item) for path, item in report.items(LevelContents)}.values())
    for text in level_tables(levels):
        print(text)
    return _save(report, output)


def level_tables(rows) -> list:
    """The tables of levels' parts, (file name, LevelContents) each: those with something to show."""
    environments = [(file, contents) for file, contents in rows if contents.environment is not None]
    return [tabled(chosen) for tabled, chosen in (
        (environment_table, environments), (object_lists_table, [r for r in rows if r[1].object_lists]),
        (doors_table, [r for r in rows if r[1].doors]), (furniture_table, [r for r in rows if r[1].furniture]))
        if chosen]


def _save(report, output):
    """Write the .blend when the report made something; the exit code."""
    if not report.made:
        print(f"{PROG}: nothing imported; {output} not written", file=sys.stderr)
        return 1
    save_atomically(output)
    print(f"wrote {output}: {report.summary('imported')}")
    return 1 if report.errors else 0


def print_messages(report):
    for level, text in report.messages():
        print(f"{LEVELS[level]}: {text}", file=sys.stderr)


def sprites_parser():
    p = _Parser(prog=PROG, description="Import Outpost 2 sprite animations (op2_art.prt) into a .blend file.",
                epilog=f"example: {PROG} op2_art.prt -o sprites.blend --animations 0-40,500")
    p.add_argument("inputs", nargs="+", metavar="IN.prt", help="op2_art.prt files, each with its .bmp beside it")
    p.add_argument("-o", "--output", metavar="OUT.blend", help="the .blend to write")
    return add_options(p, SPRITE_OPTIONS)


def sprites_main(argv):
    try:
        args = sprites_parser().parse_args(argv)
        paths = expand(args.inputs)
        if not all(path.lower().endswith(".prt") for path in paths):
            raise UsageError("Outpost 2 .prt files and Oni files are imported in separate runs")
        if args.bmp_path and len(paths) > 1:
            raise UsageError("--bmp names the bitmaps of one .prt file, not of several")
        if not args.global_scale > 0:
            raise UsageError("--scale must be positive")
        try:
            parse_ranges(args.animations)
        except ValueError as error:
            raise UsageError(f"--animations: {error}") from None
        _check_output(args.output, paths)
    except UsageError as error:
        return _usage(sprites_parser(), error)
    import bpy

    from ..core.report import Report
    from ..outpost2.blender.sprites import import_sprites
    bpy.ops.wm.read_homefile(use_empty=True)
    settings = SpriteImportSettings.from_options(args)
    report = Report(files=len(paths))
    for path in paths:
        report.add(import_sprites(bpy.context, path, settings, progress=_Progress()))
    print_messages(report)
    return _save(report, args.output)


def place_parser():
    p = _Parser(prog=f"{PROG} place", description="Write the placed objects of a level rebuilt by 'export --format "
                "level' (DIR/LEVEL/placed/) into the level instance OniSplit's -create:level wrote to OUT "
                "(OUT/ONLV<level>.oni), its object quad map checked; run it before -import:nosep.",
                epilog=f"example: {PROG} place OUT rebuild/level9")
    p.add_argument("out", metavar="OUT", help="the folder -create:level wrote the level's files to")
    p.add_argument("level", metavar="DIR/LEVEL", help="the level's folder the rebuild export wrote")
    return p


def place_main(argv):
    try:
        args = place_parser().parse_args(argv)
    except UsageError as error:
        return _usage(place_parser(), error)
    try:
        print(place(args.out, args.level))
    except ObanError as error:
        print(f"{PROG} place: {error}", file=sys.stderr)
        return 1
    return 0


def export_parser():
    p = _Parser(prog=f"{PROG} export", description="Write the animated objects of a .blend as OBAN files, one per "
                                                   "object, and the actions of its character armatures as TRAM "
                                                   "files, one per action (--format raw: TRAMs as .oni); --format "
                                                   "mesh: its mesh objects as M3GM files with their textures' TXMPs; "
                                                   "--format body: its character armatures' bodies as TRBS, TRMA, "
                                                   "TXMP and ONCC files.",
                epilog=f"example: {PROG} export level9.blend -o oban/ --format xml --objects door")
    p.add_argument("blend", metavar="IN.blend")
    p.add_argument("-o", "--output", metavar="OUTDIR", required=True, help="folder for the files (made if needed)")
    p.add_argument("--objects", nargs="+", metavar="NAME", help="these objects or armatures (default: every "
                                                                "animated object and character armature; with "
                                                                "--format mesh, every mesh object; with --format "
                                                                "body, every character armature)")
    flags = {}   # each flag once, the first option that has it (the OBAN export's, then the command line's own)
    for option in [*EXPORTS[0].dialog.options, CLI_DESPITE_EDITS, *(o for e in EXPORTS[1:] for o in e.dialog.options)]:
        flags.setdefault(option.flag, option)
    return add_options(p, [option for flag, option in flags.items() if flag])


def export_main(argv):
    try:
        args = export_parser().parse_args(argv)
        if not os.path.isfile(args.blend):
            raise UsageError(f"{args.blend!r} is not a file")
        if not args.tolerance > 0:
            raise UsageError("--tolerance must be positive")
        _checked(args)
        args.character_format = args.file_format if args.file_format in [f[0] for f in TRAM_FORMATS] else "oni"
        args.use_selection = False
        _make_folder(args.output)
    except UsageError as error:
        return _usage(export_parser(), error)
    import bpy

    try:
        bpy.ops.wm.open_mainfile(filepath=args.blend)
    except RuntimeError as error:  # not a .blend, or one from a newer Blender
        print(f"error: {args.blend}: cannot be opened: {str(error).strip()}", file=sys.stderr)
        return 1
    missing = [name for name in args.objects or () if name not in bpy.data.objects]
    for name in missing:
        print(f"error: {args.blend}: no object named {name!r}", file=sys.stderr)
    chosen = [bpy.data.objects[name] for name in args.objects or () if name not in missing]
    candidates = chosen if args.objects else bpy.context.scene.objects
    if args.file_format in BY_FORMAT:
        return _export_files(bpy.context, args, BY_FORMAT[args.file_format], candidates, missing)
    oban, tram = EXPORTS[:2]   # the file formats: animated objects as OBANs, character armatures' actions as TRAMs
    armatures = tram.function("chooser")(candidates)
    objects = [obj for obj in chosen if obj not in armatures] if args.objects else oban.function("chooser")(candidates)
    reports = [(export, export.run(bpy.context, found, args.output, export.settings.from_options(args)))
               for export, found in ((oban, objects), (tram, armatures)) if found]
    for export, report in reports:
        print_messages(report)
        if report.made:
            print(export.table(report.made))
    if not reports and not missing:
        print(f"{PROG} export: {args.blend} has no animated object or character armature", file=sys.stderr)
        return 1
    return 1 if missing or any(report.errors for _, report in reports) else 0


def _export_files(context, args, export, candidates, missing):
    """An export (EXPORTS) of what it chooses among `candidates`: its messages, then its files
    as a table."""
    chosen = export.function("chooser")(candidates)
    if not chosen:
        print(f"{PROG} export: {args.blend} has no {export.what}" + (" of those named" if args.objects else ""),
              file=sys.stderr)
        return 1
    report = export.run(context, chosen, args.output, export.settings.from_options(args))
    print_messages(report)
    if report.made:
        print(export.table(report.made))
    return 1 if missing or report.errors else 0


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
    """A .blend that can be written: not a folder, not an input; its folder made if missing."""
    if not output:
        raise UsageError("-o OUT.blend is required")
    if os.path.isdir(output):
        raise UsageError(f"output {output!r} is a directory")
    target = os.path.realpath(output)
    if any(os.path.realpath(path) == target for path in paths):
        raise UsageError(f"output {output!r} is also an input")
    _make_folder(os.path.dirname(os.path.abspath(output)))


def _make_folder(folder):
    try:
        os.makedirs(folder, exist_ok=True)
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot make the folder {folder!r}: {getattr(error, 'strerror', None) or error}") from None


def list_files(paths, name_glob, objects):
    """What every file holds, without Blender: OBANs; with `objects`, placed objects, loose
    meshes and textures; characters and their animations (TRAMs); Outpost 2's .prt files. A
    level's .raw is listed with its .dat; a file that cannot be read is named on stderr."""
    tables = {name: [] for name in ("obans", "placed", "textures", "characters", "trams", "bodies", "levels",
                                    "sprites")}
    beside = {}   # folder -> the characters in it (read.characters_beside)
    failed = False
    for path in paths:
        try:
            _list_file(path, name_glob, objects, tables, beside)
        except ObanError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
    printed = [table(tables["obans"]) if tables["obans"] else "",
               objects_table(tables["placed"]) if tables["placed"] else "",
               format_table(("file", "texture", "width", "height", "format"), tables["textures"],
                            numeric=("width", "height")) if tables["textures"] else "",
               characters_table(tables["characters"]) if tables["characters"] else "",
               trams_table(tables["trams"], tables["bodies"]) if tables["trams"] else "",
               *level_tables(tables["levels"]),
               format_table(("file",) + SPRITE_HEADER, tables["sprites"], numeric=SPRITE_HEADER)
               if tables["sprites"] else ""]
    if any(printed):
        print("\n\n".join(text for text in printed if text))
    return 1 if failed else 0


def _list_file(path, name_glob, objects, tables, beside):
    name = os.path.basename(path)
    if path.lower().endswith(".prt"):
        tables["sprites"] += [(name,) + row for row in sprite_rows(read_prt(path))]
        return
    owner = level_of_raw_data(path) or prt_of_bitmaps(path)
    if owner:
        print(f"note: {path}: read with {os.path.basename(owner)}, whose data it holds", file=sys.stderr)
        return
    brought = bring(path, Choices(objects=objects, name_filter=name_glob or ""))
    for lister in dict.fromkeys(LISTERS[kind] for kind in LISTERS if kind in brought.kinds):
        if lister is not None:
            lister(name, path, brought, tables, name_glob, beside)


def _level_rows(name, path, brought, tables, name_glob, beside):
    """A level's, an OBOA's or a loose mesh's placed objects; a level's parts."""
    if brought.level is not None:
        tables["placed"] += [(name, p) for p in brought.level.objects]
    if brought.level_parts is not None:
        tables["levels"].append((name, brought.level_parts))


def _character_rows(name, path, brought, tables, name_glob, beside):
    """The characters, their chosen TRAMs and the file's loose ones, with the body each goes onto."""
    tables["characters"] += [(name, character) for character, _ in brought.characters]
    own = {tram.name: tram for _, chosen in brought.characters for tram in chosen}
    loose = {tram.name: tram for tram in brought.trams}   # none a character's (plan._trams)
    tables["trams"] += [(name, tram) for tram in (own | loose).values()]
    tables["bodies"] += [name] * len(own) + _body_names(list(loose), path, beside)


def _oban_rows(name, path, brought, tables, name_glob, beside):
    tables["obans"] += [(name, a) for a in read_file(path, name_glob or None)]


def _texture_rows(name, path, brought, tables, name_glob, beside):
    texture = brought.texture
    tables["textures"].append((name, texture.name, texture.width, texture.height,
                               FORMAT_NAMES.get(texture.format, texture.format)))


_SHOWN_BY = {_level_rows: ("objects", "level", "mesh"), _character_rows: ("characters", "bodies", "animations"),
             _oban_rows: ("obans",), _texture_rows: ("texture",)}
# how --list shows each kind of plan.KINDS, in its order (as importer.BUILDERS): classes and character
# parts (None) are listed with the level and the character that link them
LISTERS = {kind.name: next((rows for rows, names in _SHOWN_BY.items() if kind.name in names), None)
           for kind in KINDS}


def _body_names(tram_names, path, beside):
    """The file name of the character each loose TRAM of `path` goes onto with no armature
    selected (oni.blender.characters' rule), or 'none beside'; the characters beside it that
    cannot be read named once, when its folder is first read (`beside`: read.characters_beside's)."""
    if not tram_names:
        return []
    known = len(beside)
    found = characters_beside(path, beside)
    for error in found.unread if len(beside) > known else ():
        print(f"warning: {error} (whose animations it lists is not known)", file=sys.stderr)
    bodies = [body_file(name, found)[0] for name in tram_names]
    return [os.path.basename(body) if body else "none beside" for body in bodies]


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
