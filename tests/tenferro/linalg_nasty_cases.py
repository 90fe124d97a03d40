"""The nasty linalg derivative cases, shared by ``test_linalg_nasty.py`` (a subset,
asserted) and ``benchmarks/linalg_accuracy.py`` (all of them, scored against JAX and
PyTorch).

A case is a real scalar loss of one matrix, written once against a small backend
interface (``linalg_nasty_losses.py``: the decompositions and a few array operations), and a
derivative to check: the gradient (``order=1``) or the Hessian-vector product in a
direction ``E`` (``order=2``). Gradients are in tidu's (and JAX's) convention
``dL/dx - i dL/dy``; a Hessian-vector product is the derivative of that gradient
along ``E``.

**Reference**: central finite differences of the same loss evaluated in mpmath at
:data:`DPS` digits (``MpBackend``: its SVD, eigh, QR, expm and det), at the
float64 input itself; steps ``1e-15`` (first order) and ``1e-10`` (second), so
truncation (``h^2`` times higher derivatives, at most ``1/gap^2`` here) and
cancellation (``10^-DPS / h^2``) stay below ``1e-12`` relative. Cases whose
derivative does not exist (``smooth=False``: a loss on QR's trailing factors at a
rank-deficient matrix, ``log|det|`` at a singular one) have no reference.

**Criterion** (:func:`judge`): a smooth case is right when the derivative is finite and
``||g - ref||_F <= RTOL * max(||ref||_F, scale)`` with ``RTOL = 1e-6`` (``scale`` is the
size of the derivative's terms, for the cases whose derivative is exactly zero); a
non-smooth case is right when the framework refuses (raises) or returns a non-finite
value instead of a number.

Each framework uses its natural API: the decompositions for JAX and PyTorch, and for
tenferro also ``funm_hermitian`` and ``polar`` where a loss is a matrix function
(``tr f(A)``, ``f(A)``, ``U f(S) V^H``), which is what those exist for.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mpmath as mp
import numpy as np

import tenferro as tf
import tidu

from linalg_nasty_losses import LOSSES, Backend, MpBackend, TenferroBackend

RTOL = 1e-6
DPS = 40
H1, H2 = 1e-15, 1e-10

CATEGORIES = ("exact degeneracy", "near degeneracy", "rank deficiency", "large-norm expm", "singular det")


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    name: str
    category: str
    loss: str
    a: np.ndarray
    params: dict
    order: int = 1
    direction: np.ndarray | None = None
    smooth: bool = True
    scale: float = 0.0  # size of the derivative's terms (cases whose derivative is 0)
    quick: bool = False  # in the pytest subset
    tenferro: str = "right"  # "right"; "raises": a documented refusal of a smooth case;
    #                                        "wrong": a documented limitation (never in the asserted subset)
    note: str = ""

    @property
    def complex_(self) -> bool:
        return np.iscomplexobj(self.a)


def _rng(*key: Any) -> np.random.Generator:
    """A generator seeded by the case's key (reproducible across processes)."""
    return np.random.default_rng([ord(c) for c in repr(key)])


def _gauss(rng, shape, cplx):
    g = rng.standard_normal(shape)
    return g + 1j * rng.standard_normal(shape) if cplx else g


def _unitary(rng, n, cplx):
    q, r = np.linalg.qr(_gauss(rng, (n, n), cplx))
    return q * (np.diagonal(r) / np.abs(np.diagonal(r)))


def _with_spectrum(rng, vals, cplx, hermitian):
    n = len(vals)
    q1 = _unitary(rng, n, cplx)
    q2 = q1 if hermitian else _unitary(rng, n, cplx)
    return (q1 * np.asarray(vals, dtype=float)) @ q2.conj().T


def _block(vals, descending):
    """``(lo, hi)``: the first run of equal values in sorted order."""
    v = sorted(vals, reverse=descending)
    lo = next(i for i in range(len(v) - 1) if v[i] == v[i + 1])
    hi = lo + 1
    while hi < len(v) and v[hi] == v[lo]:
        hi += 1
    return lo, hi


