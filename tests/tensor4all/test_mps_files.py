"""MPS.save / MPS.load (Arrow IPC and Parquet through tenferro.save, NumPy .npz) and the
reference energies of tensor4all.references (checked against independent exact diagonalization)."""

from __future__ import annotations

import math
import os
import stat
import threading

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import models, references

from .conftest import ground_energy, heisenberg_bethe_energy

FORMATS = [pytest.param(".npz", id="npz"), pytest.param(".arrow", id="arrow"), pytest.param(".parquet", id="parquet")]


def _needs(ext):
    if ext in (".arrow", ".parquet"):
        pytest.importorskip("pyarrow", reason="the 'arrow' extra is part of the test extras")


@pytest.mark.parametrize("ext", FORMATS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_round_trip_is_exact(tmp_path, ext, dtype):
    _needs(ext)
    psi = t4a.MPS.random(7, d=3, bond_dim=5, seed=3, dtype=dtype)
    path = tmp_path / f"psi{ext}"
    psi.save(path)
    back = t4a.MPS.load(path)
    assert back.L == 7 and back.bond_dims == psi.bond_dims and back.phys_dims == [3] * 7
    for a, b in zip(psi.tensors, back.tensors):
        a, b = np.asarray(a), np.asarray(b)
        assert b.dtype == a.dtype and b.shape == a.shape
        assert np.array_equal(a, b)
    # the loaded state is usable: an expectation value and a gradient through it
    e = t4a.expectation(back, models.heisenberg(7, spin="1"))
    assert float(np.real(np.asarray(e))) == pytest.approx(
        float(np.real(np.asarray(t4a.expectation(psi, models.heisenberg(7, spin="1"))))), abs=1e-13
    )
    g = tidu.grad(lambda p: tf.real(t4a.overlap(p, p)))(back)
    assert isinstance(g, t4a.MPS)


def test_arrow_file_has_named_site_entries(tmp_path):
    pytest.importorskip("pyarrow")
    psi = t4a.MPS.random(4, bond_dim=2)
    psi.save(tmp_path / "psi.arrow")
    data = tf.load(tmp_path / "psi.arrow")
    assert sorted(data) == ["site_0000", "site_0001", "site_0002", "site_0003"]
    assert data.dim_names["site_0001"] == ("left", "physical", "right")


def test_npz_keys_and_explicit_format(tmp_path):
    psi = t4a.MPS.product_state([0, 1, 0])
    path = tmp_path / "state.bin"
    psi.save(path, format="npz")
    assert not (tmp_path / "state.bin.npz").exists()
    with np.load(path) as data:
        assert sorted(data.files) == ["site_0000", "site_0001", "site_0002"]
    back = t4a.MPS.load(path, format="npz")
    assert np.array_equal(np.asarray(back.to_dense()), np.asarray(psi.to_dense()))


def test_bad_paths_and_files(tmp_path):
    psi = t4a.MPS.random(3, bond_dim=2)
    with pytest.raises(t4a.Tensor4allError, match=r"\.arrow, \.parquet, \.npz"):
        psi.save(tmp_path / "psi.txt")
    with pytest.raises(t4a.Tensor4allError, match="valid formats: arrow, npz, parquet"):
        psi.save(tmp_path / "psi.npz", format="hdf5")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(t4a.Tensor4allError, match="holds no MPS"):
        t4a.MPS.load(tmp_path / "other.npz")
    np.savez(tmp_path / "gap.npz", site_0000=np.zeros((1, 2, 1)), site_0002=np.zeros((1, 2, 1)))
    with pytest.raises(t4a.Tensor4allError, match="holds no MPS"):
        t4a.MPS.load(tmp_path / "gap.npz")


def _same_state(a, b):
    return all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a.tensors, b.tensors))


@pytest.mark.parametrize("ext", FORMATS)
def test_paths_that_no_file_can_have_are_typed_errors(tmp_path, ext):
    _needs(ext)
    psi = t4a.MPS.random(3, bond_dim=2)
    # a NUL character: os.open raised a raw ValueError ("embedded null byte") for .npz
    with pytest.raises(t4a.MPSFileIOError, match="contains a NUL character"):
        psi.save(str(tmp_path / f"a\0b{ext}"))
    with pytest.raises(t4a.MPSFileIOError, match="contains a NUL character"):
        t4a.MPS.load(str(tmp_path / f"a\0b{ext}"))
    # a trailing separator (or "." / "..") names a directory: never the file without it
    psi.save(tmp_path / f"x{ext}")
    fmt = ext[1:]
    for tail in ("/", "/.", "/.."):
        for name in (f"x{ext}", f"new{ext}"):
            path = str(tmp_path / name) + tail
            for call in (lambda: psi.save(path, format=fmt), lambda: t4a.MPS.load(path, format=fmt)):
                with pytest.raises(t4a.MPSFileIOError, match=r"names a directory \(it ends in") as info:
                    call()
                assert path in str(info.value)
            with pytest.raises(t4a.Tensor4allError):  # without format=: a typed error too
                psi.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"x{ext}"]


