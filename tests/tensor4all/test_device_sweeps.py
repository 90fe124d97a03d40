"""DMRG and TDVP with ``placement=tenferro.gpu(0)``: the same answers as on the CPU (to 1e-10)
and as exact diagonalization / exponentiation built here from explicit matrices, with the
arrays on the device and no host round trip per effective-Hamiltonian product.

These tests run in every mode: on a real GPU under ``pytest --placement gpu`` (CuPy), and
otherwise against the CPU stand-in for CuPy (``tests/_fake_cupy.py``), installed for the
duration of each test, which refuses implicit host/device mixing and counts device-to-host
copies.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tensor4all as t4a
from tensor4all import models

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _TESTS)
import _fake_cupy  # noqa: E402

pytestmark = pytest.mark.device_sweeps


@pytest.fixture
def device(request):
    """The CuPy module in use: the real one under ``--placement gpu``, else the stand-in."""
    mode = request.config.getoption("--placement")
    if mode in ("gpu", "fakegpu"):
        import cupy  # noqa: PLC0415  (optional: present in these modes)

        yield cupy
        return
    with _fake_cupy.installed() as cp:
        yield cp


def _is_fake(cp) -> bool:
    return getattr(cp, "FAKE", False)


def _on_host(state) -> bool:
    """Every site tensor of ``state`` (dense, or the leaves of symmetric ones) is a host tensor,
    whatever tenferro's default placement is (under ``--placement gpu`` it is the GPU)."""
    leaves = [leaf for t in state.tensors for leaf in (t.leaves if state.symmetric else (t,))]
    return all(t.placement == tf.CPU and type(t.numpy()) is np.ndarray for t in leaves)


def _ed_ground(H) -> float:
    return float(np.linalg.eigvalsh(np.asarray(H.to_dense()))[0])


@pytest.mark.parametrize("two_site", [True, False])
def test_dmrg_on_device_matches_cpu_and_exact_diagonalization(device, two_site):
    H = models.heisenberg(10, Jz=0.7, h=0.1)
    kw = dict(
        max_bond=32,
        cutoff=0.0,
        tol=1e-12,
        sweeps=12,
        two_site=two_site,
        conserve="none",
        noise=None if two_site else 1e-3,
    )
    cpu = t4a.dmrg(H, placement=tf.CPU, **kw)
    gpu = t4a.dmrg(H, placement=tf.gpu(0), **kw)
    e0 = _ed_ground(H)
    assert abs(cpu.energy - e0) < 1e-10
    assert abs(gpu.energy - e0) < 1e-10
    assert abs(gpu.energy - cpu.energy) < 1e-10
    assert abs(gpu.variance) < 1e-9
    # the state comes back to the host, normalized, and is the same ground state
    assert _on_host(gpu.state)
    assert abs(abs(complex(t4a.overlap(gpu.state, cpu.state))) - 1.0) < 1e-9


def test_dmrg_on_device_complex_hamiltonian(device):
    L = 8
    os_ = models.heisenberg_opsum(L, Jz=0.5)
    for i in range(L - 1):  # a Dzyaloshinskii-Moriya term: complex Hermitian
        os_ += (0.3j, "S+", i, "S-", i + 1)
        os_ += (-0.3j, "S-", i, "S+", i + 1)
    H = t4a.MPO.from_opsum(os_, L, "spin-1/2")
    res = t4a.dmrg(H, placement=tf.gpu(0), max_bond=16, cutoff=0.0, tol=1e-12, conserve="none")
    assert abs(res.energy - _ed_ground(H)) < 1e-10


def test_dmrg_energy_gradient_on_device(device):
    """Hellmann-Feynman dE/dJz on the device equals the CPU's and the exact <SzSz> sum."""
    import tidu  # noqa: PLC0415

    def energy(jz, placement):
        return t4a.dmrg(
            models.heisenberg(8, Jz=jz), placement=placement, max_bond=16, cutoff=0.0, tol=1e-12, conserve="none"
        ).energy

    g_cpu = float(tidu.grad(lambda j: energy(j, tf.CPU))(tf.asarray(0.8)))
    g_gpu = float(tidu.grad(lambda j: energy(j, tf.gpu(0)))(tf.asarray(0.8)))
    h = 1e-5
    fd = (_ed_ground(models.heisenberg(8, Jz=0.8 + h)) - _ed_ground(models.heisenberg(8, Jz=0.8 - h))) / (2 * h)
    assert abs(g_gpu - g_cpu) < 1e-9
    assert abs(g_gpu - fd) < 1e-7


