"""Make the shared test helpers in this folder (``specs``) importable."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
