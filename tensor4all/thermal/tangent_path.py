"""The specific heat and susceptibility by forward mode through the concrete cooling
(:func:`tangent_cooling`, ``thermodynamics(..., engine="tangent")``).

:func:`~tensor4all.algorithms.tebd_tangent.tebd_jvp` runs the ordinary normalized TEBD of the
purification (block-sparse when the charge is conserved) and carries the tangent of every site along
``d/ds`` of ``s H`` (``beta d/d beta``, as the traced path) or along ``d/dh`` of ``H - h sum_i O_i``.
At each output ``<O>`` and ``d<O>`` come from one ``tidu.jvp`` of ``expectation`` at the sites ``A_i +
e dA_i`` (``e = 0``, tangent 1): the derivative of the measured value along the tangent state
``sum_i A_1 .. dA_i .. A_L``, exact (no difference is taken).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tenferro as tf
import tidu

from ..algorithms.tebd_tangent import tebd_jvp
from ..networks.mpo import MPO, expectation
from ..networks.mps import MPS
from ..operators.gates import BondHamiltonian, bonds_from_opsum
from ..structured import SymmetricTensor
from ..tools.device import stored_array

__all__ = ["tangent_cooling"]


def _leaf(x: Any) -> Any:
    return tf.asarray(np.asfortranarray(np.asarray(stored_array(x) if isinstance(x, tf.Tensor) else x)))


def _shifted(state: MPS, tangent: MPS, e: Any) -> MPS:
    """The MPS with sites ``A_i + e dA_i`` (``e`` a tidu scalar)."""
    if not state.symmetric:
        return MPS([_leaf(a) + e * _leaf(d) for a, d in zip(state.tensors, tangent.tensors)])
    sites = []
    for a, d in zip(state.tensors, tangent.tensors):
        blocks = {k: _leaf(b) + e * _leaf(d.blocks[k]) if k in d.blocks else _leaf(b) for k, b in a.blocks.items()}
        sites.append(SymmetricTensor(blocks, a.legs, a.charge))
    return MPS._symmetric(sites, state._grading)


def _measure(op: MPO) -> Callable[[MPS, MPS, float], tuple[float, float]]:
    """``(<op>, d<op>)`` along the tangent."""

    def measure(state: MPS, tangent: MPS, t: float) -> tuple[float, float]:
        value, slope = tidu.jvp(lambda e: expectation(_shifted(state, tangent, e), op), (tf.asarray(0.0),),
                                (tf.asarray(1.0),))  # fmt: skip
        return float(np.real(np.asarray(value.numpy()))), float(np.real(np.asarray(slope.numpy())))

    return measure


def tangent_cooling(
    H: MPO,
    space: Any,
    psi: MPS,
    log_states: float,
    n: int,
    dbeta: float,
    opts: dict,
    op: MPO,
    field_bonds: BondHamiltonian | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ln Z, <op>, d<op>)`` at the output betas: the derivative along ``s`` (``field_bonds`` None) or
    along ``h`` of ``H - h sum_i O_i`` (``field_bonds`` the bonds of ``sum_i O_i``)."""
    bonds = bonds_from_opsum(H.opsum, space, H.L, "thermodynamics")
    dbonds = None
    if field_bonds is not None:
        dbonds = BondHamiltonian(field_bonds.dims, [None if f is None else -np.asarray(f) for f in field_bonds.nn])
    half = 0.5 * dbeta
    times, out, history = tebd_jvp(bonds, dbonds, psi, n * half, half, order=opts["order"], max_bond=opts["max_bond"],
                                   cutoff=opts["cutoff"], every=opts["every"], measure=_measure(op),
                                   callback=opts["callback"])  # fmt: skip
    logs = np.concatenate([[0.0], np.cumsum([np.log(r.norm) for r in history])])
    steps = np.round(np.asarray(times) / half).astype(int)
    log_z = log_states + 2.0 * logs[steps]
    values = np.array([v for v, _ in out])
    slopes = np.array([d for _, d in out])
    return log_z, values, slopes