def test_eigsh_solver_on_device(device):
    H = models.heisenberg(8)
    res = t4a.dmrg(H, placement=tf.gpu(0), max_bond=16, cutoff=0.0, tol=1e-12, eigensolver="eigsh", conserve="none")
    assert abs(res.energy - _ed_ground(H)) < 1e-10


def test_matvec_and_lanczos_stay_on_device(device):
    """The effective-Hamiltonian product reads nothing back; one Lanczos step reads two scalars."""
    from tensor4all.algorithms.dense_backend import DenseBackend  # noqa: PLC0415  (white-box: the hot loop)
    from tensor4all.linalg.eigensolver import lanczos  # noqa: PLC0415
    from tensor4all.algorithms.schedule import RIGHT, Step  # noqa: PLC0415

    H = models.heisenberg(8)
    psi = t4a.MPS.random(8, bond_dim=8, seed=1)
    backend = DenseBackend([np.asarray(w) for w in H.tensors], [np.asarray(a) for a in psi.tensors], tf.gpu(0))
    assert all(type(a).__module__.startswith("cupy") for a in backend.psi + backend.ws)
    local = backend.local_problem(Step(0, RIGHT, 2))  # the centre is at site 0
    if _is_fake(device):
        with _fake_cupy.allow_synchronize(False):
            local.op.matvec(local.v0)  # raises DeviceSynchronized on any device-to-host copy
        before = _fake_cupy.TRANSFERS["device_to_host"]
        _, _, n = lanczos(local.op, local.v0, tol=0.0, max_iter=6, min_iter=6)
        reads = _fake_cupy.TRANSFERS["device_to_host"] - before
        assert n == 6 and reads <= 3 * n  # alpha, beta (and the final norm): scalars only
    else:
        import cupyx  # noqa: PLC0415

        with cupyx.allow_synchronize(False):
            local.op.matvec(local.v0)


def _site_op(op, i, L):
    return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))


