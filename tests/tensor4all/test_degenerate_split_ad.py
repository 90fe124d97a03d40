"""Derivatives through the differentiated splits of TEBD and TDVP where the kept singular values
are degenerate (a product of singlets: every Schmidt spectrum is (1/sqrt 2, 1/sqrt 2)).

Inside a degenerate block the SVD's rule cannot give the rotation of the singular vectors and
drops it; a split that put the weights on a factor as ``diag(s) vh`` needed that rotation (the
limit of the product is finite) and lost part of the derivative (TEBD 0.8%, TDVP 6e-5). The
splits now take the weighted factor as the projection ``u^H m`` (``linalg.truncation
.projected_factors``), a function of the kept subspace alone. Checked here against central
finite differences of the same computed map (no truncation, tight Krylov tolerance: the map is
smooth there), in reverse and forward mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import models
from tensor4all.linalg.truncation import absorb, projected_factors

L = 6
SINGLET = np.array([0.0, 1.0, -1.0, 0.0]) / np.sqrt(2.0)


def _dimers() -> t4a.MPS:
    return t4a.MPS.from_dense(np.kron(np.kron(SINGLET, SINGLET), SINGLET), L)


def _field_mpo(h):
    os = models.heisenberg_opsum(L, Jz=0.8)
    for i in range(L):
        os += (h, "Sx", i)
    return t4a.MPO.from_opsum(os, L)


def _check(loss, rtol: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the finite differences' runs may warn on nothing here
        rev = float(np.asarray(tidu.grad(loss)(tf.asarray(0.0))))
        _, fwd = tidu.jvp(loss, (tf.asarray(0.0),), (tf.asarray(1.0),))
        e = 1e-4
        fd = (float(np.asarray(loss(tf.asarray(e)))) - float(np.asarray(loss(tf.asarray(-e))))) / (2 * e)
    assert abs(fd) > 1e-6  # the field moves the observable at first order
    assert rev == pytest.approx(fd, rel=rtol)
    assert float(np.asarray(fwd)) == pytest.approx(fd, rel=rtol)


def test_tebd_gradient_at_degenerate_schmidt_values() -> None:
    """Before: AD -0.00162784 against -0.00164041 (t = 1); now equal to 2e-8 relative."""

    def loss(h):
        st = t4a.tebd(_field_mpo(h), _dimers(), 0.4, 0.1, imaginary=True, cutoff=0.0).state
        return tf.real(tf.sum(st.expect("Sx")))

    _check(loss, 1e-6)


def test_tdvp_gradient_at_degenerate_schmidt_values() -> None:
    """Before: AD -5.39933e-5 against -5.39965e-5 (6e-5 relative); now equal to 3e-9."""

    def loss(h):
        st = t4a.tdvp(_field_mpo(h), _dimers(), 0.2, 0.1, imaginary=True, cutoff=0.0, krylov_tol=1e-14).state
        return tf.real(tf.sum(st.expect("Sx")))

    _check(loss, 2e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("direction", ["right", "left"])
def test_projected_factors_are_the_absorbed_ones(dtype, direction) -> None:
    """For the SVD's own kept vectors the projection is ``absorb``'s factors, to rounding, on NumPy
    arrays and on tenferro tensors; the product is the rank-k truncation."""
    rng = np.random.default_rng(3)
    m = rng.normal(size=(7, 5)) + (1j * rng.normal(size=(7, 5)) if dtype == np.complex128 else 0)
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    k = 3
    want = absorb(u[:, :k], s[:k], vh[:k], direction)
    got = projected_factors(m, u[:, :k], vh[:k], direction)
    got_tf = projected_factors(tf.asarray(m), tf.asarray(u[:, :k]), tf.asarray(vh[:k]), direction)
    for w, g, gt in zip(want, got, got_tf):
        np.testing.assert_allclose(g, w, atol=1e-13)
        np.testing.assert_allclose(np.asarray(gt), w, atol=1e-13)
    np.testing.assert_allclose(got[0] @ got[1], (u[:, :k] * s[:k]) @ vh[:k], atol=1e-13)


def test_split_derivative_through_a_degenerate_block() -> None:
    """The principle alone: ``m -> left @ right`` through the SVD is the identity when nothing is
    truncated, so its derivative is ``dm`` also where the singular values are degenerate; with
    the weights absorbed as ``diag(s) vh`` the SVD's rule loses the block's symmetric part."""
    rng = np.random.default_rng(0)
    q1, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    q2, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    m0 = q1 @ np.diag([1.0, 1.0, 0.5, 0.2]) @ q2.T  # a degenerate top pair
    c = rng.normal(size=(4, 4))

    def loss(x):
        u, s, vh = tf.linalg.svd(x)
        left, right = projected_factors(x, u, vh, "right")
        return tf.sum(tf.multiply(tf.asarray(c), tf.matmul(left, right)))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a gauge-invariant use: no GaugeWarning, no DegeneracyWarning
        g = np.asarray(tidu.grad(loss)(tf.asarray(m0)))
    np.testing.assert_allclose(g, c, atol=1e-12)


def _exact_susceptibility(H: t4a.MPO, n: int, beta: float) -> float:
    """``chi = (1 / beta) d^2 ln Z / dh^2`` at ``h = 0`` for ``H - h sum_i Sz_i``, by exact
    diagonalization (second differences of ``ln Z``, step 1e-4: error ~1e-9)."""
    hd = np.asarray(H.to_dense()).real
    sz = np.diag([0.5, -0.5])
    m = sum(np.kron(np.kron(np.eye(2**i), sz), np.eye(2 ** (n - i - 1))) for i in range(n))

    def log_z(h: float) -> float:
        w = np.linalg.eigvalsh(hd - h * m)
        return float(np.log(np.sum(np.exp(-beta * (w - w[0])))) - beta * w[0])

    e = 1e-4
    return (log_z(e) - 2 * log_z(0.0) + log_z(-e)) / e**2 / beta


def test_susceptibility_at_zero_field_cuts_through_degenerate_multiplets() -> None:
    """The spin-flip symmetric purification at h = 0 has degenerate Schmidt values, and the
    truncation cuts through such pairs (kept 5.3e-7, dropped 5.3e-7). The tangent engine divided
    by ``s_i^2 - s_j^2`` (1e-25): chi was 0.9658 against 0.86157 at ``cutoff=1e-12``; now it drops
    the undefined rotation as tenferro's rule does, and agrees with the traced engine and with
    exact diagonalization (to the Trotter and truncation errors)."""
    n = 5
    H = t4a.models.heisenberg(n, Jz=0.7)
    exact = _exact_susceptibility(H, n, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chi = {
            (cut, engine): float(
                np.asarray(
                    t4a.thermodynamics(H, 1.0, dbeta=0.05, cutoff=cut, field="Sz", engine=engine).susceptibility
                )[-1]
            )
            for cut in (1e-16, 1e-12)
            for engine in ("tangent", "traced")
        }
    assert chi[(1e-16, "tangent")] == pytest.approx(exact, rel=1e-6)  # before: 2.1e-6 off
    assert chi[(1e-16, "traced")] == pytest.approx(exact, rel=1e-6)
    assert chi[(1e-12, "tangent")] == pytest.approx(chi[(1e-12, "traced")], rel=1e-8)  # before: 12% apart
    assert chi[(1e-12, "tangent")] == pytest.approx(exact, rel=2e-5)  # the truncation's error


RANDOM = t4a.MPS.random(4, bond_dim=2, seed=1)


@pytest.mark.parametrize(
    "name, loss",
    [
        ("add", lambda p: t4a.add(p, p, max_bond=8).norm()),
        ("canonicalize", lambda p: tf.real(t4a.MPS((p + p).tensors).canonicalize(2).expect("Sz", 1))),
        (
            "apply-naive",
            lambda p: t4a.expectation(t4a.apply(models.heisenberg(4), p, method="naive"), models.heisenberg(4)),
        ),
    ],
)
def test_rank_deficient_chains_differentiate(name, loss):
    """A sum of a chain with itself, or ``W|psi>`` with the uncompressed MPO, has rank-deficient
    bonds: the QR's trailing factors have no derivative, and reverse mode raised
    ``SingularMatrixError`` while forward mode returned NaN. The orthonormalization takes the SVD
    there (``linalg.truncation.orthonormal_factors``): both modes equal finite differences."""
    rng = np.random.default_rng(5)
    d = t4a.MPS([tf.asarray(rng.normal(size=tuple(t.shape))) for t in RANDOM.tensors])

    def along(e: float):
        return loss(t4a.MPS([x + e * y for x, y in zip(RANDOM.tensors, d.tensors)]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fwd = tidu.jvp(loss, (RANDOM,), (d,))
        g = tidu.grad(loss)(RANDOM)
        e = 1e-6
        fd = (float(np.asarray(along(e))) - float(np.asarray(along(-e)))) / (2 * e)
    rev = sum(float(np.sum(np.asarray(gt) * np.asarray(dt))) for gt, dt in zip(g.tensors, d.tensors))
    assert abs(fd) > 1e-3
    assert float(np.asarray(fwd)) == pytest.approx(fd, rel=1e-7)
    assert rev == pytest.approx(fd, rel=1e-7)


def test_complex_fit_gradient_without_gauge_warnings():
    """``apply(method="fit")`` on a complex state: each split's ``u`` feeds the next local tensor
    through ``conj(u)``, which compensates its phase gauge; tenferro's per-SVD check warned
    (GaugeWarning, relative sizes 0.5 to 1.4) on a correct gradient. The splits now fix the phases
    of complex singular vectors (``linalg.truncation.fixed_phases``): no warning, the same gradient."""
    psi = t4a.MPS.random(6, bond_dim=4, seed=3, dtype=np.complex128)
    H = models.heisenberg(6)
    rng = np.random.default_rng(0)
    d = t4a.MPS(
        [tf.asarray(rng.normal(size=tuple(t.shape)) + 1j * rng.normal(size=tuple(t.shape))) for t in psi.tensors]
    )

    def loss(p):
        out = t4a.apply(H, p, method="fit", max_bond=8)
        return tf.real(t4a.overlap(out, out))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tidu.grad(loss)(psi)

    def along(e: float) -> float:
        return float(np.asarray(loss(t4a.MPS([x + e * y for x, y in zip(psi.tensors, d.tensors)]))))

    fd = (along(1e-6) - along(-1e-6)) / 2e-6
    rev = sum(float(np.real(np.sum(np.asarray(gt) * np.asarray(dt)))) for gt, dt in zip(g.tensors, d.tensors))
    assert rev == pytest.approx(fd, rel=1e-7)


def _symmetric_like(p: t4a.MPS, rng: np.random.Generator, e: float = 0.0, d: t4a.MPS | None = None) -> t4a.MPS:
    """A symmetric state of ``p``'s blocks: random ones (``d`` None), or ``p + e d``."""
    sites = []
    for i, t in enumerate(p.tensors):
        if d is None:
            blocks = {k: tf.asarray(rng.normal(size=tuple(b.shape))) for k, b in t.blocks.items()}
        else:
            blocks = {k: b + e * d.tensors[i].blocks[k] for k, b in t.blocks.items()}
        sites.append(t4a.SymmetricTensor(blocks, t.legs, t.charge))
    return t4a.MPS._symmetric(sites, p._grading)


