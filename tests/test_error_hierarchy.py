"""The error-type contract of the README (issue 20): every exception class of tidu,
tenferro and tensor4all derives from its package's root exception and from the
matching built-in one (``ValueError``, ``TypeError``, ``FileNotFoundError``, ...), so
``except ValueError`` catches bad input as it would from NumPy; warnings derive from
``Warning``; no code raises a root class itself. The classes are found by importing
every module of the three packages, so a new class is checked without a new row."""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import pkgutil
import re
import sys

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tensor4all as t4a
import tidu
from tensor4all import models, references

PACKAGES = ("tidu", "tenferro", "tensor4all")
ROOTS = {"tidu": tidu.TiduError, "tenferro": tf.TenferroError, "tensor4all": t4a.Tensor4allError}
#: Family bases that group errors of one area; like the roots they carry no built-in
#: base (their subclasses are ValueErrors, TypeErrors, RuntimeErrors) and are never
#: raised themselves (test_no_code_raises_a_root_or_family_class).
FAMILY_BASES = {la.LinalgError, t4a.StructuredError}
REPO = pathlib.Path(__file__).resolve().parent.parent


def _import_everything() -> list[str]:
    names = []
    for pkg in PACKAGES:
        root = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(root.__path__, pkg + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue  # program entry points; their code lives in importable modules
            importlib.import_module(info.name)
            names.append(info.name)
    return names


MODULES = _import_everything()


def _exception_classes() -> list[type]:
    found: dict[str, type] = {}
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] not in PACKAGES:
            continue
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.split(".")[0] in PACKAGES:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _exception_classes()
BUILTIN_ROOTS = (BaseException, Exception, object)


def _builtin_bases(cls: type) -> list[type]:
    return [b for b in cls.__mro__ if b.__module__ == "builtins" and b not in BUILTIN_ROOTS]


def test_every_module_imports_and_the_walk_finds_the_known_classes():
    assert len(MODULES) > 50
    for cls in (
        tidu.InvalidArgumentError,
        tf.ShapeError,
        tf.EinsumPathWarning,
        la.SingularMatrixError,
        t4a.UnknownOperatorError,
        t4a.TilingError,
        t4a.UnsupportedFileFormatError,
    ):
        assert cls in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=[f"{c.__module__}.{c.__qualname__}" for c in CLASSES])
def test_exception_class_derives_from_its_root_and_a_builtin(cls):
    if cls.__name__.endswith("Warning") or issubclass(cls, Warning):
        assert issubclass(cls, Warning) and cls.__name__.endswith("Warning"), (
            f"{cls.__qualname__}: a warning class must derive from Warning and be named ...Warning"
        )
        return
    root = ROOTS[cls.__module__.split(".")[0]]
    assert issubclass(cls, root), f"{cls.__qualname__} does not derive from {root.__qualname__}"
    if cls is root or cls in FAMILY_BASES:
        assert not _builtin_bases(cls), f"{cls.__qualname__} is a root and must stay catch-all"
        return
    assert _builtin_bases(cls), (
        f"{cls.__qualname__} derives from no built-in exception besides Exception; add the matching one "
        "(ValueError, TypeError, IndexError, KeyError, FileNotFoundError, RuntimeError, ...)"
    )


def test_the_roots_are_exported_under_the_names_the_readme_gives():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("tenferro.TenferroError", "tidu.TiduError", "tensor4all.Tensor4allError"):
        assert name in readme
    assert set(ROOTS.values()) == {tidu.TiduError, tf.TenferroError, t4a.Tensor4allError}


# -- no code raises a root or family class itself ---------------------------------------------

_ABSTRACT = {c.__name__ for c in (*ROOTS.values(), *FAMILY_BASES)}


def _instantiations_of_abstract_classes() -> dict[str, int]:
    counts: dict[str, int] = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                    if name in _ABSTRACT:
                        rel = path.relative_to(REPO).as_posix()
                        counts[rel] = counts.get(rel, 0) + 1
    return counts


def test_no_code_raises_a_root_or_family_class():
    assert _instantiations_of_abstract_classes() == {}, (
        "raise a subclass that also derives from the matching built-in (see the package's errors module), "
        "not TiduError/TenferroError/Tensor4allError/LinalgError/StructuredError itself"
    )


# -- the calls of issue 20 and their neighbours -----------------------------------------------


def test_unknown_eigensolver_is_a_value_error_naming_the_valid_ones():
    with pytest.raises(ValueError) as info:
        t4a.dmrg(models.heisenberg(4), max_bond=4, eigensolver="foo")
    assert isinstance(info.value, t4a.Tensor4allError) and isinstance(info.value, t4a.InvalidOptionError)
    assert "'foo'" in str(info.value) and "valid eigensolvers: eigsh, lanczos" in str(info.value)


def test_loading_an_unsupported_extension_is_a_value_error_naming_the_extensions():
    with pytest.raises(ValueError) as info:
        t4a.MPS.load("run.json")
    assert isinstance(info.value, t4a.UnsupportedFileFormatError)
    assert "'run.json'" in str(info.value) and ".arrow, .parquet, .npz" in str(info.value)


def test_saving_to_an_unsupported_extension_is_a_value_error(tmp_path):
    psi = t4a.MPS.product_state([0, 1])
    with pytest.raises(ValueError) as info:
        psi.save(tmp_path / "x.h5")
    assert isinstance(info.value, t4a.UnsupportedFileFormatError)
    assert "x.h5" in str(info.value) and ".arrow, .parquet, .npz" in str(info.value)
    assert not (tmp_path / "x.h5").exists()
    with pytest.raises(ValueError, match="unknown MPS file format 'hdf5'; valid formats: arrow, npz, parquet"):
        psi.save(tmp_path / "x.npz", format="hdf5")


def test_file_contents_and_missing_files(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="holds no MPS: expected entries site_0000") as info:
        t4a.MPS.load(tmp_path / "other.npz")
    assert isinstance(info.value, t4a.MPSFileError)
    for name in ("missing.npz", "missing.arrow"):
        with pytest.raises(FileNotFoundError, match="no file .*missing") as info:
            t4a.MPS.load(tmp_path / name)
        assert isinstance(info.value, t4a.MPSFileNotFoundError)


@pytest.mark.parametrize(
    "call,builtin,fragment",
    [
        (lambda: t4a.overlap(1, 2), TypeError, "overlap expects two MPS, got int and int"),
        (lambda: t4a.expectation(t4a.MPS.product_state([0]), 3), TypeError, "expected an MPO, got int"),
        (lambda: t4a.MPO.from_opsum([], 2), TypeError, "MPO.from_opsum expects an OpSum, got list"),
        (lambda: models.heisenberg(4, spin="3/2"), ValueError, "unknown spin '3/2'; valid spins: 1/2, 1"),
        (lambda: references.reference_energy("potts", 4), ValueError, "unknown model 'potts'; valid models"),
        (lambda: references.tfim_ground_energy(0), ValueError, "L must be a positive integer, got 0"),
    ],
    ids=["overlap-type", "expectation-type", "from_opsum-type", "spin", "reference-model", "tfim-L"],
)
def test_other_tensor4all_bad_inputs_have_builtin_types(call, builtin, fragment):
    with pytest.raises(builtin) as info:
        call()
    assert isinstance(info.value, t4a.Tensor4allError)
    assert re.search(re.escape(fragment), str(info.value)), str(info.value)
