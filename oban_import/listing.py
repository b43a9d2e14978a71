"""Plain-text tables of animations, for the command line and the demo."""


def table(rows):
    """rows: (file name, Animation) pairs -> aligned text table, one line per animation."""
    header = ("file", "name", "frames", "keys", "flags")
    lines = [header] + [(file, a.name, str(a.frames), str(len(a.keys)), a.flag_text()) for file, a in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {2, 3}
    return "\n".join(
        "  ".join(cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
        for line in lines)
