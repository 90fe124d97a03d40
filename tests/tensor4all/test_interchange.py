"""MPS/MPO interchange with TeNPy, quimb and ITensors.jl's HDF5 layout
(:mod:`tensor4all.networks.interchange`, :mod:`tensor4all.networks.interchange_hdf5`): round trips
(dense and charge-conserving, float and complex), the peers' own energies and entanglement of our
states, a TeNPy DMRG ground state read here, the file layout, and the typed errors. A test whose
peer is not installed is skipped."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.networks import interchange as ic
from tensor4all.networks import interchange_hdf5 as ih
from tensor4all.sites.local_spaces import LOCAL_SPACES


@pytest.fixture(scope="module")
def tenpy():
    pytest.importorskip("tenpy")
    return pytest.importorskip("tenpy.networks.site")


@pytest.fixture(scope="module")
def qtn():
    return pytest.importorskip("quimb.tensor")


@pytest.fixture(scope="module")
def h5py():
    return pytest.importorskip("h5py")


#: (d, conserve, local, dtype) of the round trips
STATES = [
    (2, None, None, np.float64),
    (2, "Sz", None, np.complex128),
    (3, "Sz", None, np.float64),
    (3, None, None, np.complex128),
    (2, "N", "fermion", np.float64),
    (4, "N,Sz", "electron", np.complex128),
    (3, "N,Sz", "tj", np.float64),
]
IDS = [f"d{d}-{c}-{loc}-{np.dtype(t).name}" for d, c, loc, t in STATES]


def _state(d, conserve, local, dtype, L=5):
    return t4a.MPS.random(L, d=d, bond_dim=6, dtype=dtype, conserve=conserve, local=local, seed=4) * 0.7


def _same_state(a, b):
    """<a|b> equals <a|a> and <b|b> to 1e-12 (relative): the same vector."""
    na, nb = float(a.norm()) ** 2, float(b.norm()) ** 2
    assert abs(complex(t4a.overlap(a, b)) - na) < 1e-12 * na
    assert abs(nb - na) < 1e-12 * na
    assert a.symmetric == b.symmetric and a.sector == b.sector


# ---- TeNPy ----------------------------------------------------------------------------------


@pytest.mark.parametrize("d,conserve,local,dtype", STATES, ids=IDS)
def test_tenpy_round_trip(tenpy, d, conserve, local, dtype):
    psi = _state(d, conserve, local, dtype)
    tpsi = ic.to_tenpy(psi, local=local)
    assert abs(tpsi.norm - float(psi.norm())) < 1e-12
    assert tuple(tpsi.chinfo.names) == {None: (), "Sz": ("2*Sz",), "N": ("N",), "N,Sz": ("N", "2*Sz")}[conserve]
    _same_state(psi, ic.from_tenpy(tpsi))
    dense = ic.from_tenpy(tpsi, symmetric=False)
    assert not dense.symmetric and abs(complex(t4a.overlap(psi, dense)) - float(psi.norm()) ** 2) < 1e-12


def test_tenpy_single_site(tenpy):
    psi = t4a.MPS.product_state([1], conserve="Sz") * 2.0
    _same_state(psi, ic.from_tenpy(ic.to_tenpy(psi)))


def test_tenpy_measures_our_states_as_we_do(tenpy):
    """TeNPy's own expectation values and correlations of converted states: the local bases (spin-1
    reversed) and the fermion signs agree."""
    psi = t4a.MPS.random(5, d=3, bond_dim=6, conserve="Sz", charge=1, seed=2)
    tpsi = ic.to_tenpy(psi)
    assert np.allclose(tpsi.expectation_value("Sz"), np.asarray(psi.expect("Sz")), atol=1e-12)
    psi = t4a.MPS.random(5, d=4, bond_dim=8, conserve="N,Sz", local="electron", seed=2, dtype=np.complex128)
    tpsi = ic.to_tenpy(psi)
    assert np.allclose(tpsi.expectation_value("Ntot"), np.asarray(psi.expect("Ntot", local="electron")), atol=1e-12)
    for theirs, ours in (("Cdu", "Cdagup"), ("Cdd", "Cdagdn")):
        c = np.asarray(psi.correlation_matrix(ours, ours.replace("dag", ""), local="electron"))
        assert np.allclose(tpsi.correlation_function(theirs, theirs[0] + theirs[2]), c, atol=1e-12)


def test_tenpy_site_bases_match_ours(tenpy):
    ts = tenpy
    pairs = [
        (ts.SpinHalfSite("Sz"), "spin-1/2", {"Sz": "Sz", "Sp": "S+"}),
        (ts.SpinSite(1, "Sz"), "spin-1", {"Sz": "Sz", "Sp": "S+"}),
        (ts.FermionSite("N"), "fermion", {"C": "C", "JW": "F"}),
        (ts.SpinHalfFermionSite("N", "Sz"), "electron", {"Cu": "Cup", "Cd": "Cdn", "JW": "F"}),
        (ts.SpinHalfHoleSite("N", "Sz"), "tj", {"Cu": "Cup", "Cd": "Cdn", "Sz": "Sz"}),
    ]
    tp = sys.modules["tenpy"]
    for site, local, names in pairs:
        name, m = ic._site_map(tp, site, "test")
        assert name == local
        for theirs, ours in names.items():
            assert np.allclose(ic._nc_op(site, theirs)[np.ix_(m, m)], LOCAL_SPACES[local].matrix(ours))


@pytest.fixture(scope="module")
def tenpy_ground_state(tenpy):
    """TeNPy's own DMRG on the Heisenberg chain of 10 sites, conserving Sz (bond 32: exact)."""
    xxz = pytest.importorskip("tenpy.models.xxz_chain")
    dmrg = pytest.importorskip("tenpy.algorithms.dmrg")
    mps = pytest.importorskip("tenpy.networks.mps")
    M = xxz.XXZChain({"L": 10, "Jxx": 1.0, "Jz": 1.0, "hz": 0.0, "bc_MPS": "finite", "conserve": "Sz"})
    psi = mps.MPS.from_product_state(M.lat.mps_sites(), ["up", "down"] * 5, bc="finite", unit_cell_width=10)
    opts = {"trunc_params": {"chi_max": 32, "svd_min": 1e-14}, "max_E_err": 1e-13, "mixer": True, "max_sweeps": 20}
    info = dmrg.run(psi, M, opts)
    return M, psi, info["E"]