_DT = {False: "real", True: "complex"}


def _exact_degeneracy() -> list[Case]:
    out = []
    eig_spectra = {
        "2,1,1": [2, 2, 1, 0.5],
        "2,2": [1, 1, -1, -1],
        "3,1": [3, 3, 3, 1],
        "1,2,1": [2, 0.5, 0.5, -1],
        "4": [1.5] * 4,
    }
    svd_spectra = {
        "2,1,1": [2, 2, 1, 0.5],
        "2,2": [1, 1, 0.5, 0.5],
        "3,1": [3, 3, 3, 1],
        "1,2,1": [2, 1, 1, 0.5],
        "4": [1.0] * 4,
    }
    for cplx in (False, True):
        for sname, vals in eig_spectra.items():
            rng = _rng("eig", sname, cplx)
            a = _with_spectrum(rng, vals, cplx, True)
            c = _gauss(rng, (4, 4), cplx)
            lo, hi = _block(vals, False)
            quick = sname == "2,1,1"
            base = f"eigh[{sname}] {_DT[cplx]}"
            losses = ["eigh_trace_exp", "eigh_recon", "eigh_recon_cube", "eigh_recon_exp"]
            if hi - lo < 4:
                losses.append("eigh_proj")
            for loss in losses:
                out.append(
                    Case(
                        f"{base} {loss}",
                        "exact degeneracy",
                        loss,
                        a,
                        {"C": c, "lo": lo, "hi": hi},
                        quick=quick and loss in ("eigh_recon_cube", "eigh_proj"),
                    )
                )
            out.append(
                Case(
                    f"{base} eigh_trace_exp hvp",
                    "exact degeneracy",
                    "eigh_trace_exp",
                    a,
                    {},
                    order=2,
                    direction=_gauss(rng, (4, 4), cplx),
                    quick=quick and not cplx,
                )
            )
        for sname, vals in svd_spectra.items():
            rng = _rng("svd", sname, cplx)
            a = _with_spectrum(rng, vals, cplx, False)
            c = _gauss(rng, (4, 4), cplx)
            lo, hi = _block(vals, True)
            quick = sname == "2,1,1"
            base = f"svd[{sname}] {_DT[cplx]}"
            losses = ["svd_sum_cube", "svd_nuclear", "svd_polar", "svd_recon", "svd_recon_sq"]
            if hi - lo < 4:
                losses.append("svd_proj")
            for loss in losses:
                out.append(
                    Case(
                        f"{base} {loss}",
                        "exact degeneracy",
                        loss,
                        a,
                        {"C": c, "lo": lo, "hi": hi},
                        quick=quick and loss in ("svd_polar", "svd_recon_sq"),
                    )
                )
    return out


def _near_degeneracy() -> list[Case]:
    out = []
    for cplx in (False, True):
        for gap in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
            rng = _rng("near", gap, cplx)
            s_vals, w_vals = [2 + gap, 2, 1, 0.5], [-0.5, 1, 2, 2 + gap]
            a_s = _with_spectrum(rng, s_vals, cplx, False)
            a_w = _with_spectrum(rng, w_vals, cplx, True)
            c = _gauss(rng, (4, 4), cplx)
            quick = gap in (1e-4, 1e-8) and not cplx
            tag = f"gap {gap:.0e} {_DT[cplx]}"
            for loss, a, lohi in [
                ("svd_recon_dec", a_s, (0, 1)),
                ("svd_proj", a_s, (0, 1)),
                ("svd_polar", a_s, (0, 1)),
                ("eigh_recon_dec", a_w, (3, 4)),
                ("eigh_proj", a_w, (3, 4)),
                ("eigh_recon_exp", a_w, (2, 4)),
            ]:
                out.append(
                    Case(
                        f"{loss} {tag}",
                        "near degeneracy",
                        loss,
                        a,
                        {"C": c, "lo": lohi[0], "hi": lohi[1]},
                        quick=quick and loss in ("svd_recon_dec", "eigh_proj"),
                    )
                )
        for scale in (1e-6, 1e-4, 1e4, 1e6):  # a well-separated spectrum, scaled
            rng = _rng("scale", scale, cplx)
            a_s = _with_spectrum(rng, [2, 1.5, 1, 0.5], cplx, False) * scale
            a_w = _with_spectrum(rng, [-0.5, 0.5, 1, 2], cplx, True) * scale
            c = _gauss(rng, (4, 4), cplx)
            tag = f"scale {scale:.0e} {_DT[cplx]}"
            out.append(
                Case(
                    f"svd_recon_dec {tag}",
                    "near degeneracy",
                    "svd_recon_dec",
                    a_s,
                    {"C": c},
                    quick=scale == 1e-4 and not cplx,
                )
            )
            out.append(Case(f"eigh_proj {tag}", "near degeneracy", "eigh_proj", a_w, {"C": c, "lo": 3, "hi": 4}))
    return out


