"""Accuracy of linalg derivatives on nasty inputs: tenferro against JAX and PyTorch.

The cases (``tests/tenferro/linalg_nasty_cases.py``, losses in ``linalg_nasty_losses.py``, shared with
``tests/tenferro/test_linalg_nasty.py``, which asserts tenferro on a subset) are
scalar losses of one 3x3 to 5x5 matrix, float64 and complex128, in five categories:
exact degeneracy (invariant and reconstruction losses), near degeneracy (gaps
1e-4...1e-8, and spectra scaled by 1e-6...1e6), rank deficiency (QR with a zero
column, SVD below full rank, det/slogdet), large-norm expm (gradients and
Hessian-vector products at norms 1...100) and singular det (Hessian-vector products
at rank N-1, N-2, N-3). Each framework's gradient or Hessian-vector product is
compared with central differences of the same loss in mpmath at 40 digits.

A case is **right** when the derivative is finite and its relative error
``||g - ref||_F / ||ref||_F`` is at most 1e-6 (for the cases whose derivative is
exactly zero, relative to the size of its terms); for the cases whose derivative does
not exist (a loss on QR's trailing factors at a rank-deficient matrix, ``log|det|`` at
a singular one) it is right when the framework refuses: an error or a non-finite
value, not a number. JAX and PyTorch compute every loss through their
decompositions; tenferro also uses ``funm_hermitian`` and ``polar`` where the loss is
a matrix function (``tr f(A)``, ``V f(w) V^H``, ``U f(S) V^H``, ``U V^H``), the API it
has for them. The column ``tf (dec.)`` is tenferro through its decompositions alone,
as the peers (what its derivative rules give without that API).

Run: ``python benchmarks/linalg_accuracy.py`` (``--quick``: the pytest subset;
``--verbose``: every case that some framework gets wrong; ``--jobs N``: references in
N processes). Needs mpmath (``dev`` extra); JAX and PyTorch are compared when installed
(``bench`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

# the case list lives with the tests that assert it (as this folder's own helpers, it
# is imported from its folder; tests/tenferro/conftest.py does the same for pytest)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tenferro"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linalg_nasty_cases as cases_mod  # noqa: E402
from _peers import jax, jnp, torch  # noqa: E402
from linalg_nasty_cases import CASES, CATEGORIES, QUICK, Case, judge, reference  # noqa: E402
from linalg_nasty_losses import LOSSES, Backend, TenferroDecompositionBackend  # noqa: E402

import tenferro as tf  # noqa: E402


class JaxBackend(Backend):
    name = "JAX"

    def const(self, a):
        return jnp.asarray(a)

    def conj(self, x):
        return jnp.conj(x)

    def svd(self, x):
        return jnp.linalg.svd(x, full_matrices=False)

    def eigh(self, x):
        return jnp.linalg.eigh(x)

    def qr(self, x):
        return jnp.linalg.qr(x)

    def det(self, x):
        return jnp.linalg.det(x)

    def logabsdet(self, x):
        return jnp.linalg.slogdet(x)[1]

    def expm(self, x):
        return jax.scipy.linalg.expm(x)

    def exp(self, x):
        return jnp.exp(x)

    def re_sum(self, x):
        return jnp.real(jnp.sum(x))


class TorchBackend(Backend):
    name = "PyTorch"

    def const(self, a):
        return torch.as_tensor(np.asarray(a))

    def conj(self, x):
        return torch.conj(x)

    def svd(self, x):
        return torch.linalg.svd(x, full_matrices=False)

    def eigh(self, x):
        return torch.linalg.eigh(x)

    def qr(self, x):
        return torch.linalg.qr(x)

    def det(self, x):
        return torch.linalg.det(x)

    def logabsdet(self, x):
        return torch.linalg.slogdet(x)[1]

    def expm(self, x):
        return torch.linalg.matrix_exp(x)

    def exp(self, x):
        return torch.exp(x)

    def re_sum(self, x):
        return torch.real(torch.sum(x))


def jax_derivative(case: Case) -> np.ndarray:
    B = JaxBackend()
    f = lambda x: LOSSES[case.loss](B, x, case.params)  # noqa: E731
    a = jnp.asarray(case.a)
    if case.order == 1:
        return np.asarray(jax.grad(f)(a))
    return np.asarray(jax.jvp(jax.grad(f), (a,), (jnp.asarray(case.direction),))[1])


def torch_derivative(case: Case) -> np.ndarray:
    """PyTorch's gradient is ``dL/dx + i dL/dy``: conjugated into tidu's convention.
    The Hessian-vector product by double backward: the gradient of
    ``D_E L = Re sum(conj(g) E)``."""
    B = TorchBackend()
    x = torch.tensor(case.a, requires_grad=True)
    loss = LOSSES[case.loss](B, x, case.params)
    if case.order == 1:
        (g,) = torch.autograd.grad(loss, x)
    else:
        (g1,) = torch.autograd.grad(loss, x, create_graph=True)
        e = torch.as_tensor(case.direction)
        (g,) = torch.autograd.grad(torch.real(torch.sum(torch.conj(g1) * e)), x)
    g = g.detach().resolve_conj().numpy()
    return np.conj(g) if case.complex_ else g


def _attempt(fn, case: Case, typed: type | None = None) -> np.ndarray | None:
    """``fn(case)``, or None when it raises (for tenferro only its typed errors: anything
    else is a bug and propagates)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(case)
        except Exception as exc:  # noqa: BLE001  (peers: any refusal counts as one)
            if typed is not None and not isinstance(exc, typed):
                raise
            return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the subset the tests assert")
    parser.add_argument("--verbose", action="store_true", help="list every case some framework gets wrong")
    parser.add_argument("--jobs", type=int, default=1, help="processes computing the mpmath references (default 1)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    chosen = QUICK if args.quick else CASES
    dec = TenferroDecompositionBackend()
    frameworks = [
        ("tenferro", lambda c: _attempt(cases_mod.tenferro_derivative, c, tf.TenferroError)),
        ("tf (dec.)", lambda c: _attempt(lambda c_: cases_mod.tenferro_derivative(c_, dec), c, tf.TenferroError)),
    ]
    if jax is not None:
        frameworks.append(("JAX", lambda c: _attempt(jax_derivative, c)))
    if torch is not None:
        frameworks.append(("PyTorch", lambda c: _attempt(torch_derivative, c)))

    t0 = time.perf_counter()
    smooth = [c for c in chosen if c.smooth]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            refs = dict(zip(map(id, smooth), pool.map(reference, smooth, chunksize=4)))
    else:
        refs = {id(c): reference(c) for c in smooth}
    t_ref = time.perf_counter() - t0

    right = {(name, cat): 0 for name, _ in frameworks for cat in CATEGORIES}
    wrong_cases = []
    for case in chosen:
        ref = refs.get(id(case))
        verdict = {}
        for name, run in frameworks:
            got = run(case)
            ok = judge(case, got, ref)
            right[name, case.category] += ok
            verdict[name] = (
                "ok"
                if ok
                else "raised"
                if got is None
                else "non-finite"
                if not np.all(np.isfinite(got))
                else f"{cases_mod.relative_error(got, ref, case.scale):.1e}"
                if ref is not None
                else "finite"
            )
        if args.verbose and not all(v == "ok" for v in verdict.values()):
            wrong_cases.append((case, verdict))

    names = [n for n, _ in frameworks]
    print(
        f"{len(chosen)} cases, right = relative error <= {cases_mod.RTOL:g} against mpmath ({cases_mod.DPS} digits), "
        f"or a refusal where the derivative does not exist"
    )
    header = f"{'category':18s} {'cases':>5s}  " + "  ".join(f"{n:>8s}" for n in names)
    print(header)
    print("-" * len(header))
    for cat in CATEGORIES:
        n = sum(c.category == cat for c in chosen)
        if n:
            print(f"{cat:18s} {n:5d}  " + "  ".join(f"{right[name, cat]:8d}" for name in names))
    print("-" * len(header))
    print(
        f"{'total':18s} {len(chosen):5d}  "
        + "  ".join(f"{sum(right[name, c] for c in CATEGORIES):8d}" for name in names)
    )
    if args.verbose:
        print(
            "\ncases some framework gets wrong (relative error, 'raised', 'non-finite' or 'finite' "
            "where no derivative exists):"
        )
        for case, verdict in wrong_cases:
            print(
                f"  {case.category:17s} {case.name:52s} "
                + "  ".join(f"{n}: {verdict[n]:>10s}" for n in names)
                + (f"   [{case.note}]" if case.note else "")
            )
    print(f"\n(references {t_ref:.0f} s, total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