def test_tenpy_dmrg_ground_state_read_here(tenpy_ground_state):
    M, tpsi, E = tenpy_ground_state
    psi = ic.from_tenpy(tpsi)
    assert psi.symmetric and psi.sector == {"Sz": 0.0}
    ours = float(t4a.expectation(psi, t4a.models.heisenberg(10, conserve="Sz")))
    assert abs(ours - E) < 1e-10
    assert abs(ours - M.H_MPO.expectation_value(tpsi)) < 1e-10
    for b, s in enumerate(psi.schmidt_values()):  # TeNPy's psi.S on the same bond
        theirs = np.sort(tpsi.get_SL(b + 1))[::-1]
        n = max(len(s), len(theirs))
        assert np.allclose(np.pad(np.asarray(s), (0, n - len(s))), np.pad(theirs, (0, n - len(theirs))), atol=1e-10)
    for b, sectors in enumerate(tpsi.entanglement_spectrum(by_charge=True)):  # bonds 1 .. L-1
        ours = psi.entanglement_spectrum(b)
        theirs = {int(q[0]) / 2: np.sort(np.exp(-xi / 2))[::-1] for q, xi in sectors}
        assert sorted(ours) == sorted(theirs)
        for q, values in theirs.items():
            assert np.allclose(np.asarray(ours[q])[: len(values)], values, atol=1e-10)
            assert np.all(np.asarray(ours[q])[len(values) :] < 1e-10)
    back = ic.to_tenpy(psi)  # and back: TeNPy's energy and overlap
    assert abs(back.overlap(tpsi) - 1) < 1e-12 and abs(M.H_MPO.expectation_value(back) - E) < 1e-10


def test_tenpy_mpo_both_ways(tenpy_ground_state):
    M, tpsi, E = tenpy_ground_state
    psi = t4a.MPS.random(10, bond_dim=8, conserve="Sz", seed=1, dtype=np.complex128)
    H = t4a.models.heisenberg(10, conserve="Sz")
    tH = ic.mpo_to_tenpy(H)
    assert abs(tH.expectation_value(ic.to_tenpy(psi)) - float(t4a.expectation(psi, H))) < 1e-12
    H2 = ic.mpo_from_tenpy(M.H_MPO)
    assert H2.local == "spin-1/2"
    assert abs(float(t4a.expectation(psi, H2)) - float(t4a.expectation(psi, H))) < 1e-12


