"""Opening input files (core/files.py): regular files only, errors naming the file."""

import io
import os

import pytest

from oban_import.core.errors import ObanError
from oban_import.core.files import open_small_whole, read_head


def test_a_small_file_is_read_whole_and_a_large_one_opened(tmp_path):
    path = tmp_path / "a.oni"
    path.write_bytes(bytes(range(256)) * 4)
    small, size = open_small_whole(str(path), 1024)
    assert isinstance(small, io.BytesIO) and size == 1024 and small.read() == path.read_bytes()
    large, size = open_small_whole(str(path), 1023)
    with large:
        assert not isinstance(large, io.BytesIO) and size == 1024 and large.read() == path.read_bytes()
    assert read_head(str(path), 10) == (bytes(range(10)), 1024)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_a_folder_and_a_missing_file_are_refused_by_name(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    for name, fault in (("pipe", "is not a regular file"), ("", "is a directory, not a file"),
                        ("missing", "cannot be read: No such file or directory")):
        path = str(tmp_path / name) if name else str(tmp_path)
        with pytest.raises(ObanError) as error:
            open_small_whole(path, 1 << 20)
        assert str(error.value) == f"{path}: {fault}"
