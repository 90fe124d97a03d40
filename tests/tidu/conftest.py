"""Make the toy value type (``toy.py``, next to this file) importable as ``toy``
in tidu's tests. Hypothesis settings are set per test, not globally, so that this
folder does not change other packages' tests."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import tidu  # noqa: E402

# Every transpose rule's result is checked against its arguments' avals in the tests.
tidu.debug_checks(True)