def test_tenpy_bad_inputs(tenpy):
    psi = t4a.MPS.random(4, conserve="Sz")
    with pytest.raises(t4a.Tensor4allTypeError, match="from_tenpy expects a tenpy"):
        ic.from_tenpy(psi)
    with pytest.raises(t4a.Tensor4allTypeError, match="to_tenpy expects a tensor4all MPS"):
        ic.to_tenpy("psi")
    with pytest.raises(ic.UnsupportedSiteError, match="BosonSite"):
        ic.to_tenpy(psi, tenpy.BosonSite(Nmax=1, conserve=None))
    with pytest.raises(ic.UnsupportedSiteError, match="conserves Sz"):
        ic.to_tenpy(psi, tenpy.SpinHalfSite("parity"))
    with pytest.raises(t4a.DimensionMismatchError):
        ic.to_tenpy(psi, [tenpy.SpinHalfSite("Sz")] * 3)
    with pytest.raises(t4a.ZeroNormError):
        ic.to_tenpy(psi * 0.0)
    parity = ic.to_tenpy(t4a.MPS.product_state([0, 1, 0, 1]), tenpy.SpinHalfSite("parity"))
    with pytest.raises(ic.UnsupportedSiteError, match="symmetric=False"):
        ic.from_tenpy(parity)
    _same_state(t4a.MPS.product_state([0, 1, 0, 1]), ic.from_tenpy(parity, symmetric=False))


# ---- quimb ------------------------------------------------------------------------------------


@pytest.mark.parametrize("d,conserve,local,dtype", STATES, ids=IDS)
def test_quimb_round_trip(qtn, d, conserve, local, dtype):
    psi = _state(d, conserve, local, dtype)
    q = ic.to_quimb(psi)
    assert isinstance(q, qtn.MatrixProductState) and q.L == 5
    assert abs(complex(q.H @ q) - float(psi.norm()) ** 2) < 1e-12
    _same_state(psi, ic.from_quimb(q, conserve=conserve, local=local))


def test_quimb_energies_of_our_states(qtn):
    """quimb's own Heisenberg MPO and contraction give our energy; our MPO in quimb is our matrix and
    acts as ours (the upper index the output)."""
    L = 6
    psi = t4a.MPS.random(L, bond_dim=6, conserve="Sz", seed=7, dtype=np.complex128)
    H = t4a.models.heisenberg(L, conserve="Sz")
    q = ic.to_quimb(psi)
    ours = float(t4a.expectation(psi, H))
    theirs = complex(q.H @ qtn.MPO_ham_heis(L).apply(q)) / complex(q.H @ q)
    assert abs(theirs - ours) < 1e-12
    qH = ic.mpo_to_quimb(H)
    assert np.allclose(qH.to_dense(), np.asarray(H.to_dense()), atol=1e-13)
    assert abs(complex(q.H @ qH.apply(q)) / complex(q.H @ q) - ours) < 1e-12
    assert abs(float(t4a.expectation(psi, ic.mpo_from_quimb(qtn.MPO_ham_heis(L)))) - ours) < 1e-12
    rng = np.random.default_rng(0)
    A = t4a.MPO([rng.random((1, 2, 2, 3)), rng.random((3, 2, 2, 2)), rng.random((2, 2, 2, 1))])
    small = t4a.MPS.random(3, bond_dim=4, seed=5, dtype=np.complex128)
    applied = ic.mpo_to_quimb(A).apply(ic.to_quimb(small)).to_dense().ravel()
    assert np.allclose(applied, np.asarray(A.to_dense()) @ np.asarray(small.to_dense()), atol=1e-13)
    assert np.allclose(np.asarray(ic.mpo_from_quimb(ic.mpo_to_quimb(A)).to_dense()), np.asarray(A.to_dense()))


def test_quimb_bad_inputs(qtn):
    with pytest.raises(t4a.Tensor4allTypeError, match="from_quimb expects a quimb"):
        ic.from_quimb(t4a.MPS.random(3))
    with pytest.raises(t4a.Tensor4allTypeError, match="mpo_from_quimb expects"):
        ic.mpo_from_quimb(ic.to_quimb(t4a.MPS.random(3)))
    with pytest.raises(t4a.SymmetryViolationError, match="not in one sector"):
        ic.from_quimb(ic.to_quimb(t4a.MPS.random(4, seed=1)), conserve="Sz")


