"""Make the toy value type importable as ``toy`` in tidu's tests, and set the
hypothesis profile (few examples, no deadline: the suite must stay fast)."""
import os
import sys

from hypothesis import settings

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

settings.register_profile("tidu", max_examples=30, deadline=None)
settings.load_profile("tidu")
