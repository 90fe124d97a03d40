"""The DMRG sweep engine on raw NumPy arrays: moves the orthogonality centre along the
chain, asks the local eigensolver for the lowest state of each effective Hamiltonian,
splits it with the truncation policy and updates the environment cache.

Knows nothing of tenferro or tidu; ``_dmrg`` converts at the boundary. One sweep is a
left-to-right pass followed by a right-to-left pass.

Noise (``alpha > 0``, the first sweeps by default) perturbs each local update twice, so that
a run can leave the charge sector of its start state (a Krylov solver started in one sector
stays there in exact arithmetic, and the all-up state is even an eigenstate of the XXZ chain):

* the eigensolver starts from the current tensor plus a random tensor of relative norm
  ``alpha`` (seeded), so the local ground state is found in every sector the local space
  holds, not only in the start vector's;
* the new basis at the bond is chosen from the perturbed reduced density matrix
  ``rho + alpha^2 sum_w P_w P_w^dagger`` of White's density-matrix perturbation (S. R. White,
  Phys. Rev. B 72, 180403(R) (2005); ITensor's ``noise``, TeNPy's mixer), with the terms
  ``P = (L W) psi`` of the subspace expansion (C. Hubig, I. P. McCulloch, U. Schollwoeck and
  F. A. Wolf, Phys. Rev. B 91, 155115 (2015)), so the states that the Hamiltonian connects
  to the current state (other sectors included) stay in the basis. Two-site updates scale
  ``P`` to the norm of ``psi`` and diagonalize the small density matrix (the basis of the SVD
  of ``[psi, alpha P]``, at less than the cost of the plain SVD), and keep the state itself
  exactly (the far tensor is the projection ``U^dagger psi``); one-site updates take the SVD
  of ``[psi, alpha P]`` with ``P`` as it is and pad the next tensor with zeros.

With ``alpha = 0`` the sweeps are unperturbed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._canonical import right_canonical
from ._effective import OneSiteOperator, TwoSiteOperator
from ._environments import Environments, left_step
from ._truncation import svd_truncated, truncation_keep

__all__ = ["SweepStats", "BondUpdate", "SweepEngine", "perturbed"]


def perturbed(v0: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``v0`` plus a random tensor of norm ``alpha * ||v0||``: a component in every sector
    (the noise of an eigensolver's start vector)."""
    r = rng.standard_normal(v0.shape)
    if np.iscomplexobj(v0):
        r = r + 1j * rng.standard_normal(v0.shape)
    scale = alpha * np.linalg.norm(v0) / np.linalg.norm(r)
    return v0 + (scale * r).astype(v0.dtype, copy=False)


@dataclass
class BondUpdate:
    """What the per-bond progress hook receives after each local update."""

    sweep: int            #: 1-based sweep number
    step: int             #: 1-based local update within the sweep
    steps: int            #: local updates per sweep
    site: int             #: left site of the updated pair (two-site) or the updated site
    direction: str        #: "right" or "left"
    energy: float         #: eigenvalue of the local problem
    bond_dim: int         #: bond dimension just created
    truncation_error: float


@dataclass
class SweepStats:
    energy: float
    max_bond: int
    max_truncation_error: float
    matvecs: int
    seconds: float
    peak_memory: int
    env_memory: int