def test_missing_peer_names_the_extra(monkeypatch, tmp_path):
    for name in ("quimb", "quimb.tensor", "tenpy", "h5py"):
        monkeypatch.setitem(sys.modules, name, None)
    psi = t4a.MPS.random(3)
    (tmp_path / "x.h5").write_bytes(b"")  # a file exists: the reader needs h5py to open it
    calls = (lambda: ic.to_quimb(psi), lambda: ic.to_tenpy(psi), lambda: ih.load_itensors_hdf5(tmp_path / "x.h5"))
    for call in calls:
        with pytest.raises(t4a.OptionalDependencyError, match=r"interop"):
            call()


# ---- ITensors.jl HDF5 ---------------------------------------------------------------------------


@pytest.mark.parametrize("d,conserve,local,dtype", STATES, ids=IDS)
def test_hdf5_round_trip(h5py, tmp_path, d, conserve, local, dtype):
    psi = _state(d, conserve, local, dtype)
    path = tmp_path / "state.h5"
    ih.save_itensors_hdf5(psi, path, name="psi", local=local)
    _same_state(psi, ih.load_itensors_hdf5(path, name="psi", local=local))
    assert not ih.load_itensors_hdf5(path, "psi", symmetric=False).symmetric


def test_hdf5_round_trip_short_chains_and_mpo(h5py, tmp_path):
    path = tmp_path / "f.h5"
    for L in (1, 2):
        psi = t4a.MPS.random(L, conserve="Sz", seed=1)
        ih.save_itensors_hdf5(psi, path, name=f"psi{L}")
        _same_state(psi, ih.load_itensors_hdf5(path, f"psi{L}"))
    H = t4a.models.heisenberg(5)
    ih.save_itensors_hdf5(H, path, name="H")
    H2 = ih.load_itensors_hdf5(path, "H")
    assert isinstance(H2, t4a.MPO) and H2.local == "spin-1/2"
    assert np.allclose(np.asarray(H2.to_dense()), np.asarray(H.to_dense()))
    with h5py.File(path) as f:
        assert sorted(f) == ["H", "psi1", "psi2"]  # one file, several objects


def _text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def _index(g):
    return {k: g[k][()] for k in ("id", "dim", "dir", "plev")} | {"tags": _text(g["tags"]["tags"][()])}


