"""Plain-text tables for the command line's --list and the demo (no bpy)."""


import numpy as np

TRAM_EVENTS = ("attacks", "self_damage", "motion_blur", "shortcuts", "throw", "footsteps", "particles", "sounds",
               "extents")

from ..oni.engine.environment import quad_groups
from ..oni.io.characters.body_write import ONCC_LINK_TAGS
from ..oni.io.characters.model import Body, ClassLinks, TextureList
from ..oni.io.level.model import DOOR_FLAGS, QUAD_FLAGS
from ..oni.io.level.properties import event_text, flag_counts, flag_names
from ..oni.io.objects.model import Mesh
from ..oni.io.objects.textures import FORMAT_NAMES
from ..oni.io.trams.tram import tram_flag_text
from ..outpost2.engine.draw import animation_boxes, subframe_owners
from ..outpost2.io.prt import PrtFile


def format_table(header: tuple, rows: list, numeric: tuple = ()) -> str:
    """Aligned columns; the columns named in `numeric` are right-aligned."""
    lines = [tuple(header)] + [tuple(map(str, row)) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {header.index(name) for name in numeric}
    return "\n".join(
        "  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                  for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
        for line in lines)


def table(rows: list) -> str:
    """rows: (file name, Animation) pairs -> one line per animation."""
    return format_table(("file", "name", "frames", "keys", "flags"),
                        [(file, a.name, a.frames, len(a.keys), a.flag_text()) for file, a in rows],
                        numeric=("frames", "keys"))


def mesh_file_contents(item) -> str:
    """What a file of the mesh export holds: a mesh's points and triangles, a texture's size and format."""
    if isinstance(item, Mesh):
        return f"{len(item.points)} points, {len(item.triangles)} triangles"
    return f"{item.width} x {item.height} {FORMAT_NAMES.get(item.format, item.format)}"


def body_file_contents(item) -> str:
    """What a file of the body export holds: a body's parts and triangles, a texture list's
    textures, a class's body and textures, a texture's size and format."""
    if isinstance(item, Body):
        meshes = [part.mesh for part in item.parts if part.mesh is not None]
        return f"{len(item.parts)} parts, {len(meshes)} meshes, {sum(len(m.triangles) for m in meshes)} triangles"
    if isinstance(item, TextureList):
        return f"{len(item.textures)} parts, {len(set(filter(None, item.textures)))} textures"
    if isinstance(item, ClassLinks):
        return "class of " + ", ".join(name for at, name in item.links.items() if ONCC_LINK_TAGS[at] in ("TRBS", "TRMA"))
    return mesh_file_contents(item)


def texture_formats(meshes) -> str:
    """The texture formats of these meshes, each once ('-' for a mesh without one)."""
    found = [FORMAT_NAMES.get(m.texture.format, str(m.texture.format)) if m.texture else "-" for m in meshes]
    return " ".join(dict.fromkeys(found)) or "-"


def objects_table(rows: list) -> str:
    """rows: (file name, PlacedObject) pairs -> one line per object: its meshes, triangles,
    texture formats and animation."""
    return format_table(("file", "object", "meshes", "triangles", "textures", "animation"),
                        [(file, p.name, len(p.meshes), sum(len(m.triangles) for m in p.meshes),
                          texture_formats(p.meshes),
                          p.animation.name if p.animation else "-") for file, p in rows],
                        numeric=("meshes", "triangles"))


def characters_table(rows: list) -> str:
    """rows: (file name, Character) pairs -> one line per character: its parts, triangles,
    texture formats and animations."""
    def meshes(character):
        return [part.mesh for part in character.body.parts if part.mesh is not None]
    return format_table(("file", "character", "body", "parts", "triangles", "textures", "animations"),
                        [(file, c.name, c.body.name, len(c.body.parts), sum(len(m.triangles) for m in meshes(c)),
                          texture_formats(meshes(c)), len(c.animations)) for file, c in rows],
                        numeric=("parts", "triangles", "animations"))


def trams_table(rows: list, bodies: list | None = None) -> str:
    """rows: (file name, Tram) pairs -> one line per animation: frames, key size, type, from
    and to state, flags, and how many of each event it holds; with `bodies` (one per row), the
    character file each goes onto."""
    def events(tram):
        counts = [(len(getattr(tram, kind)), kind.replace("_", " ")) for kind in TRAM_EVENTS]
        return ", ".join(f"{count} {kind}" for count, kind in counts if count) or "-"
    header = ("file", "animation", "frames", "key size", "type", "from", "to", "flags", "events")
    lines = [(file, t.name, t.frames, t.key_size, t.type, t.from_state, t.to_state, tram_flag_text(t.flags), events(t))
             for file, t in rows]
    if bodies is not None:
        header, lines = header + ("body",), [line + (body,) for line, body in zip(lines, bodies)]
    return format_table(header, lines, numeric=("frames", "key size", "type", "from", "to"))


def environment_table(rows: list) -> str:
    """rows: (file name, LevelContents with an environment) -> one line per environment: its
    quads, those the game draws, the markers, the doors' gunk, its rooms (those whose floor its
    BSP gives), its textures (those found), and how many quads carry each flag."""
    lines = []
    for file, contents in rows:
        env = contents.environment
        groups = quad_groups(env, contents)
        counted = [f"{name} {count}" for name, count in flag_counts(env.flags, QUAD_FLAGS).items() if count]
        lines.append((file, env.name, len(env.flags), len(groups.drawn), len(groups.markers),
                      sum(map(len, groups.door_gunk.values())) + len(groups.door_frames),
                      f"{int((env.room_floor_counts > 0).sum())}/{len(env.rooms)}",
                      f"{sum(t is not None for t in env.textures)}/{len(env.textures)}", ", ".join(counted) or "-"))
    return format_table(("file", "environment", "quads", "drawn", "markers", "door gunk", "rooms", "textures",
                         "flags"), lines, numeric=("quads", "drawn", "markers", "door gunk"))


def object_lists_table(rows: list) -> str:
    """rows: (file name, LevelContents) -> one line per object type of its lists: how many."""
    lines = []
    for file, contents in rows:
        for objects in contents.object_lists:
            types, counts = np.unique(objects.types, return_counts=True)
            lines += [(file, objects.name, kind, count) for kind, count in zip(types.tolist(), counts.tolist())]
    return format_table(("file", "list", "type", "objects"), lines, numeric=("objects",))


def doors_table(rows: list) -> str:
    """rows: (file name, LevelContents) -> one line per door: its ids, class, flags, leaves
    (from object setups or placed by Bungie's rule), textures and events."""
    return format_table(
        ("file", "door", "door id", "key", "class", "flags", "leaves", "textures", "events"),
        [(file, door.id, door.door_id, door.key_id, door.class_name or "-", flag_names(door.door_flags, DOOR_FLAGS),
          f"{door.leaf_count} ({sum(s is not None for s in door.setups)} set up)",
          " ".join(name for name in door.texture_names if name) or "-",
          "; ".join(event_text(e) for e in door.events) or "-")
         for file, contents in rows for door in contents.doors],
        numeric=("door", "door id", "key"))


def furniture_table(rows: list) -> str:
    """rows: (file name, LevelContents) -> one line per piece of furniture."""
    return format_table(("file", "furniture", "class", "meshes", "particle"),
                        [(file, piece.id, piece.class_name,
                          len(piece.geometry.elements) if piece.geometry is not None else "-", piece.particle or "-")
                         for file, contents in rows for piece in contents.furniture],
                        numeric=("furniture", "meshes"))


SPRITE_HEADER = ("index", "frames", "subframes", "bitmaps", "left", "top", "right", "bottom")


def sprite_rows(prt: PrtFile) -> list:
    """`--list` of an op2_art.prt (docs/outpost2.md 1.3): one row per animation: (index,
    frames, subframes, distinct bitmaps, left, top, right, bottom), its frames' bounding box
    (draw.animation_boxes)."""
    count = len(prt.animations)
    per_anim = np.array([len(a.frames) for a in prt.animations], np.int64)
    owner, subs = subframe_owners(prt)
    sub_counts = np.bincount(owner, minlength=count)
    pairs = np.unique(owner * (1 << 16) + subs["bitmap"].astype(np.int64))
    distinct = np.bincount(pairs >> 16, minlength=count)
    boxes = animation_boxes(prt)
    return [(i, int(per_anim[i]), int(sub_counts[i]), int(distinct[i])) + tuple(boxes[i].tolist())
            for i in range(count)]