class SweepEngine:
    """State of a DMRG run: MPS tensors (centre at site 0 between sweeps), MPO tensors,
    the environment cache and the local solver."""

    def __init__(self, ws: list[np.ndarray], psi: list[np.ndarray], solver: Callable, max_iter: int = 40,
                 seed: int | None = 0):
        self.ws = ws
        self.L = len(ws)
        self.dtype = np.result_type(*ws, *psi)
        self.psi = right_canonical([np.ascontiguousarray(a, dtype=self.dtype) for a in psi])
        self.solver = solver
        self.max_iter = max_iter
        self._rng = np.random.default_rng(seed)  # the noise of the eigensolver's start vectors
        self.envs = Environments(ws, self.dtype)
        for i in range(self.L - 1, 0, -1):
            self.envs.push_right(i, self.psi[i])

    # ---- measurements of the current state (centre at site 0) -----------------------
    def energy(self) -> float:
        c = self.psi[0]
        op = OneSiteOperator(self.envs.left(0), self.ws[0], self.envs.right(1)) if self.L > 1 else None
        if op is None:
            w = self.ws[0][0, :, :, 0]
            v = c.reshape(-1)
            return float(np.vdot(v, w @ v).real / np.vdot(v, v).real)
        v = c.reshape(-1)
        return float(np.vdot(v, op.matvec(v)).real / np.vdot(v, v).real)

    def nbytes(self) -> int:
        return self.envs.nbytes() + sum(a.nbytes for a in self.psi)

    def operator_gradients(self) -> list[np.ndarray]:
        """``G_i = d<psi|H|psi>/dW_i`` (``<psi|psi> = 1``) at the current state, for the
        Hellmann-Feynman derivative ``dE = sum_i sum G_i * dW_i`` (MPO index order).

        One left-to-right pass: the right blocks are the cached ones of the last
        (right-to-left) half sweep, the left blocks are built on the way, and each
        ``G_i[w, s, t, v] = sum L[x, w, y] conj(A[x, s, b]) A[y, t, c] R[v, c, b]``
        is three GEMMs (cost ``O(chi^3 d D + chi^2 d^2 D^2)`` per site).
        """
        psi, ws, envs = self.psi, self.ws, self.envs
        norm2 = float(np.vdot(psi[0], psi[0]).real)  # sites > 0 are right-canonical
        lb = envs.left(0)
        out = []
        for i in range(self.L):
            a, rb = psi[i], envs.right(i + 1)
            cx, dw, ky = lb.shape
            _, d, cb = a.shape
            dv, kc, _ = rb.shape
            # P[(w y), (s b)] = L^T conj(A);  Q[(y t), (v b)] = A R
            p = lb.reshape(cx, dw * ky).T @ a.reshape(cx, d * cb).conj()
            q = a.reshape(ky * d, kc) @ rb.transpose(1, 0, 2).reshape(kc, dv * cb)
            p = p.reshape(dw, ky, d, cb).transpose(0, 2, 1, 3).reshape(dw * d, ky * cb)
            q = q.reshape(ky, d, dv, cb).transpose(0, 3, 1, 2).reshape(ky * cb, d * dv)
            out.append((p @ q).reshape(dw, d, d, dv) / norm2)
            if i + 1 < self.L:
                lb = left_step(lb, a, ws[i])
        return out

    # ---- sweeps -----------------------------------------------------------------------
    def sweep(self, *, two_site: bool, max_bond: int, cutoff: float, tol: float, alpha: float,
              sweep_no: int, progress: Callable[[BondUpdate], None] | None) -> SweepStats:
        t0 = time.perf_counter()
        self._stats = dict(max_bond=1, err=0.0, matvecs=0, peak=self.nbytes(), env=self.envs.nbytes())
        if self.L == 1:
            energy = self._single_site_chain(tol)
        elif two_site:
            energy = self._two_site_sweep(max_bond, cutoff, tol, alpha, sweep_no, progress)
        else:
            energy = self._one_site_sweep(max_bond, cutoff, tol, alpha, sweep_no, progress)
        st = self._stats
        return SweepStats(energy, max(self.bond_dims(), default=1), st["err"], st["matvecs"],
                          time.perf_counter() - t0, st["peak"], st["env"])

    def bond_dims(self) -> list[int]:
        return [a.shape[2] for a in self.psi[:-1]]

    def _solve(self, op, v0: np.ndarray, tol: float, alpha: float = 0.0) -> tuple[float, np.ndarray]:
        if alpha > 0.0:
            v0 = perturbed(v0, alpha, self._rng)
        e, v, n = self.solver(op, v0.reshape(-1), tol=tol, max_iter=self.max_iter)
        st = self._stats
        st["matvecs"] += n
        work = n * v0.size * np.dtype(self.dtype).itemsize
        env = self.envs.nbytes()
        st["env"] = max(st["env"], env)
        st["peak"] = max(st["peak"], env + sum(a.nbytes for a in self.psi) + work)
        return e, v

    def _note(self, keep: int, err: float) -> None:
        st = self._stats
        st["max_bond"] = max(st["max_bond"], keep)
        st["err"] = max(st["err"], err)

    def _single_site_chain(self, tol: float) -> float:
        w = self.ws[0][0, :, :, 0]
        m = 0.5 * (w + w.conj().T)
        e, v = np.linalg.eigh(m)
        self.psi[0] = v[:, 0].reshape(1, -1, 1).astype(self.dtype)
        return float(e[0])

    def _two_site_sweep(self, max_bond, cutoff, tol, alpha, sweep_no, progress) -> float:
        L, psi, envs, ws = self.L, self.psi, self.envs, self.ws
        steps = 2 * (L - 1)
        step = 0
        energy = 0.0
        for direction, sites in (("right", range(L - 1)), ("left", range(L - 2, -1, -1))):
            for i in sites:
                a, b = psi[i], psi[i + 1]
                dl, d1, _ = a.shape
                _, d2, dr = b.shape
                theta = (a.reshape(dl * d1, -1) @ b.reshape(b.shape[0], d2 * dr))
                op = TwoSiteOperator(envs.left(i), ws[i], ws[i + 1], envs.right(i + 2))
                energy, v = self._solve(op, theta, tol, alpha)
                m = v.reshape(dl * d1, d2 * dr)
                if direction == "right":
                    if alpha > 0.0:  # basis from the perturbed density matrix; the state is U^dagger theta
                        p = _expand_right(envs.left(i), ws[i], m.reshape(dl, d1, d2 * dr)).reshape(dl * d1, -1)
                        u, err = _perturbed_basis(m, p, alpha, max_bond, cutoff)
                        rest = u.conj().T @ m
                    else:
                        u, s, vh, err = svd_truncated(m, max_bond, cutoff)
                        rest = s[:, None] * vh
                    k = u.shape[1]
                    psi[i] = np.ascontiguousarray(u.reshape(dl, d1, k))
                    psi[i + 1] = np.ascontiguousarray(rest.reshape(k, d2, dr))
                    envs.push_left(i, psi[i])
                else:
                    if alpha > 0.0:  # the same on the right: the state is theta V
                        p = _expand_left(m.reshape(dl * d1, d2, dr), ws[i + 1], envs.right(i + 2))
                        vb, err = _perturbed_basis(m.T, p.reshape(-1, d2 * dr).T, alpha, max_bond, cutoff)
                        vh = vb.T
                        rest = m @ vb.conj()
                    else:
                        u, s, vh, err = svd_truncated(m, max_bond, cutoff)
                        rest = u * s
                    k = vh.shape[0]
                    psi[i + 1] = np.ascontiguousarray(vh.reshape(k, d2, dr))
                    psi[i] = np.ascontiguousarray(rest.reshape(dl, d1, k))
                    envs.push_right(i + 1, psi[i + 1])
                self._note(k, err)
                step += 1
                if progress is not None:
                    progress(BondUpdate(sweep_no, step, steps, i, direction, energy, k, err))
        psi[0] = psi[0] / np.linalg.norm(psi[0])
        return self.energy()

    def _one_site_sweep(self, max_bond, cutoff, tol, alpha, sweep_no, progress) -> float:
        L, psi, envs, ws = self.L, self.psi, self.envs, self.ws
        steps = 2 * (L - 1)
        step = 0
        energy = 0.0
        for direction, sites in (("right", range(L - 1)), ("left", range(L - 1, 0, -1))):
            for i in sites:
                op = OneSiteOperator(envs.left(i), ws[i], envs.right(i + 1))
                energy, v = self._solve(op, psi[i], tol, alpha)
                m = v.reshape(psi[i].shape)
                dl, d, dr = m.shape
                if direction == "right":
                    nxt = psi[i + 1]
                    if alpha > 0.0:
                        p = alpha * op.expand_term(m)
                        m = np.concatenate([m, p], axis=2)
                        nxt = np.concatenate([nxt, np.zeros((p.shape[2],) + nxt.shape[1:], self.dtype)], axis=0)
                    u, s, vh, err = svd_truncated(m.reshape(dl * d, -1), max_bond, cutoff)
                    k = len(s)
                    psi[i] = np.ascontiguousarray(u.reshape(dl, d, k))
                    psi[i + 1] = np.ascontiguousarray(np.tensordot(s[:, None] * vh, nxt, axes=(1, 0)))
                    envs.push_left(i, psi[i])
                else:
                    prv = psi[i - 1]
                    if alpha > 0.0:
                        p = alpha * _expand_left(m, ws[i], envs.right(i + 1))
                        m = np.concatenate([m, p], axis=0)
                        prv = np.concatenate([prv, np.zeros(prv.shape[:2] + (p.shape[0],), self.dtype)], axis=2)
                    u, s, vh, err = svd_truncated(m.reshape(m.shape[0], d * dr), max_bond, cutoff)
                    k = len(s)
                    psi[i] = np.ascontiguousarray(vh.reshape(k, d, dr))
                    psi[i - 1] = np.ascontiguousarray(np.tensordot(prv, u * s, axes=(2, 0)))
                    envs.push_right(i, psi[i])
                self._note(k, err)
                step += 1
                if progress is not None:
                    progress(BondUpdate(sweep_no, step, steps, i, direction, energy, k, err))
        psi[0] = psi[0] / np.linalg.norm(psi[0])
        return self.energy()