def _rank_deficiency() -> list[Case]:
    out = []
    for cplx in (False, True):
        for (m, n), zero in [((5, 3), 2), ((5, 3), 1), ((4, 4), 2), ((3, 5), 1)]:
            rng = _rng("qr", m, n, zero, cplx)
            a = _gauss(rng, (m, n), cplx)
            a[:, zero] = 0
            k = zero
            p = {"D": _gauss(rng, (k, n), False), "k": k}
            tag = f"qr {m}x{n} zero column {zero} {_DT[cplx]}"
            quick = (m, n, zero) == (5, 3, 1)
            for loss in ("qr_proj_lead", "qr_recon_lead", "qr_abs_lead"):
                pp = dict(
                    p, C=_gauss(rng, (m, m if loss == "qr_proj_lead" else (k if loss == "qr_abs_lead" else n)), cplx)
                )
                if loss == "qr_abs_lead":
                    pp["C"] = pp["C"].real
                out.append(Case(f"{loss} {tag}", "rank deficiency", loss, a, pp, quick=quick))
            kk = min(m, n)
            out.append(
                Case(
                    f"qr_abs_all {tag}",
                    "rank deficiency",
                    "qr_abs_all",
                    a,
                    {"C": _gauss(rng, (m, kk), False), "D": _gauss(rng, (kk, n), False)},
                    smooth=False,
                    quick=quick,
                    note="Q[:, j:] and R[j:, j:] have no derivative at a rank-deficient matrix",
                )
            )
            out.append(
                Case(
                    f"qr_recon_full {tag}",
                    "rank deficiency",
                    "qr_recon_full",
                    a,
                    {"C": _gauss(rng, (m, n), cplx)},
                    tenferro="raises",
                    quick=quick,
                    note="smooth (QR = a) but through the trailing factors: the rule sees only cotangents",
                )
            )
        for (m, n), r, kind in [
            ((4, 4), 2, "product"),
            ((4, 4), 3, "product"),
            ((5, 3), 2, "product"),
            ((4, 4), 2, "zero columns"),
        ]:
            rng = _rng("svdrank", m, n, r, kind, cplx)
            if kind == "product":
                a = _gauss(rng, (m, r), cplx) @ _gauss(rng, (r, n), cplx)
            else:
                a = _gauss(rng, (m, n), cplx)
                a[:, r:] = 0
            c = _gauss(rng, (m, n), cplx)
            tag = f"svd {m}x{n} rank {r} ({kind}) {_DT[cplx]}"
            quick = (m, n, r, kind) == (4, 4, 2, "product") and not cplx
            for loss in ("svd_recon_dec", "svd_sum_sq", "svd_proj"):
                note = (
                    "U S V^H through exactly repeated zero singular values: the in-block gradient is not "
                    "determined by the SVD's cotangents (docs/ad/gauge.md)"
                    if loss == "svd_recon_dec" and kind == "zero columns"
                    else ""
                )
                out.append(
                    Case(
                        f"{loss} {tag}",
                        "rank deficiency",
                        loss,
                        a,
                        {"C": _gauss(rng, (m, m), cplx) if loss == "svd_proj" else c, "lo": 0, "hi": r},
                        quick=quick,
                        tenferro="wrong" if note else "right",
                        note=note,
                    )
                )
        for n in (3, 4):
            rng = _rng("detrank", n, cplx)
            c = np.exp(1j * rng.uniform(0, 6)) if cplx else 1.0
            a = _gauss(rng, (n, n - 1), cplx) @ _gauss(rng, (n - 1, n), cplx)
            out.append(
                Case(
                    f"det gradient {n}x{n} rank {n - 1} (product) {_DT[cplx]}",
                    "rank deficiency",
                    "det_re",
                    a,
                    {"c": np.asarray(c)},
                    quick=n == 3,
                )
            )
            b = rng.integers(-3, 4, (n, n)).astype(complex if cplx else float)
            b[:, -1] = b[:, 0] - 2 * b[:, 1]  # exactly singular in floating point
            if cplx:
                b = b * (1 + 2j)
            out.append(
                Case(
                    f"det gradient {n}x{n} rank {n - 1} (exact) {_DT[cplx]}",
                    "rank deficiency",
                    "det_re",
                    b,
                    {"c": np.asarray(c)},
                    quick=n == 3 and cplx,
                )
            )
            out.append(
                Case(
                    f"logabsdet {n}x{n} singular (exact) {_DT[cplx]}",
                    "rank deficiency",
                    "logabsdet",
                    b,
                    {},
                    smooth=False,
                    quick=n == 3,
                    note="log|det| = -inf at a singular matrix: no derivative",
                )
            )
    return out