@pytest.mark.parametrize("ext", FORMATS)
def test_save_through_a_symbolic_link_writes_the_file_it_points_to(tmp_path, ext):
    _needs(ext)
    target, link = tmp_path / f"t{ext}", tmp_path / f"l{ext}"
    t4a.MPS.random(3, bond_dim=2, seed=1).save(target)
    os.symlink(target.name, link)
    new = t4a.MPS.random(3, bond_dim=2, seed=2)
    new.save(link)
    assert os.path.islink(link) and os.readlink(link) == target.name
    assert _same_state(t4a.MPS.load(target), new) and _same_state(t4a.MPS.load(link), new)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, link.name])
    os.symlink(f"loop2{ext}", tmp_path / f"loop1{ext}")
    os.symlink(f"loop1{ext}", tmp_path / f"loop2{ext}")
    with pytest.raises(t4a.MPSFileIOError, match="loop"):
        new.save(tmp_path / f"loop1{ext}")
    assert os.path.islink(tmp_path / f"loop1{ext}")


def _in_thread(call, path):
    """call(); its outcome, or "hung" when it is still blocked after 20 s (then released by a writer)."""
    out = {}

    def run():
        try:
            out["result"] = call()
        except BaseException as exc:  # noqa: BLE001
            out["result"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(20)
        return "hung"
    return out["result"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("ext", FORMATS)
def test_fifos_and_devices_are_refused(tmp_path, ext):
    _needs(ext)
    fifo = tmp_path / f"f{ext}"
    os.mkfifo(fifo)
    err = _in_thread(lambda: t4a.MPS.load(fifo), fifo)  # before: open() waited forever for a writer
    assert isinstance(err, t4a.MPSFileIOError), err
    assert str(fifo) in str(err) and "is a FIFO (named pipe), not a regular file" in str(err)
    psi = t4a.MPS.random(3, bond_dim=2)
    err = _in_thread(lambda: psi.save(fifo), fifo)  # before: the FIFO was replaced by a regular file
    assert isinstance(err, t4a.MPSFileIOError) and "is a FIFO" in str(err), err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == [fifo.name]
    if os.path.exists("/dev/null"):
        with pytest.raises(t4a.MPSFileIOError, match="'/dev/null' is a character device"):
            t4a.MPS.load("/dev/null", format=ext[1:])


def test_saving_traced_tensors_is_an_error(tmp_path):
    psi = t4a.MPS.random(3, bond_dim=2)

    def f(p):
        p.save(tmp_path / "x.npz")
        return tf.real(t4a.overlap(p, p))

    with pytest.raises(t4a.NotDifferentiableError):
        tidu.grad(f)(psi)


# ---- reference energies -----------------------------------------------------------------
@pytest.mark.parametrize("L,J,g", [(1, 1.0, 0.7), (2, 1.0, 1.0), (7, 0.8, 1.3), (10, 1.0, 0.5), (9, -1.0, 2.0)])
def test_tfim_free_fermion_energy_matches_exact_diagonalization(L, J, g):
    ed = ground_energy(models.tfim_opsum(L, J, g), L, "pauli")
    assert references.tfim_ground_energy(L, J, g) == pytest.approx(ed, abs=1e-11)


@pytest.mark.parametrize("L", [2, 5, 16, 32, 101])
def test_tfim_closed_form_at_the_critical_point(L):
    closed = 1.0 - 1.0 / math.sin(math.pi / (2 * (2 * L + 1)))
    assert references.tfim_critical_closed_form(L) == closed
    assert references.tfim_ground_energy(L, 1.0, 1.0) == pytest.approx(closed, abs=1e-11)


@pytest.mark.parametrize(
    "kw,local",
    [
        (dict(model="heisenberg", L=9), "spin-1/2"),
        (dict(model="xxz", L=10, Jz=0.4, h=0.25), "spin-1/2"),
        (dict(model="heisenberg", L=5, spin="1", J=0.7), "spin-1"),
    ],
)
def test_reference_energy_by_exact_diagonalization(kw, local):
    ref = references.reference_energy(**kw)
    J = kw.get("J", 1.0)
    os_ = models.heisenberg_opsum(kw["L"], J, kw.get("Jz", J), kw.get("h", 0.0))
    assert ref.exact and "exact diagonalization" in ref.source
    assert ref.energy == pytest.approx(ground_energy(os_, kw["L"], local), abs=1e-10)


def test_reference_energy_tables_and_limits():
    ref = references.reference_energy("heisenberg", 32)
    # the Bethe ansatz ground energy -13.997315618224327 to 13 decimals (conftest.heisenberg_bethe_energy,
    # checked in test_dmrg.py; an independent TeNPy DMRG at chi 200 gives -13.99731561822433)
    assert ref.energy == -13.9973156182243 and not ref.exact
    assert ref.energy == pytest.approx(heisenberg_bethe_energy(32), abs=1e-13)
    assert references.reference_energy("heisenberg", 32, J=2.0).energy == pytest.approx(2 * -13.9973156182243)
    assert references.reference_energy("heisenberg", 32, h=0.1) is None  # field: no table value
    assert references.reference_energy("xxz", 32, Jz=0.5) is None  # anisotropy: none
    assert references.reference_energy("heisenberg", 15) is None  # beyond 2^14 states
    assert references.reference_energy("heisenberg", 14).exact  # 2^14 states: exact
    assert references.reference_energy("heisenberg", 9, spin="1") is None  # 3^9 > 2^14
    assert references.reference_energy("tfim", 200, g=0.3).exact
    with pytest.raises(t4a.Tensor4allError, match="valid models: heisenberg, xxz, tfim"):
        references.reference_energy("hubbard", 8)
