"""Issue 21, tensor network files: atomic writes (a failed write keeps the old file and
leaves no temporary), typed load errors naming the file and what is wrong with it, and
typed path errors. Each test names the class of defect it guards; all of them failed before the fix."""

from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _no_numpy_warnings():
    """No RuntimeWarning (overflow, invalid value, divide by zero) leaks from these calls."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def _raises(exc, fragment, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert fragment in str(info.value), str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)
    return info.value


# =============================================================================================
# 5. files: atomic writes, typed load errors naming the file, typed path errors
# =============================================================================================
def _files(d):
    return sorted(p.name for p in d.iterdir())


def test_a_failed_npz_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    good = t4a.MPS.random(4, bond_dim=2, seed=1)
    path = tmp_path / "psi.npz"
    good.save(path)
    before = path.read_bytes()

    def partial_savez(fh, **arrays):
        fh.write(b"PK\x03\x04 half of a zip archive")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", partial_savez)
    err = _raises(t4a.MPSFileIOError, "No space left on device", t4a.MPS.random(4, bond_dim=3, seed=2).save, path)
    assert isinstance(err, OSError) and str(path) in str(err)
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]

    def interrupted_savez(fh, **arrays):
        fh.write(b"PK\x03\x04")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted_savez)
    with pytest.raises(KeyboardInterrupt):
        t4a.MPS.random(4, bond_dim=3, seed=2).save(path)
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]
    monkeypatch.undo()
    back = t4a.MPS.load(path)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(back.tensors, good.tensors))

    def f(p):  # a state that cannot be serialized (tracers) writes nothing
        p.save(path)
        return tf.real(t4a.overlap(p, p))

    with pytest.raises(t4a.NotDifferentiableError):
        tidu.grad(f)(t4a.MPS.random(4, bond_dim=2, seed=4))
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]
    (tmp_path / "plain").write_bytes(b"x")  # the replaced file has the usual permissions, not mkstemp's 0600
    assert stat.S_IMODE(os.stat(path).st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)


@pytest.mark.parametrize("ext", [".npz", ".arrow"])
def test_write_errors_name_the_path(tmp_path, ext):
    if ext == ".arrow":
        pytest.importorskip("pyarrow")
    psi = t4a.MPS.random(3, bond_dim=2)
    _raises(t4a.MPSFileIOError, "does not exist", psi.save, tmp_path / "no" / f"psi{ext}")
    (tmp_path / f"d{ext}").mkdir()
    _raises(t4a.MPSFileIOError, "is a directory", psi.save, tmp_path / f"d{ext}")
    assert _files(tmp_path) == [f"d{ext}"]


def _write(path, data):
    path.write_bytes(data)
    return path


@pytest.fixture
def damaged(tmp_path):
    psi = t4a.MPS.random(4, bond_dim=2, seed=3)
    psi.save(tmp_path / "good.npz")
    raw = (tmp_path / "good.npz").read_bytes()
    out = {
        "truncated": _write(tmp_path / "truncated.npz", raw[: len(raw) // 2]),
        "crc": _write(tmp_path / "crc.npz", raw[:200] + bytes(40) + raw[240:]),
        "empty": _write(tmp_path / "empty.npz", b""),
        "text": _write(tmp_path / "text.npz", b"hello, world\n"),
    }
    np.save(tmp_path / "one.npy", np.zeros(3))
    out["npy"] = (tmp_path / "one.npy").rename(tmp_path / "npy.npz")
    for name, arrays in {
        "other": dict(a=np.zeros(3)),
        "gap": dict(site_0000=np.ones((1, 2, 1)), site_0002=np.ones((1, 2, 1))),
        "twod": dict(site_0000=np.ones((2, 2))),
        "nan": dict(site_0000=np.full((1, 2, 1), NAN)),
        "strings": dict(site_0000=np.array([[["a"], ["b"]]])),
        "bonds": dict(site_0000=np.ones((1, 2, 2)), site_0001=np.ones((3, 2, 1))),
        "objects": dict(site_0000=np.array([None, 1.0], dtype=object)),
    }.items():
        np.savez(tmp_path / f"{name}.npz", **arrays)
        out[name] = tmp_path / f"{name}.npz"
    (tmp_path / "dir.npz").mkdir()
    out["dir"] = tmp_path / "dir.npz"
    out["missing"] = tmp_path / "missing.npz"
    return out


@pytest.mark.parametrize(
    "kind,exc,fragment",
    [
        ("dir", t4a.MPSFileIOError, "is a directory"),
        ("empty", t4a.MPSFileError, "is empty (0 bytes)"),
        ("truncated", t4a.MPSFileError, "could not be read as npz (a truncated or damaged file?)"),
        ("crc", t4a.MPSFileError, "could not be read as npz"),
        ("text", t4a.MPSFileError, "is not a NumPy .npz archive (it starts with b'hello, w')"),
        ("npy", t4a.MPSFileError, "is a single NumPy .npy array, not a NumPy .npz archive"),
        ("twod", t4a.MPSFileError, "do not form an MPS: MPS site tensor 0 must have 3 indices"),
        ("nan", t4a.MPSFileError, "do not form an MPS: MPS site tensor 0 holds NaN or infinity"),
        ("strings", t4a.MPSFileError, "must hold float or complex numbers"),
        ("bonds", t4a.MPSFileError, "MPS bond 0 mismatch"),
        ("objects", t4a.MPSFileError, "Object arrays cannot be loaded"),
    ],
)
def test_load_errors_are_typed_and_name_the_file(damaged, kind, exc, fragment):
    err = _raises(exc, fragment, t4a.MPS.load, damaged[kind])
    assert str(damaged[kind]) in str(err)


def test_a_file_of_another_format_is_named(tmp_path):
    pytest.importorskip("pyarrow")
    psi = t4a.MPS.random(4, bond_dim=2)
    for ext in (".npz", ".arrow", ".parquet"):
        psi.save(tmp_path / f"psi{ext}")
    _raises(
        t4a.MPSFileError,
        "is an Arrow IPC file, not a NumPy .npz archive; pass format='arrow'",
        t4a.MPS.load,
        tmp_path / "psi.arrow",
        format="npz",
    )
    _raises(
        t4a.MPSFileError,
        "is a NumPy .npz archive, not an Arrow IPC file; pass format='npz'",
        t4a.MPS.load,
        tmp_path / "psi.npz",
        format="arrow",
    )
    _raises(
        t4a.MPSFileError,
        "is a Parquet file, not an Arrow IPC file",
        t4a.MPS.load,
        tmp_path / "psi.parquet",
        format="arrow",
    )
    raw = (tmp_path / "psi.arrow").read_bytes()
    _write(tmp_path / "cut.arrow", raw[: len(raw) // 2])
    _raises(t4a.MPSFileError, "could not be read as arrow", t4a.MPS.load, tmp_path / "cut.arrow")


@pytest.mark.parametrize("path", [123, None, 1.5, ["psi.npz"]])
def test_paths_of_the_wrong_type_are_type_errors(path):
    psi = t4a.MPS.random(3, bond_dim=2)
    for call in (lambda: psi.save(path), lambda: t4a.MPS.load(path)):
        err = _raises(t4a.Tensor4allTypeError, "a path must be a str or os.PathLike", call)
        assert isinstance(err, TypeError)
    _raises(t4a.UnsupportedFileFormatError, "unknown MPS file format 5", t4a.MPS.load, "x.npz", format=5)


def test_bytes_and_pathlike_paths_work(tmp_path):
    psi = t4a.MPS.random(3, bond_dim=2)
    psi.save(os.fsencode(tmp_path / "b.npz"))
    assert t4a.MPS.load(tmp_path / "b.npz").bond_dims == psi.bond_dims
