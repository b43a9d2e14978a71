"""What an import or an export did, for every game and front end: what each file's items
became, the data blocks made, and the notes, warnings and errors to show. The operators
and the command line both print from it."""

from dataclasses import dataclass, field

from .errors import ObanError


@dataclass
class Made:
    path: str                 # the file read (import) or written (export)
    item: object              # what was read or written: an Animation, a PlacedObject, a Texture, ...
    block: object = None      # what it became or came from in Blender: an object, an image
    error: float = 0.0        # how far the result is from the file's (relative), where measured
    note: str = ""            # one word on it, e.g. "unchanged import"


@dataclass
class Report:
    files: int = 0                                   # files (or objects) asked for
    made: list = field(default_factory=list)         # [Made], in file order
    counts: dict = field(default_factory=dict)       # data blocks made, by kind: {"objects": 3, "images": 1, ...}
    notes: list = field(default_factory=list)        # for information: "file: 'name': text"
    warnings: list = field(default_factory=list)
    errors: list = field(default_factory=list)       # one per file (or object) that failed: nothing of it is made
    last_frame: int = 0                              # an import's last scene frame with a key
    unit: str = "files"                              # what `files` counts

    def add(self, other: "Report") -> None:
        """Another report's (a file's, one of a batch) into this one."""
        self.made += other.made
        self.notes += other.notes
        self.warnings += other.warnings
        self.errors += other.errors
        self.counts = {kind: self.counts.get(kind, 0) + other.counts.get(kind, 0)
                       for kind in {**self.counts, **other.counts}}
        self.last_frame = max(self.last_frame, other.last_frame)

    def each(self, items, make) -> None:
        """make(item) for each of `items`: the Made (or [Made]) it returns into `made`, the
        ObanError it raises into `errors` (the others still made)."""
        for item in items:
            try:
                made = make(item)
            except ObanError as error:
                self.errors.append(str(error))
                continue
            self.made += made if isinstance(made, list) else [made]

    def items(self, kind) -> list:
        """(path, item) of what was made from items of `kind`, in order."""
        return [(m.path, m.item) for m in self.made if isinstance(m.item, kind)]

    def blocks(self) -> list:
        return [m.block for m in self.made if m.block is not None]

    def messages(self) -> list[tuple[str, str]]:
        """(level, text): Blender's report levels, the notes first."""
        return ([("INFO", text) for text in self.notes] + [("WARNING", text) for text in self.warnings]
                + [("ERROR", text) for text in self.errors])

    def summary(self, verb: str = "Imported") -> str:
        """'Imported 9 objects, 8 images, 12 meshes from 2 of 3 files' (kinds made, in order)."""
        made = ", ".join(_plural(count, kind) for kind, count in self.counts.items() if count) or "nothing"
        return f"{verb} {made} from {self.files - len(self.errors)} of {_plural(self.files, self.unit)}"


def listed(names, most: int = 5, quoted: bool = True) -> str:
    """"'a', 'b' and 3 more": the first `most` names (quoted, or as they are: '3, 4 and 2 more'),
    how many more; the one way every message names a list."""
    names = list(names)
    shown = [f"'{name}'" if quoted else str(name) for name in names[:most]]
    return ", ".join(shown) + (f" and {len(names) - most} more" if len(names) > most else "")


def _plural(count, kind):
    """(1, 'meshes') -> '1 mesh'; (2, 'meshes') -> '2 meshes'."""
    if count != 1:
        return f"{count} {kind}"
    return f"1 {kind[:-2] if kind.endswith(('shes', 'ches', 'xes')) else kind[:-1]}"
