"""tidu is a generic AD engine: importing it (or its testing helpers) must not pull
in any tensor library of this project."""

import subprocess
import sys

import pytest

_CHECK = (
    "import sys; import {mod}; "
    "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('tenferro', 'tensor4all')); "
    "assert not bad, bad; "
    "assert {hyp} ('hypothesis' in sys.modules), sorted(m for m in sys.modules if 'hypothesis' in m)[:3]"
)


@pytest.mark.parametrize(
    "mod, hypothesis_expected", [("tidu", False), ("tidu.testing", False), ("tidu.testing.strategies", True)]
)
def test_import_pulls_in_no_tensor_package(mod, hypothesis_expected):
    code = _CHECK.format(mod=mod, hyp="" if hypothesis_expected else "not")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_tidu_source_names_no_tensor_package():
    import pathlib

    import tidu

    root = pathlib.Path(tidu.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        for name in ("tenferro", "tensor4all"):
            assert f"import {name}" not in text and f"from {name}" not in text, (path, name)


def test_core_imports_no_numpy():
    """The engine itself needs no array library (tidu.testing uses NumPy for sampling)."""
    code = "import sys, tidu; assert 'numpy' not in sys.modules, 'tidu imported numpy'"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
