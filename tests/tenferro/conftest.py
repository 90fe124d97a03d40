"""Make the shared test helpers in this folder (``specs``) importable."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import tidu  # noqa: E402

# Every transpose rule's result is checked against its arguments' avals in the tests.
tidu.debug_checks(True)
