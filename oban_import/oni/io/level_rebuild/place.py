"""The placed objects of a rebuilt level put into the level instance OniSplit's `-create:level`
built (docs/level.md 13): the rebuild writes them apart, in `<level>/placed/` (an OBOA of their
setups and the order stored), where OniSplit does not see them; `python -m oban_import place OUT
DIR/<level>` reads `OUT/ONLV<level>.oni` (the door leaves' setups alone), writes it back with
the placed setups among the leaves in the order stored (a door's leaves where its first leaf
was, a new door's last; onlv_file_bytes: its object quad map,
leaves, particles and corpses kept whole), and checks that each object quad map (ONOA) list's
quads carry that object's tag in `OUT/AKEV<level>.oni`. No bpy."""

import os
import re

from ....core.errors import ObanError
from ..container.container import OBOA_TAG
from ..container.library import open_library
from ..level.read import read_level
from ..objects.oboa import parse_oboa
from ..objects.read import empty_setup
from .oboa_xml import setups_of
from .onlv_file import onlv_file_bytes, stored_level

PLACED_FOLDER = "placed"
PLACED_FILE = "OBOA{}_placed.oni"   # the placed setups (onlv_file.placed_file_bytes)
ORDER_FILE = "{}_order.txt"         # a line per setup stored: 'placed <k>' (of PLACED_FILE) or 'leaf <name>'
LEAF_NAME = re.compile(r"door_-?\d+")   # -create:level's name of a door's leaf: door_<id> (second: id | 0x1000)
SECOND_LEAF = 0x1000


def order_text(entries: list) -> str:
    """ORDER_FILE's text of `entries`: an int (that placed setup) or a leaf's name."""
    return "".join(f"placed {entry}\n" if isinstance(entry, int) else f"leaf {entry}\n" for entry in entries)


def place(out: str, folder: str) -> str:
    """Writes the placed objects of the rebuild `folder` (DIR/<level>) into `out`/ONLV<level>.oni;
    what it did. ObanError naming the file and what is wrong, nothing written."""
    name = os.path.basename(os.path.normpath(folder))
    placed_path = os.path.join(folder, PLACED_FOLDER, PLACED_FILE.format(name))
    order_path = os.path.join(folder, PLACED_FOLDER, ORDER_FILE.format(name))
    onlv_path, akev_path = (os.path.join(out, f"{tag}{name}.oni") for tag in ("ONLV", "AKEV"))
    for path, what in ((placed_path, "the rebuild's placed objects"), (order_path, "their order"),
                       (onlv_path, "-create:level's level instance"), (akev_path, "-create:level's environment")):
        if not os.path.isfile(path):
            raise ObanError(path, f"not found ({what}; run -create:level OUT, then this step, on the level's folder)")
    with open_library(placed_path) as library:
        c = library.main
        arrays = c.with_data(OBOA_TAG)
        if len(arrays) != 1:
            raise ObanError(placed_path, f"holds {len(arrays)} object setup arrays (OBOA), not one")
        records = parse_oboa(c.instance(arrays[0], OBOA_TAG)[0], placed_path, c.label(arrays[0]))
        placed = list(zip(setups_of(c, arrays[0], records)[0], records))
    order = _order(order_path, len(placed))
    with open_library(onlv_path) as library:
        level = stored_level(library.main)
        used = [n for n, record in enumerate(level.records) if not empty_setup(record)]
        names = [level.records[n]["name"].split(b"\0", 1)[0].decode("latin-1") for n in used]
        others = [name for name in names if not LEAF_NAME.fullmatch(name)]
        if others:
            raise ObanError(onlv_path, f"holds {len(others)} setups that are no door leaf ('{others[0]}'): not the "
                                       "level instance -create:level builds of a rebuild (this step ran already?)")
        _check_object_quads(onlv_path, read_level(onlv_path, library))
        leaves, setups = dict(zip(used, names)), []
        for entry in order:
            if isinstance(entry, int):
                setups.append(placed[entry])
                continue
            found = [n for n, leaf in leaves.items() if _door(leaf) == _door(entry)]   # none: the door deleted
            setups += found
            for n in found:
                del leaves[n]
        data = onlv_file_bytes(level, setups + list(leaves))
    temporary = onlv_path + ".part"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, onlv_path)
    return (f"{onlv_path}: {len(placed)} placed objects written beside its {len(used)} door leaf setups "
            f"({len(data)} bytes)")


def _door(name: str):
    """The door id of a leaf's name (LEAF_NAME; None where the name is none)."""
    return int(name[5:]) & ~SECOND_LEAF if LEAF_NAME.fullmatch(name) else None


def _order(path: str, count: int) -> list:
    """ORDER_FILE's entries, each placed setup once; ObanError otherwise."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    entries = []
    for k, line in enumerate(lines, 1):
        kind, _, value = line.partition(" ")
        if kind == "placed" and value.isdigit():
            entries.append(int(value))
        elif kind == "leaf" and value:
            entries.append(value)
        else:
            raise ObanError(path, f"line {k}: '{line}' is neither 'placed <number>' nor 'leaf <name>'")
    numbers = sorted(entry for entry in entries if isinstance(entry, int))
    if numbers != list(range(count)):
        raise ObanError(path, f"names {len(numbers)} placed setups where the placed objects' file holds {count}: "
                              f"each once, 0 to {count - 1}")
    return entries


def _check_object_quads(path: str, level) -> None:
    """ObanError where an object quad map list names a quad that does not carry its tag."""
    if level.environment is None:
        raise ObanError(path, "its environment (AKEV) was not found beside it")
    tags = level.environment.object_tags
    for tag, quads in level.object_quads.items():
        wrong = quads[tags[quads] != tag]
        if wrong.size:
            raise ObanError(path, f"its object quad map lists quad {int(wrong[0])} for object tag "
                                  f"0x{tag & 0xFFFFFFFF:08x}, which that quad does not carry ({wrong.size} such)")
