"""The dense backend of the DMRG sweep (:mod:`._sweep`): MPS site tensors and environment
blocks as C-contiguous NumPy arrays in the GEMM-friendly layouts of :mod:`._environments`.

For each :class:`~._schedule.Step` it gives the sweep

* ``local_problem``: the effective Hamiltonian (:mod:`._effective`) and its start vector,
  the centre tensor (one-site) or the product of the pair (two-site);
* ``split``: the truncated split of the new local tensor at the bond the step creates, the
  factor the centre leaves orthonormal (:mod:`._truncation`), the other one merged into the
  next site (one-site) or kept as the next site (two-site);
* ``move``: the environment block of the site the centre left.

With noise ``alpha > 0`` the split keeps the states that the Hamiltonian connects to the
new tensor ``psi`` in the basis, through the expansion terms ``P = (L W) psi`` (moving
right) or ``psi (W R)`` (moving left) of the subspace expansion (C. Hubig,
I. P. McCulloch, U. Schollwoeck and F. A. Wolf, Phys. Rev. B 91, 155115 (2015)):
two-site steps take the basis from White's perturbed density matrix ``rho + alpha^2 P
P^dagger`` (S. R. White, Phys. Rev. B 72, 180403(R) (2005)), with ``P`` scaled to the norm
of ``psi``, and keep the state itself exactly (the far tensor is the projection of ``psi``);
one-site steps take the SVD of ``[psi, alpha P]`` with ``P`` as it is, the next tensor
padded with zeros (so only ``psi``'s part of the far factor is merged into it).

It also measures the state with the centre at site 0: energy and the Hellmann-Feynman
gradients ``dE/dW_i``.

Placement: the arrays live on the CPU (NumPy) or on a GPU (CuPy, :mod:`._device`): the
MPO and start state are copied there once, every product, factorization and environment
update runs there, and :meth:`DenseBackend.host_psi` copies the state back.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ..linalg.canonical import right_canonical
from ..linalg.krylov import expm_krylov
from ..tools.device import array_module, contiguous, host_tensor, to_device, to_host
from .effective import BondOperator, OneSiteOperator, TwoSiteOperator
from ..networks.environments import Environments, left_step, lw_product, wr_product
from .schedule import RIGHT, Step
from ..linalg.truncation import split, split_perturbed

__all__ = ["DenseBackend", "DenseLocal"]


@dataclass
class DenseLocal:
    """One step's local problem: the operator, the flat start vector and the local tensor's
    shape ``(left, d_site[, d_site+1], right)``."""

    step: Step
    op: OneSiteOperator | TwoSiteOperator | BondOperator
    v0: np.ndarray
    shape: tuple[int, ...]
    site: int | None = None  #: the site whose tensor ``v`` replaces (None: the kept bond matrix)


class DenseBackend:
    """MPS tensors (centre at site 0 between sweeps), MPO tensors and the environment cache."""

    expm = staticmethod(expm_krylov)  #: the local exponential of time evolution

    def __init__(self, ws: list[np.ndarray], psi: list[np.ndarray], placement: Any = None):
        """``ws``, ``psi``: host (or already placed) arrays; ``placement`` a :class:`tenferro.Placement`
        (``None``: where ``ws`` live)."""
        self.dtype = np.result_type(*[a.dtype for a in ws], *[a.dtype for a in psi])
        if placement is not None:
            ws = to_device([to_host(w) for w in ws], placement)
            psi = to_device([to_host(a).astype(self.dtype, copy=False) for a in psi], placement)
        self.ws = ws
        self.L = len(ws)
        self.psi = right_canonical([contiguous(a.astype(self.dtype, copy=False)) for a in psi])
        self.envs = Environments(ws, self.dtype)
        for i in range(self.L - 1, 0, -1):
            self.envs.push_right(i, self.psi[i])
        self._bond: tuple[np.ndarray, np.ndarray] | None = None  # TDVP: (bond matrix, its far environment)

    # ---- the sweep's protocol --------------------------------------------------------
    def local_problem(self, step: Step) -> DenseLocal:
        i, psi, envs, ws = step.site, self.psi, self.envs, self.ws
        if step.n_sites == 2:
            a, b = psi[i], psi[i + 1]
            dl, d1, _ = a.shape
            _, d2, dr = b.shape
            theta = a.reshape(dl * d1, -1) @ b.reshape(b.shape[0], d2 * dr)
            op = TwoSiteOperator(envs.left(i), ws[i], ws[i + 1], envs.right(i + 2))
            return DenseLocal(step, op, theta.reshape(-1), (dl, d1, d2, dr))
        op1 = OneSiteOperator(envs.left(i), ws[i], envs.right(i + 1))
        return DenseLocal(step, op1, psi[i].reshape(-1), psi[i].shape)

    def split(
        self,
        local: DenseLocal,
        v: np.ndarray,
        *,
        alpha: float,
        max_bond: int,
        cutoff: float,
        keep_bond: bool = False,
        level: Sequence[np.ndarray] = (),
    ) -> tuple[int, float]:
        """Cut the new local tensor ``v`` at the step's bond; returns the new bond dimension
        and the discarded weight. With ``keep_bond`` (one-site TDVP) a bond-matrix factor is
        kept aside for :meth:`backward_problem` instead of being merged into the next site.
        ``level`` is always empty here (these operators do not give their matrix)."""
        step, shape = local.step, local.shape
        c = 2 if step.n_sites == 2 or step.direction == RIGHT else 1  # legs left of the cut
        m = v.reshape(prod(shape[:c]), -1)
        if alpha > 0.0:
            p = self._expansion(step, v, shape)
            if step.n_sites == 2:
                left, right, err = split_perturbed(m, p, step.direction, alpha, max_bond, cutoff)
            else:  # [psi, alpha P]: the bond grows by P's columns (rows moving left)
                m = np.concatenate([m, alpha * p], axis=1 if step.direction == RIGHT else 0)
                left, right, err = split(m, step.direction, max_bond, cutoff)
        else:
            left, right, err = split(m, step.direction, max_bond, cutoff)
        k = left.shape[1]
        # a factor with a physical leg is a site tensor; a bond matrix merges into the next
        # site, padded with zeros where the bond grew
        lf, rf = left.reshape(*shape[: c - 1], -1, k), right.reshape(k, -1, *shape[c + 1 :])
        j = step.site + c - 2  # the site the left factor belongs to
        if keep_bond and (lf.ndim == 2 or rf.ndim == 2):
            # the bond matrix and the environment on its far side, which move() drops
            if rf.ndim == 2:
                self._bond = (rf, self.envs.right(j + 1))
                self.psi[j] = contiguous(lf)
            else:
                self._bond = (lf, self.envs.left(j + 1))
                self.psi[j + 1] = contiguous(rf)
            return k, err
        if lf.ndim == 2:
            lf = np.tensordot(_zero_padded(self.psi[j], lf.shape[0], 2), lf, axes=(2, 0))
        if rf.ndim == 2:
            rf = np.tensordot(rf, _zero_padded(self.psi[j + 1], rf.shape[1], 0), axes=(1, 0))
        self.psi[j], self.psi[j + 1] = contiguous(lf), contiguous(rf)
        return k, err

    def _expansion(self, step: Step, v: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """The expansion term of the site the centre leaves, as a matrix sharing that side's
        index with the cut: ``L W x`` as ``(rows, k)`` moving right, ``x W R`` as ``(k, cols)``
        moving left."""
        j = step.leaving
        k = 1 + j - step.site  # the leg of site j in the local tensor
        x = v.reshape(prod(shape[:k]), shape[k], -1)
        if step.direction == RIGHT:
            p = lw_product(self.envs.left(j), self.ws[j], x)
            return p.reshape(x.shape[0] * x.shape[1], -1)
        p = wr_product(x, self.ws[j], self.envs.right(j + 1))
        return p.reshape(-1, x.shape[1] * x.shape[2])

    def move(self, local: DenseLocal) -> None:
        """The environment block of the site the centre left."""
        step = local.step
        push = self.envs.push_left if step.direction == RIGHT else self.envs.push_right
        push(step.leaving, self.psi[step.leaving])

    def backward_problem(self, step: Step) -> DenseLocal:
        """After ``split`` and ``move``: the tensor at the centre's new position and its operator,
        for TDVP's backward step. Two-site steps: the arriving site with the one-site operator;
        one-site steps: the bond matrix kept by ``split(keep_bond=True)`` with the bond
        operator (zero sites)."""
        if step.n_sites == 2:
            i = step.arriving
            op = OneSiteOperator(self.envs.left(i), self.ws[i], self.envs.right(i + 1))
            return DenseLocal(step, op, self.psi[i].reshape(-1), self.psi[i].shape, i)
        assert self._bond is not None, "split(keep_bond=True) keeps the bond matrix first"
        c, far = self._bond
        b = step.bond
        lb, rb = (self.envs.left(b), far) if step.direction == RIGHT else (far, self.envs.right(b))
        return DenseLocal(step, BondOperator(lb, rb), c.reshape(-1), c.shape, None)

    def set_local(self, local: DenseLocal, v: np.ndarray) -> None:
        """Write the evolved tensor ``v`` of ``local`` back: a site tensor in place, the kept bond
        matrix merged into the arriving site."""
        x = v.reshape(local.shape).astype(self.dtype, copy=False)
        if local.site is not None:
            self.psi[local.site] = contiguous(x)
            return
        i = local.step.arriving
        self.psi[i] = contiguous(
            np.tensordot(x, self.psi[i], axes=(1, 0))
            if local.step.direction == RIGHT
            else np.tensordot(self.psi[i], x, axes=(2, 0))
        )
        self._bond = None

    def site_problem(self, i: int) -> DenseLocal:
        """Site ``i`` (the centre) with its one-site operator (TDVP's one-site steps)."""
        op = OneSiteOperator(self.envs.left(i), self.ws[i], self.envs.right(i + 1))
        return DenseLocal(Step(i, RIGHT, 1), op, self.psi[i].reshape(-1), self.psi[i].shape, i)

    def promote(self, dtype: np.dtype) -> None:
        """Hold the state (and the environments) in ``dtype`` (real time needs complex)."""
        dtype = np.result_type(self.dtype, dtype)
        if dtype == self.dtype:
            return
        self.dtype = dtype
        self.psi = [a.astype(dtype) for a in self.psi]
        self._rebuild_envs()

    def set_operator(self, ws: list[np.ndarray], w_charges: Any = None) -> None:
        """Use the MPO ``ws`` (host arrays) from now on, the state kept (a time-dependent
        Hamiltonian): the right environments are rebuilt (centre at site 0); a dense state has
        no use for the MPO's bond charges ``w_charges``."""
        ws = to_device([to_host(w) for w in ws], tf.placement_of(self.psi[0]))
        self.ws = ws
        self.dtype = np.result_type(self.dtype, *[w.dtype for w in ws])
        self.psi = [a.astype(self.dtype, copy=False) for a in self.psi]
        self._rebuild_envs()

    def _rebuild_envs(self) -> None:
        self.envs = Environments(self.ws, self.dtype)
        for i in range(self.L - 1, 0, -1):
            self.envs.push_right(i, self.psi[i])

    def scale(self, c: Any) -> None:
        """Multiply the state by ``c`` (on the centre, site 0)."""
        self.psi[0] = self.psi[0] * c

    def normalize(self) -> None:
        self.psi[0] = self.psi[0] / np.linalg.norm(self.psi[0])

    def state_norm(self) -> float:
        """The norm of the state (centre at site 0)."""
        return float(np.linalg.norm(self.psi[0]))

    def single_site(self) -> float:
        """A chain of one site: the lowest eigenvector of its operator, exactly."""
        w = self.ws[0][0, :, :, 0]
        e, v = np.linalg.eigh(0.5 * (w + w.conj().T))
        e = to_host(e)
        self.psi[0] = v[:, 0].reshape(1, -1, 1).astype(self.dtype)
        return float(e[0])

    def work_bytes(self, local: DenseLocal, matvecs: int) -> int:
        """The eigensolver's Krylov vectors."""
        return matvecs * local.v0.size * np.dtype(self.dtype).itemsize

    def env_bytes(self) -> int:
        return self.envs.nbytes()

    def psi_bytes(self) -> int:
        return sum(a.nbytes for a in self.psi)

    def host_psi(self) -> list[np.ndarray]:
        """The site tensors as NumPy arrays (copied from the device where they live there)."""
        return [to_host(a) for a in self.psi]

    def bond_dims(self) -> list[int]:
        return [a.shape[2] for a in self.psi[:-1]]

    def site_tensors(self, grading: Any = None) -> list[Any]:
        """The state as MPS sites: host tenferro tensors."""
        return [host_tensor(a) for a in self.host_psi()]

    # ---- the sites as dense arrays (sweeps orthogonal to earlier states, :mod:`.orthogonal`) --
    def dense_site(self, i: int) -> np.ndarray:
        """Site ``i`` ``(left, d, right)``."""
        return self.psi[i]

    def flat_local(self, local: DenseLocal, y: np.ndarray) -> np.ndarray:
        """The dense local tensor ``y`` (``local.shape``) in the layout of ``local.v0``."""
        return y.reshape(-1)

    # ---- measurements of the current state (centre at site 0) -----------------------
    def energy(self) -> float:
        v = self.psi[0].reshape(-1)
        if self.L == 1:
            w = self.ws[0][0, :, :, 0]
            return float(np.vdot(v, w @ v).real / np.vdot(v, v).real)
        op = OneSiteOperator(self.envs.left(0), self.ws[0], self.envs.right(1))
        return float(np.vdot(v, op.matvec(v)).real / np.vdot(v, v).real)

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


def _zero_padded(a: np.ndarray, n: int, axis: int) -> np.ndarray:
    """``a`` extended with zeros to length ``n`` along ``axis``."""
    extra = n - a.shape[axis]
    if extra == 0:
        return a
    shape = list(a.shape)
    shape[axis] = extra
    return np.concatenate([a, array_module(a).zeros(shape, a.dtype)], axis=axis)
