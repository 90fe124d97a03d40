"""Sweeps orthogonal to earlier states: the local eigenproblem of every step restricted to the
orthogonal complement of the earlier states' local images (explicit projection, as in J. von
Delft's DMRG lecture notes and the Krylov approach of TeNPy issue 359).

With the centre at the step's sites, the state is ``|psi(x)> = sum x[a, s.., b] |a>|s..>|b>``
with the environment bases ``|a>``, ``|b>`` of the current state, so the overlap with an earlier
state ``|k>`` is linear in the local tensor: ``<k|psi(x)> = <y_k, x>``, its local image
``y_k[a, s.., b] = sum conj(OL_k[a', a]) K[a', s.., b'] conj(OR_k[b', b])`` with the overlap
environments ``OL_k`` (the sites left of the step, ``<k|psi>`` contracted from the left) and
``OR_k``. The eigensolver then works with ``P H P``, ``P = 1 - Q Q^dagger`` and ``Q`` an
orthonormal basis of the images: every product is projected on both sides, so the complement's
Krylov space never picks up the excluded directions (their eigenvalue under ``P H P`` is 0, which
a Hamiltonian with positive energies would otherwise offer as its lowest); the dense local solver
lifts them above the spectrum instead. Each solution is orthogonal to the images, so the state
after a step is orthogonal to every earlier state up to what the truncation of that step discards;
the last step of a sweep cuts the bond next to the first site, which holds at most ``d`` states
and loses nothing, so a sweep ends exactly orthogonal (to rounding) where every step had room for
an orthogonal state. Where a step's local space has none (its environment bases, made by the steps
before, are spanned by the images: bonds still small, or a charge sector's few states at the
chain's ends), the step takes the direction least overlapping the images, and the next sweeps
with larger bases go on from there; :func:`~tensor4all.dmrg` checks the final overlaps.

Why projection rather than the penalty ``H + w sum_k |k><k|`` (ITensor's ``weight``): it needs no
weight (too small a weight finds an earlier state again, too large a one slows the eigensolver
down), and it keeps the local problem's spectrum that of ``H``.

The overlap environments are kept here on dense arrays, one pair per earlier state; a backend
gives its current sites as dense arrays (:meth:`dense_site`) and turns a dense local tensor into
its own flat layout (:meth:`flat_local`), so the projection is written once for the dense and the
charge-sector backends.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..networks.contractions import scaled_overlap
from ..tools.device import array_module, to_host
from .schedule import RIGHT, Step

__all__ = [
    "OrthogonalImages",
    "ProjectedOperator",
    "ProjectedMatrixOperator",
    "IMAGE_RANK_TOL",
    "image_basis",
    "ORTHOGONAL_TOL",
    "overlaps",
]

IMAGE_RANK_TOL = 1e-20
"""Images whose Gram eigenvalue (squared norm in the local space) is below this are dropped: an
earlier state that overlaps the local space by less than 1e-10 constrains nothing measurable."""


ORTHOGONAL_TOL = 1e-6
"""The largest overlap ``|<k|psi>| / (|k| |psi|)`` of a finished run with an earlier state that
counts as orthogonal (besides ``10 sqrt(w)`` for a last sweep that discarded the weight ``w``:
each truncation may take the state that far out of the complement); above it ``dmrg`` raises
:class:`~tensor4all.NoOrthogonalStateError`."""


def overlaps(states: Sequence[Sequence[np.ndarray]], psi: Sequence[np.ndarray]) -> list[float]:
    """``|<k|psi>| / (|k| |psi|)`` of each of ``states`` with ``psi`` (dense site arrays each;
    :func:`~tensor4all.networks.contractions.scaled_overlap`, safe at any scale)."""

    def inner(a: Sequence[Any], b: Sequence[Any]) -> complex:
        return complex(np.asarray(scaled_overlap(a, b, "dmrg: orthogonal_to")))

    host = [np.asarray(to_host(a)) for a in psi]
    norm = np.sqrt(abs(inner(host, host)))
    return [abs(inner(k, host)) / (np.sqrt(abs(inner(k, k))) * norm) for k in states]


class ProjectedOperator:
    """``x -> P op(P x)`` with ``P = 1 - Q Q^dagger`` (``Q``: orthonormal columns); every other
    attribute is the wrapped operator's (a backend's split reads its own operator's layout)."""

    def __init__(self, op: Any, q: Any):
        self.op = op
        self.q = q
        self.shape = op.shape
        self.dtype = np.result_type(op.dtype, q.dtype)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["op"], name)

    def project(self, x: Any) -> Any:
        return x - self.q @ (self.q.conj().T @ x)

    def matvec(self, x: Any) -> Any:
        return self.project(self.op.matvec(self.project(x)))


class ProjectedMatrixOperator(ProjectedOperator):
    """A :class:`ProjectedOperator` of an operator that gives its matrix (``dense()``), for the
    dense local solver."""

    def dense(self) -> np.ndarray:
        """``P H P + sigma Q Q^dagger`` with ``sigma`` above the spectrum of ``H`` (twice its
        Frobenius norm, plus one): the dense solver's lowest eigenvector then lies in the
        complement."""
        h = np.asarray(self.op.dense())
        q = np.asarray(self.q)
        p = np.eye(h.shape[0], dtype=np.result_type(h, q)) - q @ q.conj().T
        sigma = 2.0 * float(np.linalg.norm(h)) + 1.0
        return p @ h @ p + sigma * (q @ q.conj().T)