def _perturbed_basis(m: np.ndarray, p: np.ndarray, alpha: float, max_bond: int,
                     cutoff: float) -> tuple[np.ndarray, float]:
    """Orthonormal columns ``U`` spanning the dominant eigenvectors of the perturbed density
    matrix ``m m^dagger + alpha^2 p p^dagger`` (White 2005), truncated as the SVD would be
    (``max_bond``, relative discarded weight ``cutoff``), and the discarded weight.

    ``p`` is first scaled to the norm of ``m``: the size of the expansion term depends on the
    gauge and scale of the MPO (a rescaled automaton MPO carries large identity strings), so
    ``alpha`` is its relative size. The same basis as the SVD of ``[m, alpha p]`` (Hubig et
    al. 2015), from one GEMM and a Hermitian eigensolver of the small side: several times
    cheaper than an SVD of the wide matrix. Its eigenvalues are squared singular values,
    accurate to ~1e-16 of the largest, which is enough to choose a basis; the state itself is
    projected exactly."""
    rho = m @ m.conj().T
    top = float(np.max(np.abs(p))) if p.size else 0.0
    if top > 0.0 and np.isfinite(top):
        p = p / top
        rho += ((alpha * np.linalg.norm(m) / np.linalg.norm(p)) ** 2) * (p @ p.conj().T)
    w, u = np.linalg.eigh(rho)
    w, u = w[::-1], u[:, ::-1]
    keep, err = truncation_keep(np.sqrt(np.clip(w, 0.0, None)), max_bond, cutoff)
    return np.ascontiguousarray(u[:, :keep]), err