def _large_norm_expm() -> list[Case]:
    out = []
    for cplx in (False, True):
        for norm in (1, 10, 20, 50, 100):
            for kind in ("normal", "nonnormal"):
                rng = _rng("expm", norm, kind, cplx)
                if kind == "normal":
                    a = _with_spectrum(rng, [norm, -norm, norm / 2, 0.1], False, True)
                    if cplx:
                        a = a + 1j * _with_spectrum(rng, [1, -1, 0.5, 0], False, True)
                else:
                    g = _gauss(rng, (4, 4), cplx)
                    a = g * (norm / np.linalg.norm(g, 2))
                c = _gauss(rng, (4, 4), cplx)
                e = _gauss(rng, (4, 4), cplx)
                tag = f"norm {norm} {kind} {_DT[cplx]}"
                quick = norm == 50 and kind == "normal"
                out.append(
                    Case(
                        f"expm_inner gradient {tag}",
                        "large-norm expm",
                        "expm_inner",
                        a,
                        {"C": c},
                        quick=quick and not cplx,
                    )
                )
                out.append(
                    Case(f"expm_sq hvp {tag}", "large-norm expm", "expm_sq", a, {}, order=2, direction=e, quick=quick)
                )
                out.append(
                    Case(f"expm_inner hvp {tag}", "large-norm expm", "expm_inner", a, {"C": c}, order=2, direction=e)
                )
    return out


def _singular_det() -> list[Case]:
    out = []
    for cplx in (False, True):
        for n in (3, 4, 5):
            for rank in (n - 1, n - 2, n - 3):
                if rank < 1:
                    continue
                for d in range(2 if rank >= n - 2 else 1):
                    rng = _rng("dethess", n, rank, d, cplx)
                    a = _gauss(rng, (n, rank), cplx) @ _gauss(rng, (rank, n), cplx)
                    c = np.exp(1j * rng.uniform(0, 6)) if cplx else 1.0
                    e = _gauss(rng, (n, n), cplx)
                    # rank N-3: the Hessian is exactly 0; its terms are products of N-2 entries
                    scale = float(np.linalg.norm(a, 2) ** (n - 2) * np.linalg.norm(e)) if rank == n - 3 else 0.0
                    out.append(
                        Case(
                            f"det hvp {n}x{n} rank {rank} #{d} {_DT[cplx]}",
                            "singular det",
                            "det_re",
                            a,
                            {"c": np.asarray(c)},
                            order=2,
                            direction=e,
                            scale=scale,
                            quick=d == 0 and n == 4 and rank >= n - 2,
                        )
                    )
            rng = _rng("dethess exact", n, cplx)
            b = rng.integers(-3, 4, (n, n)).astype(complex if cplx else float)
            b[:, -1] = b[:, 0] + b[:, 1]
            out.append(
                Case(
                    f"det hvp {n}x{n} rank {n - 1} (exact) {_DT[cplx]}",
                    "singular det",
                    "det_re",
                    b,
                    {"c": np.asarray(1.0 + 0j if cplx else 1.0)},
                    order=2,
                    direction=_gauss(rng, (n, n), cplx),
                )
            )
    return out