class OrthogonalImages:
    """The overlap environments of a sweep with the earlier ``states`` (each a list of dense site
    arrays ``(left, d, right)``) and the constraint they put on each local problem.

    ``restrict(local)`` replaces the local problem's operator by its projection (and projects its
    start vector); ``moved(local)`` updates the environments after the backend's ``move``. The
    backend's centre is at site 0 when this is made."""

    def __init__(self, backend: Any, states: Sequence[Sequence[np.ndarray]], rng: np.random.Generator):
        self.backend = backend
        self.L = backend.L
        self.rng = rng
        like = backend.dense_site(0)
        xp = array_module(like)
        self.states = [[xp.asarray(np.asarray(a)) for a in k] for k in states]
        one = xp.ones((1, 1), dtype=like.dtype)
        self.left: list[list[Any]] = [[one] + [None] * self.L for _ in self.states]
        self.right: list[list[Any]] = [[None] * self.L + [one] for _ in self.states]
        for j in range(self.L - 1, 0, -1):
            self._push_right(j, backend.dense_site(j))

    # ---- environments -------------------------------------------------------------------
    def _push_left(self, i: int, site: Any) -> None:
        """``OL_k[i + 1]`` from ``OL_k[i]`` and site ``i`` of the state and of each ``k``."""
        xp = array_module(site)
        for k, env in zip(self.states, self.left):
            env[i + 1] = xp.einsum("ka,ksl,asb->lb", env[i], k[i].conj(), site, optimize=True)

    def _push_right(self, j: int, site: Any) -> None:
        """``OR_k[j]`` from ``OR_k[j + 1]`` and site ``j``."""
        xp = array_module(site)
        for k, env in zip(self.states, self.right):
            env[j] = xp.einsum("ksl,asb,lb->ka", k[j].conj(), site, env[j + 1], optimize=True)

    def moved(self, local: Any) -> None:
        """After the backend moved its centre past ``local.step``: the environment of the site it
        left."""
        step: Step = local.step
        j = step.leaving
        site = self.backend.dense_site(j)
        if step.direction == RIGHT:
            self._push_left(j, site)
        else:
            self._push_right(j, site)

    # ---- the constraint --------------------------------------------------------------------
    def images(self, step: Step) -> list[Any]:
        """Each earlier state's local image as a dense local tensor ``(left, d.., right)``."""
        i, n = step.site, step.n_sites
        out = []
        for k, lenv, renv in zip(self.states, self.left, self.right):
            xp = array_module(k[i])
            if n == 2:
                y = xp.einsum("ka,ksm,mtl,lb->astb", lenv[i].conj(), k[i], k[i + 1], renv[i + 2].conj(), optimize=True)
            else:
                y = xp.einsum("ka,ksl,lb->asb", lenv[i].conj(), k[i], renv[i + 1].conj(), optimize=True)
            out.append(y)
        return out

    def restrict(self, local: Any) -> None:
        """Project ``local``'s operator and start vector onto the complement of the images (no
        change where they span nothing). Where they span the whole local space (its environment
        bases cannot yet hold a state orthogonal to all of them: small bonds early in a run, a
        charge sector's few states at the chain's ends), the complement kept is the one direction
        that overlaps them least (the smallest singular direction of the images), not the whole
        space: a free step there would give the unconstrained lowest state, an earlier state."""
        ys = [self.backend.flat_local(local, y) for y in self.images(local.step)]
        if not ys:
            return
        xp = array_module(local.v0)
        m = xp.stack(ys, axis=1).astype(np.result_type(local.v0.dtype, ys[0].dtype), copy=False)
        q = image_basis(m)
        if q is None:
            return
        op = (ProjectedMatrixOperator if hasattr(local.op, "dense") else ProjectedOperator)(local.op, q)
        v0 = op.project(local.v0)
        if float(xp.linalg.norm(v0)) <= 1e-8 * float(xp.linalg.norm(local.v0)):  # the start is an earlier state
            r = self.rng.standard_normal(v0.shape)
            v0 = op.project(xp.asarray(r.astype(v0.dtype)))
        local.op = op
        local.v0 = v0


def image_basis(m: Any) -> Any:
    """An orthonormal basis ``Q`` of the span of the columns of ``m`` (the local images), from its
    thin SVD: directions whose singular value is below ``sqrt(IMAGE_RANK_TOL)`` or below the SVD's
    resolution (``n eps s_max``, ``numpy.linalg.matrix_rank``'s tolerance) are dropped; at most
    ``rows - 1`` directions (the weakest dropped), so that the complement is never empty. None
    where nothing is left to project out."""
    n = m.shape[0]
    if n == 0:
        return None
    u, s, _ = array_module(m).linalg.svd(m, full_matrices=False)
    s = to_host(s)
    top = float(s[0]) if s.size else 0.0
    tol = max(float(np.sqrt(IMAGE_RANK_TOL)), top * max(m.shape) * float(np.finfo(s.dtype).eps))
    rank = min(int(np.count_nonzero(s > tol)), n - 1)
    return u[:, :rank] if rank > 0 else None
