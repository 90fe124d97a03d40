"""Every public module shows its API and nothing else: ``dir(module)`` (what tab completion
lists) is ``__all__`` plus the public submodules, every name of ``__all__`` exists, and no
typing helper, error class imported for internal use or ``annotations`` leaks into it."""

from __future__ import annotations

import importlib
import types

import pytest

MODULES = [
    "tidu",
    "tenferro",
    "tenferro.linalg",
    "tensor4all",
    "tensor4all.models",
    "tensor4all.lattices",
    "tensor4all.measurements",
    "tensor4all.structured",
    "tensor4all.tci",
    "tensor4all.quantics",
    "tensor4all.trees",
    "tensor4all.scans",
    "tensor4all.spectra",
    "tensor4all.thermal",
    "tensor4all.infinite",
]


@pytest.mark.parametrize("name", MODULES)
def test_dir_is_the_public_api(name):
    m = importlib.import_module(name)
    api = set(m.__all__)
    missing = sorted(n for n in api if not hasattr(m, n))
    assert not missing, f"{name}.__all__ names what the module lacks: {missing}"
    shown = {n for n in dir(m) if not n.startswith("_")}
    leaked = sorted(n for n in shown - api if not isinstance(getattr(m, n), types.ModuleType))
    assert not leaked, f"dir({name}) shows names outside __all__: {leaked}"
    for n in ("annotations", "Any", "Callable", "Sequence", "check_alloc"):
        assert n not in shown or n in api, (name, n)
