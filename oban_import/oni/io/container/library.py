"""Following links across Oni's files (docs/objects.md 1, 2, 8): a Library holds the open
containers of one read (the file asked for, then any a placeholder leads to, among the
loose .oni files of the same folder), follows links and checks them, and keeps what the
format readers build of an instance (a mesh, a texture, an animation) so that each is
built once however many instances link it.

A placeholder not found is a warning naming it; the part that needed it comes in without it.
Any other fault raises ObanError naming the file and the instance: the whole read fails.
"""

import contextlib
import os

from ....core.errors import ObanError
from ....core.files import Closes, open_small_whole
from .container import Container

IN_MEMORY = 1 << 20   # bytes: a file this small is read whole (a loose .oni; not a level)


class Library(Closes):
    """Open containers by path (the first one given, then any a placeholder leads to)."""

    def __init__(self, path: str):
        self.folder = os.path.dirname(os.path.abspath(path))
        self.containers, self.cache, self.warnings = {}, {}, []
        self.events = []  # every warning as it happens (repeats included): what one object needed
        self.main = self.open(path)

    def open(self, path: str) -> Container:
        return self.open_all([path])[0]

    def open_all(self, paths) -> list[Container]:
        """The container of each file, those not open yet opened together (Container.open_all)."""
        keys = [os.path.abspath(path) for path in paths]
        new = {key: path for key, path in zip(keys, paths) if key not in self.containers}
        files = []
        try:
            for path in new.values():
                f, size = open_small_whole(path, IN_MEMORY)   # one read, not one a piece
                files.append((f, path, size))
            self.containers.update(zip(new, Container.open_all(files)))
        except BaseException:
            for f, _, _ in files:
                f.close()
            raise
        return [self.containers[key] for key in keys]

    def close(self) -> None:
        for container in self.containers.values():
            container.close()
            container.f.close()
        self.containers.clear()

    def follow(self, c: Container, value: int, tag: bytes, owner: int, field: str):
        """(container, index) a link leads to, across a placeholder; None for no link, or for
        a placeholder not found (then a warning names it)."""
        return self.follow_all(c, [value], tag, owner, [field])[0]

    def follow_all(self, c: Container, values, tag: bytes, owner: int, fields) -> list:
        """follow() of each link of instance `owner` (`fields` naming them), the files their
        placeholders lead to opened together."""
        indices = [c.link(value, tag, owner, field) for value, field in zip(values, fields)]
        beside = {index: c.full_name(index) for index in indices if index is not None and c.is_placeholder(index)}
        paths = {index: os.path.join(self.folder, name + ".oni") for index, name in beside.items()}
        found = {index: path for index, path in paths.items() if plain_name(beside[index]) and os.path.isfile(path)}
        opened = dict(zip(found, self.open_all(found.values())))
        return [None if index is None else (c, index) if index not in beside else
                self._placeholder(c, index, beside[index], tag, opened.get(index), paths[index]) for index in indices]

    def _placeholder(self, c, index, name, tag, other, path):
        """The instance placeholder `index` (named `name`) stands for in `other` (the container of
        the file named after it, or None); None and a warning when it is not there."""
        found = self.named(other, tag).get(name) if other else None
        if found is not None:
            return other, found
        self.warn(f"{name or c.label(index)} not found ({os.path.basename(path)} beside "
                  f"{os.path.basename(c.path)} does not hold it): imported without it")
        return None

    def named(self, c: Container, tag: bytes) -> dict:
        """{full name: descriptor index} of the instances of `tag` with data in `c` (the first of
        a name), made once."""
        return self.cached(c, ("names", tag), lambda c, _: {c.full_name(i): i for i in reversed(c.with_data(tag))})

    def beside(self, full_name: str, tag: bytes):
        """(container, index) of the instance of `tag` named `full_name` with data in the file
        `<full_name>.oni` beside the file read (opened for it), or None."""
        path = os.path.join(self.folder, full_name + ".oni")
        if not (plain_name(full_name) and os.path.isfile(path)):
            return None
        other = self.open(path)
        index = self.named(other, tag).get(full_name)
        return None if index is None else (other, index)

    def warn(self, text: str) -> None:
        self.events.append(text)
        if text not in self.warnings:
            self.warnings.append(text)

    def cached(self, c: Container, index: int, build):
        """build(c, index) (a format reader's), once per instance; a later call repeats the
        warnings the first one gave."""
        key = (id(c), index)
        if key in self.cache:
            value, events = self.cache[key]
            self.events += events
            return value
        before = len(self.events)
        value = build(c, index)
        self.cache[key] = value, self.events[before:]
        return value

    def cached_all(self, instances, build_all) -> list:
        """cached() of each (container, index), those not built yet built together by
        build_all([(container, index), ...]) (a reader that warns of nothing)."""
        new = list({(id(c), index): (c, index) for c, index in instances if (id(c), index) not in self.cache}.values())
        for (c, index), value in zip(new, build_all(new)):
            self.cache[(id(c), index)] = value, []
        return [self.cache[(id(c), index)][0] for c, index in instances]


class Libraries(Closes):
    """Libraries by file, each opened once and kept (an export reading again the files an
    import read, many parts from one level)."""

    def __init__(self):
        self.libraries = {}

    def get(self, path: str) -> Library:
        """The Library of `path`; ObanError naming it where it cannot be read."""
        key = os.path.abspath(path)
        if key not in self.libraries:
            with reading(path):
                self.libraries[key] = Library(path)
        return self.libraries[key]

    def close(self) -> None:
        for library in self.libraries.values():
            library.close()
        self.libraries.clear()


def plain_name(name) -> bool:
    """A name that stays a file name in the folder (no path separators, no '..')."""
    return bool(name) and name not in (".", "..") and not any(ch in name for ch in "/\\:\0")


@contextlib.contextmanager
def open_library(path, library=None):
    """A Library of the file at `path`, closed after, or `library` (one of that file the caller
    keeps open for several readers, so that what they share is read once); OSError while
    reading -> ObanError."""
    path = os.fspath(path)
    with reading(path):
        if library is not None:
            yield library
            return
        with Library(path) as library:
            yield library


@contextlib.contextmanager
def reading(path):
    """OSError while reading -> ObanError naming the file."""
    try:
        yield
    except OSError as error:
        raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
