"""Plain-text tables for the command line and the demo."""

from .oni.textures import FORMAT_NAMES


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


def objects_table(rows: list) -> str:
    """rows: (file name, PlacedObject) pairs -> one line per object: its meshes, triangles,
    texture formats and animation."""
    def formats(placed):
        found = [FORMAT_NAMES.get(m.texture.format, str(m.texture.format)) if m.texture else "-"
                 for m in placed.meshes]
        return " ".join(dict.fromkeys(found)) or "-"
    return format_table(("file", "object", "meshes", "triangles", "textures", "animation"),
                        [(file, p.name, len(p.meshes), sum(len(m.triangles) for m in p.meshes), formats(p),
                          p.animation.name if p.animation else "-") for file, p in rows],
                        numeric=("meshes", "triangles"))