@pytest.mark.parametrize(
    "name, loss",
    [
        ("add", lambda q, H: tf.real(t4a.expectation(t4a.add(q, q), H))),
        ("canonicalize", lambda q, H: tf.real(t4a.expectation((q + q).canonicalize(1), H))),
    ],
)
def test_rank_deficient_symmetric_chains_differentiate(name, loss):
    """The same on a U(1) state: the blockwise QR of ``canonical_sites`` takes the SVD of a
    rank-deficient block (``networks.symmetric_sites._orthonormal_qr``); reverse mode raised
    ``SingularMatrixError`` and forward mode returned NaN."""
    p = t4a.MPS.random(4, bond_dim=3, seed=1, charge=0)
    H = models.heisenberg(4, conserve="Sz")
    d = _symmetric_like(p, np.random.default_rng(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fwd = tidu.jvp(lambda q: loss(q, H), (p,), (d,))
        g = tidu.grad(lambda q: loss(q, H))(p)
        e = 1e-6
        fd = (
            float(np.asarray(loss(_symmetric_like(p, None, e, d), H)))
            - float(np.asarray(loss(_symmetric_like(p, None, -e, d), H)))
        ) / (2 * e)
    rev = sum(
        float(np.sum(np.asarray(gt.blocks[k]) * np.asarray(dt.blocks[k])))
        for gt, dt in zip(g.tensors, d.tensors)
        for k in dt.blocks
    )
    assert abs(fd) > 1e-3
    assert float(np.asarray(fwd)) == pytest.approx(fd, rel=1e-7)
    assert rev == pytest.approx(fd, rel=1e-7)
