"""Plain-text tables for the command line and the demo."""


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
