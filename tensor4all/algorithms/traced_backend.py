"""A differentiable backend of the sweep engine (:mod:`._sweep`) for time evolution: the
TDVP protocol of :class:`~._dense_backend.DenseBackend` written in tenferro operations, so
that ``Sweep.evolve`` on it, with :func:`._krylov_traced.expm_krylov_traced` as the local
exponential, is a function tidu differentiates: in the MPO tensors (couplings, per-step
control fields) and in the initial state.

What is differentiated is the discrete map the forward pass computed. The kept rank of
each split is chosen from the concrete singular values (the primal values the tracers
carry) with :func:`._truncation.truncation_keep`, the policy of the NumPy backend, and is
then a constant; the kept factors are slices of the thin SVD, whose derivative is the exact
one of the truncated SVD (:func:`tenferro.linalg.truncated_svd`, with the mixing of kept and
discarded singular vectors). With ``cutoff > 0`` the rank is locally constant (a singular
value must cross the cutoff to change it), so this is the derivative of the computed map;
where singular values are exactly zero and ``cutoff == 0`` (a symmetric start such as a
product eigenstate, perturbed by a coupling that breaks the symmetry), the rank would grow
under such a perturbation and the map has only directional derivatives; the gradient is
then that of the map at the frozen bond dimension (give ``cutoff > 0``, or start away from
the symmetric point). The local exponentials are a primitive with the exact
derivative of ``exp(tau H) v`` (:mod:`._krylov_traced`), whatever Krylov dimension the
forward pass used.

Layouts are those of :mod:`._environments` (site tensors ``(left, d, right)``, MPO tensors
``(left, out, in, right)``, left blocks ``(bra, w, ket)``, right blocks ``(w, ket, bra)``), as
tenferro tensors; contractions are :func:`tenferro.einsum`. Flat vectors are 1-D tenferro
values from tenferro's column-major ``reshape``, and every reshape back uses the same order,
so a fused index is always ``(first, second)`` with the first fastest (the NumPy backend
fuses in C order; a Krylov step and an SVD do not depend on the order of the coordinates).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Sequence

import tenferro as tf

from ..networks.environments import EnvCache, transfer_left, transfer_right
from ..linalg.krylov_traced import expm_krylov_traced, value_of
from .schedule import RIGHT, Step
from ..linalg.truncation import truncation_keep, weighted_factors
from ..tools.errors import NotDifferentiableError

__all__ = ["TracedBackend", "TracedLocal", "TracedOneSite", "TracedTwoSite", "TracedBond", "expm_krylov_traced"]


class _Operator:
    """``x -> H_eff x`` on flat tenferro vectors of the local tensor's ``shape``; ``inputs`` are
    the tensors it is built from (``type(op)(*op.inputs)`` builds it again: the local
    exponential's derivative rule differentiates the product in them)."""

    inputs: tuple[Any, ...]

    def __init__(self, shape: tuple[int, ...], dtype: Any):
        self.in_shape = shape
        n = prod(shape)
        self.shape = (n, n)
        self.dtype = dtype
        self.matvecs = 0

    def matvec(self, x: Any) -> Any:
        self.matvecs += 1
        return tf.reshape(self._apply(tf.reshape(x, self.in_shape)), (-1,))

    def _apply(self, x: Any) -> Any:
        raise NotImplementedError


class TracedOneSite(_Operator):
    """``y[a, s, b] = L[a, w, x] W[w, s, t, v] X[x, t, c] R[v, c, b]``."""

    def __init__(self, lb: Any, w: Any, rb: Any):
        super().__init__((lb.shape[2], w.shape[2], rb.shape[1]), tf.result_type(lb, w, rb))
        self.lb, self.w, self.rb = lb, w, rb
        self.inputs = (lb, w, rb)

    def _apply(self, x: Any) -> Any:
        return tf.einsum("awx,wstv,xtc,vcb->asb", self.lb, self.w, x, self.rb)


class TracedTwoSite(_Operator):
    """``y[a, s, p, b] = L[a, w, x] W12[w, s, p, t, q, v] X[x, t, q, c] R[v, c, b]`` with the two
    MPO tensors contracted once per local problem."""

    def __init__(self, lb: Any, w1: Any, w2: Any, rb: Any):
        super().__init__((lb.shape[2], w1.shape[2], w2.shape[2], rb.shape[1]), tf.result_type(lb, w1, w2, rb))
        self.lb, self.rb = lb, rb
        self.w12 = tf.einsum("wstu,upqv->wsptqv", w1, w2)
        self.inputs = (lb, w1, w2, rb)

    def _apply(self, x: Any) -> Any:
        return tf.einsum("awx,wsptqv,xtqc,vcb->aspb", self.lb, self.w12, x, self.rb)


class TracedBond(_Operator):
    """``y[a, b] = L[a, w, x] C[x, c] R[w, c, b]`` (the bond matrix between the environments)."""

    def __init__(self, lb: Any, rb: Any):
        super().__init__((lb.shape[2], rb.shape[1]), tf.result_type(lb, rb))
        self.lb, self.rb = lb, rb
        self.inputs = (lb, rb)

    def _apply(self, x: Any) -> Any:
        return tf.einsum("awx,xc,wcb->ab", self.lb, x, self.rb)


@dataclass
class TracedLocal:
    """One step's local problem: the operator, the flat start vector, the local tensor's shape
    and the site ``v`` replaces (None: the kept bond matrix, or the pair of a two-site step)."""

    step: Step
    op: _Operator
    v0: Any
    shape: tuple[int, ...]
    site: int | None = None


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(int(n) for n in x.shape)


class TracedBackend:
    """MPS site tensors ``psi`` (centre at site 0 between steps), MPO tensors ``ws`` and the
    environment cache, all tenferro tensors or tidu tracers (any mix)."""

    expm = staticmethod(expm_krylov_traced)  #: the differentiable local exponential

    def __init__(self, ws: Sequence[Any], psi: Sequence[Any]):
        if len(ws) != len(psi) or not ws:
            raise ValueError(
                f"TracedBackend: {len(ws)} MPO tensors and {len(psi)} site tensors; expected the same positive number"
            )
        self.L = len(ws)
        self.ws = list(ws)
        self.dtype = tf.result_type(*self.ws, *psi)
        self.psi = _right_canonical([tf.convert(a, self.dtype) for a in psi])
        self._bond: tuple[Any, Any] | None = None  # one-site TDVP: (bond matrix, its far environment)
        self._build_envs()

    def _build_envs(self) -> None:
        one = tf.ones((1, 1, 1), dtype=self.dtype)
        self.envs: EnvCache[Any] = EnvCache(self.L, one, one, lambda b: int(b.size) * self.dtype.itemsize)
        for i in range(self.L - 1, 0, -1):
            self._push_right(i)

    def _push_left(self, i: int) -> None:
        self.envs.set_left(i + 1, transfer_left(self.envs.left(i), self.psi[i], self.psi[i], self.ws[i]))

    def _push_right(self, i: int) -> None:
        self.envs.set_right(i, transfer_right(self.envs.right(i + 1), self.psi[i], self.psi[i], self.ws[i]))

    def set_operator(self, ws: Sequence[Any], w_charges: Any = None) -> None:
        """Evolve with the MPO ``ws`` from now on (a time-dependent Hamiltonian, one MPO per
        step): the right environments are rebuilt (centre at site 0)."""
        if len(ws) != self.L:
            raise ValueError(f"set_operator: {len(ws)} MPO tensors for a chain of {self.L} sites")
        self.ws = list(ws)
        dtype = tf.result_type(self.dtype, *self.ws)
        if dtype != self.dtype:
            self.dtype = dtype
            self.psi = [tf.convert(a, dtype) for a in self.psi]
        self._build_envs()

    # ---- the sweep's protocol --------------------------------------------------------
    def local_problem(self, step: Step) -> TracedLocal:
        i, psi, envs, ws = step.site, self.psi, self.envs, self.ws
        if step.n_sites == 2:
            theta = tf.einsum("asb,bpc->aspc", psi[i], psi[i + 1])
            op = TracedTwoSite(envs.left(i), ws[i], ws[i + 1], envs.right(i + 2))
            return TracedLocal(step, op, tf.reshape(theta, (-1,)), _shape(theta))
        op1 = TracedOneSite(envs.left(i), ws[i], envs.right(i + 1))
        return TracedLocal(step, op1, tf.reshape(psi[i], (-1,)), _shape(psi[i]))

    def split(
        self,
        local: TracedLocal,
        v: Any,
        *,
        alpha: float,
        max_bond: int,
        cutoff: float,
        keep_bond: bool = False,
        level: Sequence[Any] = (),
    ) -> tuple[int, float]:
        """Cut ``v`` at the step's bond by the truncated SVD (rank from the concrete singular
        values, see the module); returns the new bond dimension and the discarded weight. With
        ``keep_bond`` (one-site TDVP) the bond matrix is kept for :meth:`backward_problem`.
        ``level`` is always empty here (these operators do not give their matrix)."""
        if alpha != 0.0:
            raise ValueError("TracedBackend.split: noise (alpha > 0) is a DMRG device; a traced run has none")
        step, shape = local.step, local.shape
        c = 2 if step.n_sites == 2 or step.direction == RIGHT else 1  # legs left of the cut
        m = tf.reshape(v, (prod(shape[:c]), -1))
        u, s, vh = tf.linalg.svd(m)
        s_c = value_of(s)
        k, err = truncation_keep(s_c, max_bond, cutoff)
        if k < int(s.shape[0]):
            u, s, vh = u[:, :k], s[:k], vh[:k, :]
        # the weights go with the centre: the factor it leaves is orthonormal (at degenerate kept
        # values the other is the projection of m onto it: exact derivatives there)
        left, right = weighted_factors(m, u, s, vh, "right" if step.direction == RIGHT else "left", s_c[:k])
        lf = tf.reshape(left, (*shape[: c - 1], -1, k))
        rf = tf.reshape(right, (k, -1, *shape[c + 1 :]))
        j = step.site + c - 2  # the site the left factor belongs to
        lf2, rf2 = len(lf.shape) == 2, len(rf.shape) == 2
        if keep_bond and (lf2 or rf2):
            # the bond matrix and the environment on its far side, which move() drops
            if rf2:
                self._bond = (rf, self.envs.right(j + 1))
                self.psi[j] = lf
            else:
                self._bond = (lf, self.envs.left(j + 1))
                self.psi[j + 1] = rf
            return k, err
        if lf2:
            lf = tf.einsum("asb,bk->ask", self.psi[j], lf)
        if rf2:
            rf = tf.einsum("kb,bsc->ksc", rf, self.psi[j + 1])
        self.psi[j], self.psi[j + 1] = lf, rf
        return k, err

    def move(self, local: TracedLocal) -> None:
        """The environment block of the site the centre left."""
        step = local.step
        (self._push_left if step.direction == RIGHT else self._push_right)(step.leaving)

    def backward_problem(self, step: Step) -> TracedLocal:
        """After ``split`` and ``move``: the arriving site with its one-site operator (two-site
        steps) or the kept bond matrix with the bond operator (one-site steps)."""
        if step.n_sites == 2:
            return self.site_problem(step.arriving, step)
        assert self._bond is not None, "split(keep_bond=True) keeps the bond matrix first"
        c, far = self._bond
        b = step.bond
        lb, rb = (self.envs.left(b), far) if step.direction == RIGHT else (far, self.envs.right(b))
        return TracedLocal(step, TracedBond(lb, rb), tf.reshape(c, (-1,)), _shape(c), None)

    def set_local(self, local: TracedLocal, v: Any) -> None:
        """Write the evolved ``v`` back: a site tensor in place, the kept bond matrix merged
        into the arriving site. A complex ``v`` on a real state raises: ``promote`` first."""
        x = tf.convert(tf.reshape(v, local.shape), self.dtype)
        if local.site is not None:
            self.psi[local.site] = x
            return
        i = local.step.arriving
        self.psi[i] = (
            tf.einsum("ab,bsc->asc", x, self.psi[i])
            if local.step.direction == RIGHT
            else tf.einsum("asb,bc->asc", self.psi[i], x)
        )
        self._bond = None

    def site_problem(self, i: int, step: Step | None = None) -> TracedLocal:
        """Site ``i`` (the centre) with its one-site operator."""
        op = TracedOneSite(self.envs.left(i), self.ws[i], self.envs.right(i + 1))
        return TracedLocal(step or Step(i, RIGHT, 1), op, tf.reshape(self.psi[i], (-1,)), _shape(self.psi[i]), i)

    def promote(self, dtype: Any) -> None:
        """Hold the state (and the environments) in ``dtype`` promoted (real time needs complex)."""
        dtype = tf.result_type(self.dtype, tf.dtype(dtype))
        if dtype == self.dtype:
            return
        self.dtype = dtype
        self.psi = [tf.convert(a, dtype) for a in self.psi]
        self._build_envs()

    def normalize(self) -> None:
        self.psi[0] = self.psi[0] / tf.linalg.norm(self.psi[0])

    def scale(self, c: Any) -> None:
        """Multiply the state by ``c`` (on the centre, site 0)."""
        self.psi[0] = self.psi[0] * c

    def state_norm(self) -> Any:
        """The norm of the state (centre at site 0), a tenferro value (traced when the state is)."""
        return tf.linalg.norm(self.psi[0])

    def bond_dims(self) -> list[int]:
        return [int(a.shape[2]) for a in self.psi[:-1]]

    def site_tensors(self, grading: Any = None) -> list[Any]:
        """The state as MPS sites: the tenferro tensors (traced where the run is)."""
        return list(self.psi)

    def dense_site(self, i: int) -> Any:
        raise NotDifferentiableError(
            "sweeps orthogonal to earlier states run on concrete tensors (dmrg's energy is differentiated "
            "by Hellmann-Feynman, not through the sweeps)"
        )

    def flat_local(self, local: Any, y: Any) -> Any:
        return self.dense_site(local.step.site)

    def energy(self) -> Any:
        """``<psi|H|psi> / <psi|psi>`` at the centre (site 0), a tenferro value (traced when the state is)."""
        local = self.site_problem(0)
        v = local.v0
        return tf.real(tf.sum(tf.conj(v) * local.op.matvec(v))) / tf.real(tf.sum(tf.conj(v) * v))

    def single_site(self) -> Any:
        """A chain of one site: its lowest eigenvalue (the state becomes its eigenvector)."""
        w = self.ws[0][0, :, :, 0]
        e, v = tf.linalg.eigh(0.5 * (w + tf.conj(tf.transpose(w))))
        self.psi[0] = tf.reshape(tf.convert(v[:, 0], self.dtype), (1, -1, 1))
        return e[0]

    def work_bytes(self, local: TracedLocal, matvecs: int) -> int:
        """The Krylov vectors of the local problem."""
        return (matvecs + 2) * prod(local.shape) * self.dtype.itemsize

    def env_bytes(self) -> int:
        return self.envs.nbytes()

    def psi_bytes(self) -> int:
        return sum(int(a.size) for a in self.psi) * self.dtype.itemsize


def _right_canonical(ts: list[Any]) -> list[Any]:
    """Sites ``1..L-1`` right-orthonormal by the differentiable LQ (``m = L Q``, Q with
    orthonormal rows), site 0 scaled to norm 1 (as :func:`._canonical.right_canonical`)."""
    ts = list(ts)
    for i in range(len(ts) - 1, 0, -1):
        dl, d, dr = _shape(ts[i])
        lm, q = tf.linalg.lq(tf.reshape(ts[i], (dl, d * dr)))
        ts[i] = tf.reshape(q, (-1, d, dr))
        ts[i - 1] = tf.einsum("asb,bc->asc", ts[i - 1], lm)
    n = tf.linalg.norm(ts[0])
    if float(value_of(n)) > 0.0:
        ts[0] = ts[0] / n
    return ts
