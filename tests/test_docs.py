"""Every module and test the documentation names exists: a file named in backticks (`x.py`,
`folder/x.py`, `x.py: name`, `x.py::test_name`) is a file of the tree ending so, and a test it
names is defined there. The history of the benchmarks is left as it was written."""

import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted({os.path.relpath(p, ROOT) for pattern in ("*.md", "docs/*.md", "benchmarks/*.md",
                                                          "oban_import/**/README.md", "tests/**/README.md",
                                                          "tools/**/README.md")
                for p in glob.glob(os.path.join(ROOT, pattern), recursive=True)} - {"benchmarks/HISTORY.md"})
NAMED = re.compile(r"([\w/.]+\.py)(?:::(\w+))?")


def python_files():
    found = []
    for folder in ("oban_import", "tests", "tools", "benchmarks"):
        for path in glob.glob(os.path.join(ROOT, folder, "**", "*.py"), recursive=True):
            found.append(os.path.relpath(path, ROOT))
    return found


def named_in(page):
    """(line number, file, test or None) of each file a page names in backticks."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            for quoted in re.findall(r"`([^`]+)`", line):
                for match in NAMED.finditer(quoted):
                    yield number, match.group(1), match.group(2)


@pytest.mark.parametrize("page", PAGES)
def test_the_files_and_tests_a_page_names_exist(page):
    files = python_files()
    wrong = []
    for number, name, test in named_in(page):
        matches = [f for f in files if f == name or f.endswith("/" + name.lstrip("./"))]
        if not matches:
            wrong.append(f"{page}:{number}: no file {name}")
        elif test and not any(re.search(rf"^\s*def {test}\b", open(os.path.join(ROOT, f)).read(), re.M)
                              for f in matches):
            wrong.append(f"{page}:{number}: no {test} in {name}")
    assert not wrong, "\n".join(wrong)