def test_hdf5_layout_is_itensors(h5py, tmp_path):
    """The names, types and values of ITensors.jl's HDF5.write for MPS, ITensor, IndexSet, Index,
    TagSet, QNBlocks, QN, Dense and BlockSparse (ext/ITensorsHDF5Ext, NDTensorsHDF5Ext)."""
    path = tmp_path / "layout.h5"
    ih.save_itensors_hdf5(t4a.MPS.random(3, bond_dim=2, seed=0), path, "dense")
    ih.save_itensors_hdf5(t4a.MPS.product_state([0, 1, 0], conserve="Sz"), path, "qn")
    ih.save_itensors_hdf5(t4a.models.heisenberg(3), path, "H")
    with h5py.File(path) as f:
        for name, kind in (("dense", "MPS"), ("qn", "MPS"), ("H", "MPO")):
            g = f[name]
            assert _text(g.attrs["type"]) == kind and g.attrs["version"] == 1
            assert (g["length"][()], g["llim"][()], g["rlim"][()]) == (3, 0, 4)
            assert sorted(k for k in g if "[" in k) == [f"{kind}[{n}]" for n in (1, 2, 3)]
            t = g[f"{kind}[2]"]
            assert _text(t.attrs["type"]) == "ITensor" and _text(t["inds"].attrs["type"]) == "IndexSet"
            assert t["inds"]["length"][()] == (3 if kind == "MPS" else 4)
            ix = t["inds"]["index_1"]
            assert _text(ix.attrs["type"]) == "Index" and _text(ix["tags"].attrs["type"]) == "TagSet"
            assert ix["id"].dtype == np.uint64 and ix["dim"].dtype == np.int64 and ix["id"].shape == ()
            tid = g.attrs.get_id("type").get_type()  # HDF5.jl's String: fixed length, null-terminated, UTF-8
            assert (tid.get_size(), tid.get_strpad(), tid.get_cset()) == (len(kind), 0, h5py.h5t.CSET_UTF8)
        d = f["dense"]
        first, second = (_index(d[f"MPS[{n}]"]["inds"][f"index_{k}"]) for n, k in ((1, 2), (2, 1)))
        assert first["id"] == second["id"] and first["tags"] == "Link,l=1" and first["dir"] == 0
        site = _index(d["MPS[1]"]["inds"]["index_1"])
        assert site["tags"] == "S=1/2,Site,n=1" and site["id"] == ih.SITE_ID + 1 and site["plev"] == 0
        st = d["MPS[2]"]["storage"]
        assert _text(st.attrs["type"]) == "Dense{Float64}" and st["data"].shape == (2 * 2 * 2,)
        h = f["H"]["MPO[1]"]["inds"]  # (s1', s1, l1): the same site ids as the state's
        assert [_index(h[f"index_{k}"])["plev"] for k in (1, 2)] == [1, 0]
        assert _index(h["index_1"])["id"] == site["id"]
        q = f["qn"]["MPS[2]"]
        st = q["storage"]
        assert _text(st.attrs["type"]) == "BlockSparse{Float64}" and st["ndims"][()] == 3
        assert list(st["offsets"][()]) == [1, 2, 1, 0] and list(st["data"][()]) == [1.0]  # one block (l1, s2=dn, l2)
        left, s2, right = (_index(q["inds"][f"index_{k}"]) for k in (1, 2, 3))
        assert (left["dir"], s2["dir"], right["dir"]) == (1, 1, -1)  # links In at their left site, Out at the right
        ix = q["inds"]["index_2"]
        assert _text(ix.attrs["space_type"]) == "QNBlocks"
        sp = ix["space"]
        assert _text(sp.attrs["type"]) == "QNBlocks" and sp["length"][()] == 2 and list(sp["dims"][()]) == [1, 1]
        qn = sp["QN[2]"]
        assert _text(qn.attrs["type"]) == "QN"
        assert [_text(x) for x in qn["names"][()]] == ["Sz", "", "", ""]
        assert list(qn["vals"][()]) == [-1, 0, 0, 0] and list(qn["mods"][()]) == [1, 0, 0, 0]
        link = q["inds"]["index_3"]["space"]["QN[1]"]  # the total Sz of sites 1, 2 (in units of 1/2)
        assert list(link["vals"][()]) == [0, 0, 0, 0]


def _put(g, kind):
    g.attrs["type"] = np.bytes_(kind)  # h5py's own strings (null-padded ASCII): read as HDF5.jl's
    g.attrs["version"] = np.int64(1)
    return g


def _write_index(h5py, parent, name, ident, dim, direction, tags, space=None, plev=0):
    g = _put(parent.create_group(name), "Index")
    g["id"], g["dim"], g["dir"], g["plev"] = np.uint64(ident), np.int64(dim), np.int64(direction), np.int64(plev)
    _put(g.create_group("tags"), "TagSet")["tags"] = np.bytes_(tags)
    g.attrs["space_type"] = np.bytes_("Int" if space is None else "QNBlocks")
    if space is not None:
        s = _put(g.create_group("space"), "QNBlocks")
        s["length"], s["dims"] = np.int64(len(space)), np.array([d for _, d in space], dtype=np.int64)
        for k, (val, _) in enumerate(space):
            qn = _put(s.create_group(f"QN[{k + 1}]"), "QN")
            qn.create_dataset("names", data=["Sz", "", "", ""], dtype=h5py.string_dtype())
            qn["vals"], qn["mods"] = np.array([val, 0, 0, 0]), np.array([1, 0, 0, 0])


def _write_tensor(h5py, parent, name, inds, storage, data, offsets=None):
    g = _put(parent.create_group(name), "ITensor")
    s = _put(g.create_group("inds"), "IndexSet")
    s["length"] = np.int64(len(inds))
    for k, ix in enumerate(inds):
        _write_index(h5py, s, f"index_{k + 1}", *ix)
    st = _put(g.create_group("storage"), storage)
    st["data"] = np.asarray(data)
    if offsets is not None:
        st["ndims"], st["offsets"] = np.int64(len(inds)), np.array(offsets, dtype=np.int64)