def _expand_right(lb: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``P[a, s, (w', b')] = sum L[a, w, a'] W[w, s, t, w'] x[a', t, b']`` (right-moving
    expansion; ``b'`` may be a fused index, e.g. the second site and the right bond)."""
    ca, dw, ka = lb.shape
    _, d, kb = x.shape
    dw2 = w.shape[3]
    t = (lb.reshape(ca * dw, ka) @ x.reshape(ka, d * kb)).reshape(ca, dw * d, kb)   # (a, w t, b')
    t = np.matmul(w.transpose(1, 3, 0, 2).reshape(d * dw2, dw * d), t)              # (a, s w', b')
    return t.reshape(ca, d, dw2 * kb)


def _expand_left(x: np.ndarray, w: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """``P[(w a'), s, b] = sum W[w, s, t, w'] x[a', t, b'] R[w', b', b]`` (left-moving expansion)."""
    ka, d, kb = x.shape
    dw, _, _, dw2 = w.shape
    cb = rb.shape[2]
    r = rb.transpose(1, 0, 2).reshape(kb, dw2 * cb)
    t = (x.reshape(ka * d, kb) @ r).reshape(ka, d * dw2, cb)     # (a', t w', b)
    t = np.matmul(w.reshape(dw * d, d * dw2), t)                  # (a', w s, b)
    return np.ascontiguousarray(t.reshape(ka, dw, d, cb).transpose(1, 0, 2, 3).reshape(dw * ka, d, cb))
