"""``python -m tensor4all``: the command-line program (see :mod:`tensor4all.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