def test_hdf5_reads_what_itensors_writes(h5py, tmp_path):
    """A file written by hand in ITensors.jl's layout as its productMPS makes a QN MPS (links In at
    their left site, the tensors' indices in another order than ours) and a dense complex MPS."""
    path = tmp_path / "itensors.h5"
    up_dn = [(1, 1), (-1, 1)]
    with h5py.File(path, "w") as f:
        g = _put(f.create_group("psi"), "MPS")
        g["length"], g["rlim"], g["llim"] = np.int64(3), np.int64(4), np.int64(0)
        s = [(1000 + n, 2, 1, f"S=1/2,Site,n={n}", up_dn) for n in (1, 2, 3)]
        l1, l2 = ((77, 1, -1, "Link,l=1", [(1, 1)]), (78, 1, -1, "Link,l=2", [(0, 1)]))
        dag = lambda ix: ix[:2] + (-ix[2],) + ix[3:]  # noqa: E731
        _write_tensor(h5py, g, "MPS[1]", [s[0], l1], "BlockSparse{Float64}", [1.0], [1, 1, 0])  # up
        _write_tensor(h5py, g, "MPS[2]", [l2, s[1], dag(l1)], "BlockSparse{Float64}", [1.0], [1, 2, 1, 0])  # dn
        _write_tensor(h5py, g, "MPS[3]", [s[2], dag(l2)], "BlockSparse{Float64}", [-2.0], [1, 1, 0])  # up
        g = _put(f.create_group("bell"), "MPS")
        g["length"], g["rlim"], g["llim"] = np.int64(2), np.int64(3), np.int64(0)
        a = np.array([[1.0, 0.0], [0.0, 1j]])  # (s1, l1)
        _write_tensor(
            h5py, g, "MPS[1]", [(5, 2, 0, "S=1/2,Site,n=1"), (9, 2, 0, "Link,l=1")], "Dense{ComplexF64}", a.ravel("F")
        )
        b = np.array([[0.0, 1.0], [1.0, 0.0]])  # (l1, s2)
        _write_tensor(
            h5py, g, "MPS[2]", [(9, 2, 0, "Link,l=1"), (6, 2, 0, "S=1/2,Site,n=2")], "Dense{Float64}", b.ravel("F")
        )
    psi = ih.load_itensors_hdf5(path, "psi")
    assert psi.symmetric and psi.sector == {"Sz": 0.5}
    _same_state(psi, t4a.MPS.product_state([0, 1, 0], conserve="Sz") * -2.0)
    bell = ih.load_itensors_hdf5(path, "bell")
    assert np.allclose(np.asarray(bell.to_dense()), [0.0, 1.0, 1j, 0.0])


def test_hdf5_bad_files(h5py, tmp_path):
    psi = t4a.MPS.random(3, conserve="Sz")
    with pytest.raises(t4a.MPSFileNotFoundError):
        ih.load_itensors_hdf5(tmp_path / "missing.h5")
    text = tmp_path / "text.h5"
    text.write_text("not hdf5")
    with pytest.raises(ih.ITensorsFileError, match="not an HDF5 file"):
        ih.load_itensors_hdf5(text)
    with pytest.raises(ih.ITensorsFileError, match="not an HDF5 file"):
        ih.save_itensors_hdf5(psi, text)
    assert text.read_text() == "not hdf5"
    path = tmp_path / "f.h5"
    ih.save_itensors_hdf5(psi, path, "psi")
    with pytest.raises(ih.ITensorsFileError, match=r"no such group.*\['psi'\]"):
        ih.load_itensors_hdf5(path, "phi")
    with h5py.File(path, "a") as f:
        _put(f.create_group("tensor"), "ITensor")
        _put(f.create_group("broken"), "MPS")["length"] = np.int64(2)
    with pytest.raises(ih.ITensorsFileError, match="holds type 'ITensor', not an MPS"):
        ih.load_itensors_hdf5(path, "tensor")
    with pytest.raises(ih.ITensorsFileError, match="missing entry"):
        ih.load_itensors_hdf5(path, "broken")
    with pytest.raises(t4a.Tensor4allTypeError, match="expects an MPS or an MPO"):
        ih.save_itensors_hdf5(np.zeros(3), path)
    assert issubclass(ih.ITensorsFileError, t4a.MPSFileError) and issubclass(ic.UnsupportedSiteError, ValueError)
