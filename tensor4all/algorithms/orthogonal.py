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
and loses nothing, so a sweep ends exactly orthogonal (to rounding).

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

from ..tools.device import array_module, to_host
from .schedule import RIGHT, Step

__all__ = ["OrthogonalImages", "ProjectedOperator", "ProjectedMatrixOperator", "IMAGE_RANK_TOL"]

IMAGE_RANK_TOL = 1e-20
"""Images whose Gram eigenvalue (squared norm in the local space) is below this are dropped: an
earlier state that overlaps the local space by less than 1e-10 constrains nothing measurable."""


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
        change where they span nothing, or everything: a local space too small to hold a state
        orthogonal to all of them leaves that step free; the next steps are not)."""
        ys = [self.backend.flat_local(local, y) for y in self.images(local.step)]
        if not ys:
            return
        xp = array_module(local.v0)
        m = xp.stack(ys, axis=1).astype(np.result_type(local.v0.dtype, ys[0].dtype), copy=False)
        gram = m.conj().T @ m
        w, u = np.linalg.eigh(to_host(gram))
        keep = w > IMAGE_RANK_TOL
        if not keep.any() or int(keep.sum()) >= m.shape[0]:
            return
        q = m @ xp.asarray(u[:, keep] / np.sqrt(w[keep]))
        op = (ProjectedMatrixOperator if hasattr(local.op, "dense") else ProjectedOperator)(local.op, q)
        v0 = op.project(local.v0)
        if float(xp.linalg.norm(v0)) <= 1e-8 * float(xp.linalg.norm(local.v0)):  # the start is an earlier state
            r = self.rng.standard_normal(v0.shape)
            v0 = op.project(xp.asarray(r.astype(v0.dtype)))
        local.op = op
        local.v0 = v0