@pytest.mark.parametrize("two_site", [True, False])
def test_tdvp_on_device_matches_cpu_and_exact_evolution(device, two_site):
    L, dt, t = 8, 0.05, 0.5
    H = models.heisenberg(L, Jz=0.6)
    neel = t4a.MPS.product_state([0, 1] * (L // 2))
    # a state of full bond dimensions (2, 4, 8, 16, ...: the whole Hilbert space), so that TDVP's
    # projection is exact and no bond holds singular values at the rounding level, whose
    # keeping or dropping (the SVD on the CPU, the Gram matrix's eigenvalues on the device)
    # would change the manifold
    psi0 = (neel + 1e-2 * t4a.MPS.random(L, bond_dim=16, seed=2)).normalize()
    kw = dict(two_site=two_site, max_bond=16, cutoff=0.0, krylov_tol=1e-13)
    cpu = t4a.tdvp(H, psi0, t, dt, placement=tf.CPU, **kw)
    gpu = t4a.tdvp(H, psi0, t, dt, placement=tf.gpu(0), **kw)
    assert _on_host(gpu.state)
    v_cpu, v_gpu = np.asarray(cpu.state.to_dense()).reshape(-1), np.asarray(gpu.state.to_dense()).reshape(-1)
    assert np.max(np.abs(v_gpu - v_cpu)) < 1e-10
    # against the exact exponential of the explicit Hamiltonian matrix
    SX, SY, SZ = np.array([[0, 0.5], [0.5, 0]]), np.array([[0, -0.5j], [0.5j, 0]]), np.diag([0.5, -0.5])
    Hm = sum(
        _site_op(SX, i, L) @ _site_op(SX, i + 1, L)
        + _site_op(SY, i, L) @ _site_op(SY, i + 1, L)
        + 0.6 * _site_op(SZ, i, L) @ _site_op(SZ, i + 1, L)
        for i in range(L - 1)
    )
    v0 = np.asarray(psi0.to_dense()).reshape(-1)
    exact = scipy.linalg.expm(-1j * t * Hm) @ v0
    assert np.max(np.abs(v_gpu - exact)) < 1e-9  # the whole space: exact up to the Krylov tolerance
    assert abs(np.linalg.norm(v_gpu) - np.linalg.norm(v0)) < 1e-10


@pytest.mark.parametrize("two_site", [True, False])
def test_device_bonds_never_exceed_the_rank(device, two_site):
    """The device's Gram-matrix split keeps at most min(m.shape) states (the rank): one-site TDVP
    keeps its small bonds and equals the CPU's run, two-site sweeps stay within the Hilbert
    space's bond dimensions, as the CPU's thin SVD does."""
    L = 10
    H = models.heisenberg(L, Jz=0.6)
    psi0 = t4a.MPS.random(L, bond_dim=4, seed=3)
    kw = dict(two_site=two_site, max_bond=64, cutoff=0.0, krylov_tol=1e-13)
    cpu = t4a.tdvp(H, psi0, 0.2, 0.05, placement=tf.CPU, **kw)
    gpu = t4a.tdvp(H, psi0, 0.2, 0.05, placement=tf.gpu(0), **kw)
    exact_dims = [min(2 ** (i + 1), 2 ** (L - i - 1)) for i in range(L - 1)]
    assert all(b <= e for b, e in zip(gpu.state.bond_dims, exact_dims))
    if not two_site:
        assert list(gpu.state.bond_dims) == list(cpu.state.bond_dims) == [min(4, e) for e in exact_dims]
        v_cpu = np.asarray(cpu.state.to_dense()).reshape(-1)
        v_gpu = np.asarray(gpu.state.to_dense()).reshape(-1)
        assert np.max(np.abs(v_gpu - v_cpu)) < 1e-10
    res = t4a.dmrg(
        H, psi0, placement=tf.gpu(0), two_site=two_site, max_bond=64, cutoff=0.0, noise=0.0, sweeps=2, conserve="none"
    )
    assert all(b <= e for b, e in zip(res.state.bond_dims, exact_dims))


def _sector_ground(H, L: int, mask) -> float:
    """The lowest eigenvalue of H's dense matrix restricted to the basis states ``mask``."""
    h = np.asarray(H.to_dense())
    idx = np.flatnonzero(mask)
    return float(np.linalg.eigvalsh(h[np.ix_(idx, idx)])[0])


@pytest.mark.parametrize("two_site", [True, False])
def test_symmetric_dmrg_on_device_matches_cpu_and_sector_diagonalization(device, two_site):
    L = 10
    H = models.heisenberg(L, Jz=0.8, h=0.05, conserve="Sz")
    kw = dict(
        max_bond=32, cutoff=0.0, tol=1e-12, sweeps=12, two_site=two_site, sector=1, noise=None if two_site else 1e-3
    )
    cpu = t4a.dmrg(H, placement=tf.CPU, **kw)
    gpu = t4a.dmrg(H, placement=tf.gpu(0), **kw)
    ups = np.array([bin(n).count("1") for n in range(2**L)])  # basis state 0 = up at each site
    exact = _sector_ground(H, L, (L - ups) - ups == 2)  # 2 Sz = n_up - n_down = 2 (bit 1 = down)
    assert gpu.sector == {"Sz": 1.0} and gpu.state.symmetric and _on_host(gpu.state)
    assert abs(gpu.energy - exact) < 1e-10 and abs(cpu.energy - exact) < 1e-10
    assert abs(gpu.energy - cpu.energy) < 1e-10
    assert abs(abs(complex(t4a.overlap(gpu.state.dense(), cpu.state.dense()))) - 1.0) < 1e-9


def test_hubbard_n_sz_on_device(device):
    """Electrons with N and Sz conserved on the device: the half-filled Hubbard chain's sector
    ground energy against the CPU run and exact diagonalization of the MPO's matrix."""
    L = 4
    H = models.hubbard(L, U=4.0)
    kw = dict(max_bond=64, cutoff=0.0, tol=1e-12, sweeps=10)
    gpu = t4a.dmrg(H, placement=tf.gpu(0), **kw)
    cpu = t4a.dmrg(H, placement=tf.CPU, **kw)
    assert gpu.sector == {"N": 4.0, "Sz": 0.0}
    assert abs(gpu.energy - cpu.energy) < 1e-10
    # the electron basis per site: empty, up, down, double (N = 0, 1, 1, 2; 2Sz = 0, 1, -1, 0)
    n = np.array([0, 1, 1, 2])
    sz2 = np.array([0, 1, -1, 0])
    digits = np.array(np.unravel_index(np.arange(4**L), (4,) * L))
    mask = (n[digits].sum(0) == L) & (sz2[digits].sum(0) == 0)
    assert abs(gpu.energy - _sector_ground(H, L, mask)) < 1e-10


def test_symmetric_tdvp_on_device_matches_cpu(device):
    L, dt, t = 8, 0.05, 0.3
    H = models.heisenberg(L, Jz=0.6, conserve="Sz")
    psi0 = t4a.MPS.product_state([0, 1] * (L // 2), conserve="Sz")
    kw = dict(two_site=True, max_bond=16, cutoff=1e-14, krylov_tol=1e-13)
    cpu = t4a.tdvp(H, psi0, t, dt, placement=tf.CPU, **kw)
    gpu = t4a.tdvp(H, psi0, t, dt, placement=tf.gpu(0), **kw)
    assert gpu.state.symmetric and _on_host(gpu.state)
    v_cpu = np.asarray(cpu.state.dense().to_dense()).reshape(-1)
    v_gpu = np.asarray(gpu.state.dense().to_dense()).reshape(-1)
    # the same steps (the block SVDs on both; only rounding differs)
    assert np.max(np.abs(v_gpu - v_cpu)) < 1e-10


def test_device_placement_errors(device):
    H = models.heisenberg(6, conserve="Sz")
    with pytest.raises(t4a.InvalidOptionError, match="placement"):
        t4a.dmrg(H, placement="gpu")
    with pytest.raises(t4a.InvalidOptionError, match="does not exist"):
        t4a.dmrg(H, placement=tf.gpu(7), conserve="none")
    import tidu  # noqa: PLC0415

    with pytest.raises(t4a.InvalidOptionError, match="CPU only"):
        tidu.grad(
            lambda j: t4a.tdvp(
                models.heisenberg(4, Jz=j), t4a.MPS.product_state([0, 1, 0, 1]), 0.1, 0.05, placement=tf.gpu(0)
            ).state.norm()
        )(tf.asarray(1.0))


def test_cli_dmrg_on_device(device, tmp_path, capsys):
    from tensor4all.cli import main  # noqa: PLC0415

    out = tmp_path / "run.json"
    assert main(["dmrg", "--L", "8", "--max-bond", "16", "--device", "gpu", "--json", str(out), "--quiet"]) == 0
    import json  # noqa: PLC0415

    doc = json.loads(out.read_text())
    assert doc["parameters"]["device"] == "gpu" and doc["parameters"]["conserve"] == "Sz"
    assert abs(doc["energy"] - _ed_ground(models.heisenberg(8))) < 1e-10
    assert "on GPU 0" in capsys.readouterr().out
    assert (
        main(
            [
                "dmrg",
                "--L",
                "8",
                "--max-bond",
                "16",
                "--device",
                "gpu",
                "--conserve",
                "none",
                "--quiet",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["parameters"]["conserve"] is None and abs(doc["energy"] - _ed_ground(models.heisenberg(8))) < 1e-10


def test_sector_blocks_live_on_device(device):
    """White-box: a symmetric run's blocks and environments are device arrays, and the
    block-sparse effective-Hamiltonian product reads nothing back."""
    from tensor4all.algorithms.schedule import RIGHT, Step  # noqa: PLC0415  (white-box: the hot loop)
    from tensor4all.algorithms.sector_dmrg import SectorEngine  # noqa: PLC0415
    from tensor4all.algorithms.sector_run import resolve_sector  # noqa: PLC0415

    L = 8
    ws = [np.asarray(w) for w in models.heisenberg(L).tensors]
    spec = resolve_sector("Sz", 0, "spin-1/2", ws, None)
    engine = SectorEngine(ws, spec.w_charges, spec.q, [0, 1] * (L // 2), None, placement=tf.gpu(0))
    b = engine.backend
    assert all(x.placement.is_gpu for site in b.sites for x in site.leaves)
    assert all(type(x).__module__.startswith("cupy") for env in b.envs.right(1) for x in env.values())
    local = b.local_problem(Step(0, RIGHT, 2))
    assert type(local.v0).__module__.startswith("cupy")
    if _is_fake(device):
        with _fake_cupy.allow_synchronize(False):
            local.op.matvec(local.v0)
    assert all(x.placement == tf.CPU for site in b.host_sites() for x in site.leaves)
