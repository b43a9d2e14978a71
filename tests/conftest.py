"""Puts the repository root on sys.path so ``import oban_import`` works in
every test environment, including inside the ``blender`` binary (pytest-blender),
whose Python does not see the working directory."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# helper modules (generate, reference_engine) import by name from any test folder
TESTS = os.path.dirname(os.path.abspath(__file__))
if TESTS not in sys.path:
    sys.path.insert(1, TESTS)