CASES: list[Case] = _exact_degeneracy() + _near_degeneracy() + _rank_deficiency() + _large_norm_expm() + _singular_det()
QUICK: list[Case] = [c for c in CASES if c.quick]


# ---------------------------------------------------------------------------
# reference, tenferro's derivatives, and the criterion
# ---------------------------------------------------------------------------
def _directions(shape: tuple, cplx: bool):
    for idx in np.ndindex(*shape):
        for unit in (1.0, 1j) if cplx else (1.0,):
            e = np.zeros(shape, dtype=complex if cplx else float)
            e[idx] = unit
            yield idx, unit, e


def reference(case: Case) -> np.ndarray:
    """The derivative by central differences of the loss in mpmath at ``DPS`` digits."""
    with mp.workdps(DPS):
        B = MpBackend(case.complex_)
        params = {k: (B.const(v) if isinstance(v, np.ndarray) and v.ndim else v) for k, v in case.params.items()}
        if "c" in params:
            params["c"] = B.const(np.asarray(case.params["c"]).reshape(1))[0]
        loss = LOSSES[case.loss]
        a = B.const(case.a)
        f = lambda x: loss(B, x, params)  # noqa: E731
        out = np.zeros(case.a.shape, dtype=complex if case.complex_ else float)
        if case.order == 1:
            h = mp.mpf(H1)
            for idx, unit, e in _directions(case.a.shape, case.complex_):
                d = B.const(e) * h
                out[idx] += (
                    complex(np.conj(unit)) * complex((f(a + d) - f(a - d)) / (2 * h))
                    if case.complex_
                    else float((f(a + d) - f(a - d)) / (2 * h))
                )
        else:
            h = mp.mpf(H2)
            t = B.const(case.direction) * h
            for idx, unit, e in _directions(case.a.shape, case.complex_):
                d = B.const(e) * h
                val = (f(a + t + d) - f(a + t - d) - f(a - t + d) + f(a - t - d)) / (4 * h * h)
                out[idx] += complex(np.conj(unit)) * complex(val) if case.complex_ else float(val)
        return out


def tenferro_derivative(case: Case, B: Backend | None = None) -> np.ndarray:
    """tenferro's gradient (order 1) or Hessian-vector product (order 2) of the case
    (with the matrix-function API, or through backend ``B``)."""
    B = TenferroBackend() if B is None else B
    f = lambda x: LOSSES[case.loss](B, x, case.params)  # noqa: E731
    a = tf.asarray(case.a)
    if case.order == 1:
        return tidu.grad(f)(a).numpy()
    return tidu.jvp(tidu.grad(f), (a,), (tf.asarray(case.direction),))[1].numpy()


def relative_error(got: np.ndarray, ref: np.ndarray, scale: float = 0.0) -> float:
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), scale, np.finfo(float).tiny))


def judge(case: Case, got: np.ndarray | None, ref: np.ndarray | None) -> bool:
    """Whether a framework's answer is right: ``got`` is its derivative, or None when
    it raised. Smooth cases: finite and within ``RTOL`` of the reference; non-smooth
    cases: a refusal (an error or a non-finite value)."""
    if not case.smooth:
        return got is None or not np.all(np.isfinite(got))
    if got is None or not np.all(np.isfinite(got)):
        return False
    return relative_error(got, ref, case.scale) <= RTOL
