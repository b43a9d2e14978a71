"""Picking instances by name: the Name Filter's case-insensitive glob."""

import fnmatch


def name_matcher(name_glob: str | None):
    """name -> bool for a case-insensitive glob ('*door*'); None for no glob."""
    if not name_glob:
        return None
    pattern = name_glob.lower()
    return lambda name: fnmatch.fnmatchcase(name.lower(), pattern)
