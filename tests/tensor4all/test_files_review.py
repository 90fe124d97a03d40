"""Review of state files and small-chain excited states (2026-12-01): a ``format=`` that
contradicts the extension, a replaced ITensors.jl HDF5 group interrupted midway, and the gap of a
one-site chain."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
import tensor4all.networks.interchange_hdf5 as ih


@pytest.mark.parametrize("name, fmt", [("x.arrow", "npz"), ("x.npz", "arrow"), ("x.parquet", "npz")])
def test_format_contradicting_the_extension_is_refused(tmp_path, name, fmt):
    """``save("x.arrow", format="npz")`` wrote a zip named .arrow that ``load`` then refused;
    ``save("x.npz", format="arrow")`` let tenferro's own ``TenferroValueError`` through."""
    psi = t4a.MPS.random(4, 2, bond_dim=2, seed=0)
    with pytest.raises(t4a.UnsupportedFileFormatError, match="contradicts the extension") as info:
        psi.save(tmp_path / name, format=fmt)
    assert isinstance(info.value, ValueError)
    assert not (tmp_path / name).exists()
    psi.save(tmp_path / name)  # the extension's own format; loading it as another names what it is
    with pytest.raises(t4a.MPSFileError, match=f"pass format='{name.split('.')[1]}'"):
        t4a.MPS.load(tmp_path / name, format=fmt)


def test_a_name_tenferro_refuses_for_the_format_is_typed(tmp_path):
    """``.ipc`` is Arrow to tenferro: as Parquet, its refusal is the project's error."""
    psi = t4a.MPS.random(3, 2, bond_dim=2, seed=0)
    with pytest.raises(t4a.UnsupportedFileFormatError, match="ipc"):
        psi.save(tmp_path / "x.ipc", format="parquet")
    psi.save(tmp_path / "x.ipc", format="arrow")
    back = t4a.MPS.load(tmp_path / "x.ipc", format="arrow")
    assert np.allclose(back.to_dense(), psi.to_dense())


def test_an_interrupted_hdf5_replacement_keeps_the_group_that_was_there(tmp_path, monkeypatch):
    """The group was deleted before the new one was written: a Ctrl-C at the third tensor left
    neither (``load_itensors_hdf5``: "object 'MPS[3]' doesn't exist")."""
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "psi.h5"
    small = t4a.MPS.random(4, 2, bond_dim=2, seed=0)
    big = t4a.MPS.random(8, 2, bond_dim=4, seed=1)
    t4a.save_itensors_hdf5(small, path, name="psi")
    write, calls = ih._write_itensor, [0]

    def interrupted(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return write(*args, **kwargs)

    monkeypatch.setattr(ih, "_write_itensor", interrupted)
    with pytest.raises(KeyboardInterrupt):
        t4a.save_itensors_hdf5(big, path, name="psi")
    monkeypatch.setattr(ih, "_write_itensor", write)
    back = t4a.load_itensors_hdf5(path, name="psi")
    assert back.L == 4 and np.allclose(back.to_dense(), small.to_dense())
    with h5py.File(path, "r") as f:
        assert list(f.keys()) == ["psi"]  # no draft left behind
    t4a.save_itensors_hdf5(big, path, name="psi")  # an uninterrupted replacement
    assert np.allclose(t4a.load_itensors_hdf5(path, name="psi").to_dense(), big.to_dense())


def test_gap_of_one_site_names_gap_not_an_option_never_passed():
    """``gap(tfim(1))`` said "dmrg: orthogonal_to needs at least 2 sites", an option the caller
    never gave."""
    with pytest.raises(t4a.InvalidOptionError, match=r"^gap: H has one site") as info:
        t4a.gap(t4a.models.tfim(1))
    assert "eigvalsh" in str(info.value)
    with pytest.raises(t4a.InvalidOptionError, match=r"^excited_states: H has one site"):
        t4a.excited_states(t4a.models.tfim(1), 2)
    assert len(t4a.excited_states(t4a.models.tfim(1), 1)) == 1  # the ground state needs no sweep
