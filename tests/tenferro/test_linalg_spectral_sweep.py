"""Near-degenerate spectra at every scale: tenferro's default derivative rules of
``svd``, ``eigh`` and ``eig`` against 40-digit references, never worse than JAX.

The inputs have spectra ``s * (2 + gap, 2, 1, 1/2)`` (eigh: ``s * (-1/2, 1, 2, 2 + gap)``)
for gaps ``1e-1 ... 1e-8`` and scales ``s = 1e-6 ... 1e6``; the losses depend on
the singular vectors / eigenvectors non-trivially but are gauge invariant
(reconstructions, weighted ``|U[:, 0]|^2``, weighted spectral projectors
``V diag(g) V^H`` and ``V diag(g) V^{-1}``, the matrix function ``V w^3 V^H``).

Reference: the directional derivative of each loss along two fixed random
directions, by central differences of the loss evaluated with mpmath's own
decompositions (``svd_r``/``svd_c``, ``eigsy``/``eighe``, ``eig``) at 40 digits, at
the float64 input itself (its entries convert exactly). Step ``1e-20`` (relative to
the scale): truncation ``~ t^2 / gap^3 <= 1e-16`` and rounding ``~ 1e-40 / t`` are
both far below the errors compared here (relative to the derivative ``~ 1 / gap``).

Error of a gradient ``g``: ``max_k |<g, E_k> - D_k| / max_k |D_k|`` (``<g, E> =
Re sum(g * E)``: tidu and JAX both return ``dL/dx - i dL/dy``). tenferro must satisfy
``err_tenferro <= max(err_jax, floor) + RESOLUTION`` at every point, with

* ``floor = 16 N eps max|spectrum| / gap``: the forward decomposition is backward
  stable (exact for an input perturbed by ``p(N) eps ||A||``, LAPACK's bound with
  ``p(N)`` a modest multiple of ``N``) and these gradients have relative condition
  number ``~ ||A|| / gap``, so errors of a few ``eps ||A|| / gap`` are what any
  float64 method built on a LAPACK decomposition makes (measured here, tenferro and
  JAX alike: up to 6.5 ``eps ||A|| / gap`` real, 19 complex). Below ``floor``, which
  of the two is closer is rounding luck (JAX was up to 70x closer by chance on the
  reconstruction and ``V w^3 V^H``), and another LAPACK build (CI) may shift the
  vector losses of both by such factors. The former broadening is 4 to 12 orders of
  magnitude above ``floor`` wherever it errs (``eps / gap^2`` against
  ``64 eps / gap``);
* ``RESOLUTION = 1e-13``: the float64 evaluation of ``<g, E>`` itself (32 terms of
  size ``|g| |E|``) rounds at ~1e-14 relative, so two errors closer than that cannot
  be told apart (for the vector losses tenferro and JAX agree to all printed digits).

The former default (absolute Lorentzian broadening ``eps = 1e-12``) fails this test
by ``eps / gap^2``: 1e-4 at gap 1e-4, 0.5 at gap 1e-6, and, at scale 1e-4 even for
the well-separated spectrum, by 3e-5 (``test_former_broadening_fails_the_sweep``).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._matops import as_cols, mH, mm

jax.config.update("jax_enable_x64", True)

N = 4
EPS = np.finfo(np.float64).eps
RESOLUTION = 1e-13
DPS = 40
STEP = mpmath.mpf(10) ** -20
GAPS = [10.0**-k for k in range(1, 9)]
SCALES = [10.0**k for k in (-6, -3, 0, 3, 6)]
G = np.array([1.0, -0.7, 0.4, 0.9])  # spectral weights of the projector losses
H = np.array([0.3, 1.1, -0.6, 0.2])


def _rand(rng, shape, cplx):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


class Data:
    """The fixed random ingredients of one dtype: orthogonal/unitary factors, loss
    weights, two directions."""

    def __init__(self, cplx: bool, seed: int):
        rng = np.random.default_rng(seed)
        self.cplx = cplx
        self.q1 = np.linalg.qr(_rand(rng, (N, N), cplx))[0]
        self.q2 = np.linalg.qr(_rand(rng, (N, N), cplx))[0]
        self.x = np.eye(N) + 0.3 * rng.standard_normal((N, N))  # eig: well-conditioned eigenvectors
        self.c = _rand(rng, (N, N), cplx)
        self.d = _rand(rng, (N, N), cplx)
        self.cw = rng.standard_normal(N)
        self.dw = rng.standard_normal(N)
        self.directions = [_rand(rng, (N, N), cplx) for _ in range(2)]


# ---------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------
def svd_input(p: Data, gap: float, s: float) -> np.ndarray:
    return s * ((p.q1 * np.array([2 + gap, 2, 1, 0.5])) @ p.q2.conj().T)


def svd_tenferro(p: Data) -> dict:
    c, d, cw, dw, g, h = (tf.asarray(v) for v in (p.c, p.d, p.cw, p.dw, G, H))

    def recon(a):
        u, s, vh = la.svd(a)
        return tf.real(tf.sum(mm(tf.multiply(u, as_cols(s, N)), vh) * c))

    def vectors(a):
        u, s, vh = la.svd(a)
        u0, v0 = u[:, 0], vh[0, :]
        return tf.sum(tf.real(u0 * tf.conj(u0)) * cw) + tf.sum(tf.real(v0 * tf.conj(v0)) * dw)

    def projectors(a):
        u, s, vh = la.svd(a)
        return tf.real(tf.sum(mm(tf.multiply(u, as_cols(g, N)), mH(u)) * c)) + tf.real(
            tf.sum(mm(tf.multiply(mH(vh), as_cols(h, N)), vh) * d)
        )

    return {"recon": recon, "vectors": vectors, "projectors": projectors}


def svd_jax(p: Data) -> dict:
    def recon(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.real(jnp.sum((u * s) @ vh * p.c))

    def vectors(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.sum(jnp.abs(u[:, 0]) ** 2 * p.cw) + jnp.sum(jnp.abs(vh[0, :]) ** 2 * p.dw)

    def projectors(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.real(jnp.sum((u * G) @ u.conj().T * p.c)) + jnp.real(jnp.sum((vh.conj().T * H) @ vh * p.d))

    return {"recon": recon, "vectors": vectors, "projectors": projectors}


def _mp_pair_sum(c: np.ndarray, m) -> mpmath.mpf:
    """``Re sum(c * m)`` for a NumPy ``c`` and an mpmath matrix ``m``."""
    return mpmath.re(mpmath.fsum(complex(c[i, j]) * m[i, j] for i in range(N) for j in range(N)))


def svd_mpmath(p: Data, m) -> dict:
    u, s, vh = (mpmath.svd_c if p.cplx else mpmath.svd_r)(m)  # singular values descending
    recon = u * mpmath.diag(s) * vh
    pu = u * mpmath.diag(list(G)) * u.H
    pv = vh.H * mpmath.diag(list(H)) * vh
    return {
        "recon": _mp_pair_sum(p.c, recon),
        "vectors": mpmath.fsum(abs(u[i, 0]) ** 2 * p.cw[i] + abs(vh[0, i]) ** 2 * p.dw[i] for i in range(N)),
        "projectors": _mp_pair_sum(p.c, pu) + _mp_pair_sum(p.d, pv),
    }


# ---------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------
def eigh_input(p: Data, gap: float, s: float) -> np.ndarray:
    a = (p.q1 * np.array([-0.5, 1, 2, 2 + gap])) @ p.q1.conj().T
    return s * (0.5 * (a + a.conj().T))


def eigh_tenferro(p: Data) -> dict:
    c, cw, g = tf.asarray(p.c), tf.asarray(p.cw), tf.asarray(G)

    def vectors(a):  # the eigenvector of 2 + gap
        w, v = la.eigh(a)
        v3 = v[:, 3]
        return tf.sum(tf.real(v3 * tf.conj(v3)) * cw)

    def projectors(a):
        w, v = la.eigh(a)
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(g, N)), mH(v)) * c))

    def cube(a):  # V w^3 V^H = A^3 through the eigenvectors
        w, v = la.eigh(a)
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(w * w * w, N)), mH(v)) * c))

    return {"vectors": vectors, "projectors": projectors, "cube": cube}


def eigh_jax(p: Data) -> dict:
    def herm(a):  # tenferro's eigh differentiates through the Hermitian part
        return 0.5 * (a + a.conj().T)

    def vectors(a):
        w, v = jnp.linalg.eigh(herm(a))
        return jnp.sum(jnp.abs(v[:, 3]) ** 2 * p.cw)

    def projectors(a):
        w, v = jnp.linalg.eigh(herm(a))
        return jnp.real(jnp.sum((v * G) @ v.conj().T * p.c))

    def cube(a):
        w, v = jnp.linalg.eigh(herm(a))
        return jnp.real(jnp.sum((v * w**3) @ v.conj().T * p.c))

    return {"vectors": vectors, "projectors": projectors, "cube": cube}


def eigh_mpmath(p: Data, m) -> dict:
    m = (m + m.H) / 2
    w, q = (mpmath.eighe if p.cplx else mpmath.eigsy)(m)
    order = sorted(range(N), key=lambda k: w[k])
    weights = [mpmath.mpf(0)] * N
    for rank, k in enumerate(order):
        weights[k] = G[rank]
    top = order[3]
    return {
        "vectors": mpmath.fsum(abs(q[i, top]) ** 2 * p.cw[i] for i in range(N)),
        "projectors": _mp_pair_sum(p.c, q * mpmath.diag(weights) * q.H),
        "cube": _mp_pair_sum(p.c, q * mpmath.diag([w[k] ** 3 for k in range(N)]) * q.H),
    }


# ---------------------------------------------------------------------------
# eig (real non-normal input, real spectrum)
# ---------------------------------------------------------------------------
def eig_input(p: Data, gap: float, s: float) -> np.ndarray:
    return s * ((p.x * np.array([2 + gap, 2, 1, 0.5])) @ np.linalg.inv(p.x))


def _tf_order(w):
    """Eigenvalue order (real part descending) as a constant, read from the value."""
    return np.argsort(-np.real(tidu.stop_gradient(w).numpy()), kind="stable")


def eig_tenferro(p: Data) -> dict:
    c, cw = tf.asarray(p.c), tf.asarray(p.cw)

    def vectors(a):  # |v|^2 of the unit-norm eigenvector of 2 + gap
        w, v = la.eig(a)
        k = int(_tf_order(w)[0])
        v0 = v[:, k]
        return tf.sum(tf.real(v0 * tf.conj(v0)) * cw)

    def projectors(a):  # sum_k g_k P_k, P_k = v_k u_k^H / (u_k^H v_k)
        w, v = la.eig(a)
        weights = np.zeros(N, dtype=complex)
        weights[_tf_order(w)] = G
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(tf.asarray(weights), N)), la.inv(v)) * c))

    return {"vectors": vectors, "projectors": projectors}


def eig_jax(p: Data) -> dict:
    def eig(a):
        return jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)

    def order(w):
        return jnp.argsort(-jax.lax.stop_gradient(w.real))

    def vectors(a):
        w, v = eig(a)
        return jnp.sum(jnp.abs(v[:, order(w)[0]]) ** 2 * p.cw)

    def projectors(a):
        w, v = eig(a)
        weights = jnp.zeros(N).at[order(w)].set(G)
        return jnp.real(jnp.sum((v * weights) @ jnp.linalg.inv(v) * p.c))

    return {"vectors": vectors, "projectors": projectors}


def eig_mpmath(p: Data, m) -> dict:
    w, left, right = mpmath.eig(m, left=True, right=True)
    order = sorted(range(N), key=lambda k: -mpmath.re(w[k]))
    top = order[0]
    norm2 = mpmath.fsum(abs(right[i, top]) ** 2 for i in range(N))
    proj = mpmath.zeros(N, N)
    for rank, k in enumerate(order):
        den = mpmath.fsum(left[k, i] * right[i, k] for i in range(N))
        for i in range(N):
            for j in range(N):
                proj[i, j] += G[rank] * right[i, k] * left[k, j] / den
    return {
        "vectors": mpmath.fsum(abs(right[i, top]) ** 2 / norm2 * p.cw[i] for i in range(N)),
        "projectors": _mp_pair_sum(p.c, proj),
    }


CASES = {
    "svd": (svd_input, svd_tenferro, svd_jax, svd_mpmath),
    "eigh": (eigh_input, eigh_tenferro, eigh_jax, eigh_mpmath),
    "eig": (eig_input, eig_tenferro, eig_jax, eig_mpmath),
}


def _reference(mp_losses, p: Data, a: np.ndarray, direction: np.ndarray) -> dict:
    """Central difference of every loss along ``direction`` at 40 digits."""
    with mpmath.workdps(DPS):
        m, e = mpmath.matrix(a.tolist()), mpmath.matrix(direction.tolist())
        plus, minus = mp_losses(p, m + STEP * e), mp_losses(p, m - STEP * e)
        return {k: float((plus[k] - minus[k]) / (2 * STEP)) for k in plus}


def _error(grad: np.ndarray, directions: list, exact: np.ndarray) -> float:
    got = np.array([np.real(np.sum(grad * e)) for e in directions])
    return float(np.max(np.abs(got - exact)) / np.max(np.abs(exact)))


def _tenferro_grad(loss, a: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():  # gauge-invariant losses, no degenerate pair: no warning
        warnings.simplefilter("error", la.GaugeWarning)
        warnings.simplefilter("error", la.DegeneracyWarning)
        return tidu.grad(loss)(tf.asarray(a)).numpy()


def sweep(name: str, cplx: bool, seed: int = 2024) -> list:
    """``[(loss, gap, scale, err_tenferro, err_jax, floor)]`` over the whole sweep."""
    make_input, tf_losses, jax_losses, mp_losses = CASES[name]
    p = Data(cplx, seed)
    tls = tf_losses(p)
    jls = {k: jax.jit(jax.grad(f)) for k, f in jax_losses(p).items()}
    spectrum_max = 2.0
    rows = []
    for gap in GAPS:
        floor = 16 * N * EPS * (spectrum_max + gap) / gap
        for s in SCALES:
            a = make_input(p, gap, s)
            directions = [s * e for e in p.directions]
            refs = [_reference(mp_losses, p, a, e) for e in directions]
            for loss in tls:
                exact = np.array([r[loss] for r in refs])
                e_tf = _error(_tenferro_grad(tls[loss], a), directions, exact)
                e_jax = _error(np.asarray(jls[loss](jnp.asarray(a))), directions, exact)
                rows.append((loss, gap, s, e_tf, e_jax, floor))
    return rows


def _check(rows: list, label: str) -> None:
    bad = [r for r in rows if not r[3] <= max(r[4], r[5]) + RESOLUTION]
    assert not bad, f"{label}: tenferro worse than max(JAX, floor) at " + "; ".join(
        f"{loss} gap={gap:.0e} scale={s:.0e}: tenferro {et:.2e}, JAX {ej:.2e}, floor {fl:.2e}"
        for loss, gap, s, et, ej, fl in bad[:8]
    )


@pytest.mark.parametrize("name,cplx", [("svd", False), ("svd", True), ("eigh", False), ("eigh", True), ("eig", False)])
def test_spectral_sweep_no_worse_than_jax(name, cplx):
    rows = sweep(name, cplx)
    assert len(rows) == len(GAPS) * len(SCALES) * len(CASES[name][1](Data(cplx, 0)))
    _check(rows, f"{name} {'complex128' if cplx else 'float64'}")
    # the sweep resolves the 1/gap behaviour: at gap 1e-8 the errors are ~1e-8 (rounding of the
    # forward decomposition, the same for JAX), not ~1 as with the former absolute broadening
    assert max(r[3] for r in rows) < 1e-5


def test_former_broadening_fails_the_sweep():
    # the test above can fail: the former default (absolute eps = 1e-12) is off by ~eps/gap^2,
    # also at small scale for a well-separated spectrum, far above the sweep's floor
    p = Data(False, 2024)
    recon = svd_tenferro(p)["recon"]
    for gap, s in ((1e-4, 1.0), (1e-1, 1e-4), (1e-6, 1.0)):
        floor = 16 * N * EPS * (2 + gap) / gap
        a = svd_input(p, gap, s)
        with la.settings(broadening=1e-12):
            g_old = tidu.grad(recon)(tf.asarray(a)).numpy()
        g_default = tidu.grad(recon)(tf.asarray(a)).numpy()
        assert np.linalg.norm(g_old - p.c) / np.linalg.norm(p.c) > 1e3 * floor  # measured 1e-5 ... 0.3
        assert np.linalg.norm(g_default - p.c) / np.linalg.norm(p.c) <= floor


# ---------------------------------------------------------------------------
# rank deficiency (issue 10: 15-37% off with the former broadening)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cplx", [False, True])
def test_rank_deficient_reconstruction(cplx):
    # rank 2 of 4: LAPACK returns the two zero singular values as ~1e-16. The
    # gradient of <C, U S Vh> is C (the loss is <C, A>). Numerically zero singular
    # values are used as computed (docs/ad/gauge.md), where the cotangent of
    # U f(S) Vh with f(0) = 0 carries the same rounding: exact, like JAX.
    p = Data(cplx, 7)
    a = (p.q1 * np.array([2.0, 1.0, 0.0, 0.0])) @ p.q2.conj().T
    sv = np.linalg.svd(a, compute_uv=False)
    assert 0 < sv[2] < 1e-15 and sv[3] < 1e-15  # the case of the issue: ~1e-16, not exact zeros
    g = _tenferro_grad(svd_tenferro(p)["recon"], a)
    gj = np.asarray(jax.grad(svd_jax(p)["recon"])(jnp.asarray(a)))
    err = np.linalg.norm(g - p.c) / np.linalg.norm(p.c)
    err_jax = np.linalg.norm(gj - p.c) / np.linalg.norm(p.c)
    # floor as in the sweep: 16 N eps times the condition ||A|| / (gap to the zero cluster) = 2 / 1
    assert err <= max(err_jax, 16 * N * EPS * 2) + RESOLUTION, (err, err_jax)
    with la.settings(broadening=1e-12):  # the former default: 15-40% off
        g_old = tidu.grad(svd_tenferro(p)["recon"])(tf.asarray(a)).numpy()
    assert np.linalg.norm(g_old - p.c) / np.linalg.norm(p.c) > 0.05


@pytest.mark.parametrize("cplx", [False, True])
def test_rank_deficient_hermitian_reconstruction_warns(cplx):
    # eigh at a PSD rank-2 matrix: the two zero eigenvalues form a degenerate block
    # (eigh masks it: a zero eigenvalue is not special for eigh, and the projector
    # onto the kernel is exact that way); V diag(w) V^H depends on the block's values
    # and vectors, so the in-block part is not determined: DegeneracyWarning.
    p = Data(cplx, 7)
    a = (p.q1 * np.array([2.0, 1.0, 0.0, 0.0])) @ p.q1.conj().T
    a = 0.5 * (a + a.conj().T)
    c = tf.asarray(p.c)

    def recon(x):
        w, v = la.eigh(x)
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(w, N)), mH(v)) * c))

    def kernel_projector(x):
        w, v = la.eigh(x)
        vb = v[:, :2]
        return tf.real(tf.sum(mm(vb, mH(vb)) * c))

    with pytest.warns(la.DegeneracyWarning, match="eigh: at a degenerate block"):
        tidu.grad(recon)(tf.asarray(a))
    g = _tenferro_grad(kernel_projector, a)  # exact and silent

    def kernel_projector_np(x):  # the same loss in NumPy
        v = np.linalg.eigh(0.5 * (x + x.conj().T))[1][:, :2]
        return np.real(np.sum((v @ v.conj().T) * p.c))

    # central differences along the two directions (the kernel is separated from the rest
    # of the spectrum by 1: step 1e-6 gives ~1e-10)
    for e in p.directions:
        fd = (kernel_projector_np(a + 1e-6 * e) - kernel_projector_np(a - 1e-6 * e)) / 2e-6
        assert abs(np.real(np.sum(g * e)) - fd) < 1e-8 * np.linalg.norm(e)


def main() -> None:
    """Print the sweep as a table: ``python tests/tenferro/test_linalg_spectral_sweep.py``."""
    for name, cplx in (("svd", False), ("svd", True), ("eigh", False), ("eigh", True), ("eig", False)):
        for loss, gap, s, et, ej, fl in sweep(name, cplx):
            print(
                f"{name:4s} {'c128' if cplx else 'f64 '} {loss:10s} gap={gap:.0e} scale={s:.0e} "
                f"tenferro={et:.2e} jax={ej:.2e} floor={fl:.2e}"
            )


if __name__ == "__main__":
    main()
