"""``tenferro.distributed``: one einsum spread over a Dask cluster by slicing.

:func:`einsum` slices the contraction (:func:`tenferro.einsum_slicing`: cotengra's slice
finder, only summed labels, every intermediate within ``memory_limit``), groups the slices
into a fixed number of tasks, runs each group on a Dask worker (``Client.submit``; the
operands are scattered to every worker once) and sums the partial results by a pairwise
tree of Dask tasks. The grouping and the tree are fixed before anything runs, so the
result does not depend on which worker finishes first.

``tidu.grad``/``value_and_grad`` of a distributed contraction works: the contraction is a
:class:`tidu.custom_vjp` function whose backward pass runs each group's VJP on a worker
(``tidu.vjp`` of the same sliced contraction, one slice's intermediates at a time) and sums
the operands' cotangents by the same tree. Higher derivatives are not provided.

Dask is optional (the ``distributed`` extra); without it :func:`einsum` raises
:class:`~tenferro.OptionalDependencyError`. The project never schedules by itself: Dask does.
The workers compute on the CPU: operands on a GPU are copied to the host, and the result
(and gradients) come back to the first operand's placement.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

import numpy as np

import tidu

from ._errors import OptionalDependencyError, TenferroError, TenferroTypeError, TenferroValueError
from ._creation import asarray
from ._tensor import Tensor
from .einsum import SlicedContraction, einsum as local_einsum, einsum_slicing
from .einsum._api import call_operands, interleaved_call
from .einsum._slicing import check_positive_int

try:  # optional dependency: the 'distributed' extra
    import distributed as dask_distributed
except ImportError:  # pragma: no cover - exercised by the missing-extra test with a patched module
    dask_distributed = None

__all__ = ["einsum", "DistributedInfo", "DaskClientError"]


class DaskClientError(TenferroError, ConnectionError):
    """The Dask client given to :func:`einsum` is closed (or closing): it can run nothing; the
    message says to pass an open ``distributed.Client`` or none."""


@dataclass(frozen=True)
class DistributedInfo:
    """What a distributed contraction did: the slicing, the number of Dask ``tasks`` and
    ``workers``, the peak bytes each task allocated (``task_peak_bytes``; measured with
    ``tracemalloc`` when ``measure_memory=True``, else empty) and the wall ``seconds``."""

    slicing: SlicedContraction
    tasks: int
    workers: int
    task_peak_bytes: tuple[int, ...]
    seconds: float


def _client(client: Any, op: str) -> Any:
    if dask_distributed is None:
        raise OptionalDependencyError(
            f"{op}: Dask is not installed; install the 'distributed' extra (pip install 'tidu-tenferro[distributed]')"
        )
    if client is None:
        try:
            client = dask_distributed.get_client()
        except ValueError:
            raise TenferroValueError(
                f"{op}: no Dask client is running; pass client=Client(...) (for example "
                "distributed.Client(n_workers=2, threads_per_worker=1))"
            ) from None
    elif not isinstance(client, dask_distributed.Client):
        raise TenferroTypeError(f"{op}: client must be a dask.distributed.Client, got {type(client).__name__}")
    status = getattr(client, "status", None)
    if status in ("closing", "closed"):
        raise DaskClientError(
            f"{op}: the Dask client is {status} (client.close() was called or its 'with' block "
            "ended), so it can run nothing; pass an open distributed.Client, or client=None to use "
            "the current one"
        )
    return client


def einsum(
    *operands: Any,
    client: Any = None,
    memory_limit: int | None = None,
    optimize: Any = "auto",
    tasks: int | None = None,
    measure_memory: bool = False,
    info: bool = False,
) -> Any:
    """``tenferro.einsum(*operands)`` computed on the Dask cluster of ``client`` (default: the
    current client) as slices whose intermediates fit in ``memory_limit`` bytes.

    ``tasks``: how many Dask tasks share the slices (default: twice the cluster's threads,
    at most one per slice); at least that many slices are made even without a memory limit.
    ``measure_memory``: record each task's peak allocation (``tracemalloc``). With
    ``info=True`` returns ``(result, DistributedInfo)``.
    """
    op = "tenferro.distributed.einsum"
    if tasks is not None:
        tasks = check_positive_int(tasks, op, "tasks")
    if not isinstance(measure_memory, bool) or not isinstance(info, bool):
        raise TenferroTypeError(f"{op}: measure_memory and info must be True or False")
    client = _client(client, op)
    workers = client.scheduler_info()["workers"]
    threads = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
    if tasks is None:
        tasks = 2 * threads
    if not operands:
        raise TenferroValueError(f"{op}: expected subscripts and operands")
    subscripts, ops = call_operands(operands, op)
    args = (subscripts, *ops) if isinstance(subscripts, str) else interleaved_call(operands, ops)
    limit = memory_limit if memory_limit is not None else 1 << 62
    sc = einsum_slicing(*args, memory_limit=limit, optimize=optimize, min_slices=tasks)
    keys = list(sc.keys())
    n = min(tasks, len(keys))
    groups = [keys[len(keys) * k // n : len(keys) * (k + 1) // n] for k in range(n)]
    t0 = time.perf_counter()
    run = _Run(client, sc, groups, measure_memory)
    out = _contract(run)(*ops)
    if not info:
        return out
    return out, DistributedInfo(sc, n, len(workers), tuple(run.peaks), time.perf_counter() - t0)


class _Run:
    """One distributed call: the client, the slicing, the slice groups and the measured peaks."""

    def __init__(self, client: Any, sc: SlicedContraction, groups: list, measure: bool):
        self.client, self.sc, self.groups, self.measure = client, sc, groups, measure
        self.peaks: list[int] = []

    def tree_sum(self, futures: list) -> Any:
        """Pairwise sums of futures, in a fixed order, as Dask tasks; the gathered total."""
        while len(futures) > 1:
            nxt = [self.client.submit(_add, a, b, pure=False) for a, b in zip(futures[0::2], futures[1::2])]
            if len(futures) % 2:
                nxt.append(futures[-1])
            futures = nxt
        return futures[0].result()

    def scatter(self, value: Any) -> Any:
        """One future for ``value`` on every worker (a list of operands as ONE Dask key: a
        circuit's hundreds of small operands scattered one key each cost the scheduler more
        than the contraction)."""
        return self.client.scatter(_Packed(value), broadcast=True, hash=False)

    def forward(self, arrays: list[np.ndarray]) -> np.ndarray:
        data = self.scatter(arrays)
        futs = [self.client.submit(_forward_task, self.sc, data, g, self.measure, pure=False) for g in self.groups]
        self._peaks(futs)
        return self.tree_sum([self.client.submit(_first, f, pure=False) for f in futs])

    def backward(self, arrays: list[np.ndarray], cotangent: np.ndarray) -> list[np.ndarray]:
        data = self.scatter(arrays)
        ct = self.scatter(cotangent)
        futs = [self.client.submit(_backward_task, self.sc, data, ct, g, self.measure, pure=False) for g in self.groups]
        self._peaks(futs)
        return self.tree_sum([self.client.submit(_first, f, pure=False) for f in futs])

    def _peaks(self, futs: list) -> None:
        if self.measure:
            self.peaks = [
                int(p) for p in self.client.gather([self.client.submit(_second, f, pure=False) for f in futs])
            ]


def _contract(run: _Run) -> tidu.custom_vjp:
    """The distributed contraction of ``run`` as a function of the operands with a custom VJP."""

    @tidu.custom_vjp
    def contraction(*ops: Any) -> Any:
        return asarray(run.forward([_numpy(x) for x in ops]), placement=ops[0].placement)

    def fwd(*ops: Any) -> tuple:
        return contraction.fun(*ops), list(ops)

    def bwd(ops: list, g: Any) -> tuple:
        cts = run.backward([_numpy(x) for x in ops], _numpy(g))
        return tuple(asarray(c, placement=x.placement) for c, x in zip(cts, ops))

    contraction.defvjp(fwd, bwd)
    return contraction


# ---- worker side (top-level functions: pickled by reference) ----------------------------
class _Packed:
    """A value Dask moves as one opaque object (it splits lists into one key per element)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _forward_task(sc: SlicedContraction, arrays: _Packed, keys: list, measure: bool) -> tuple[np.ndarray, int]:
    if measure:
        tracemalloc.start()
    try:
        ops = [Tensor._wrap(a) for a in arrays.value]
        out = _numpy(sc.contract_keys(local_einsum, ops, keys))
        peak = tracemalloc.get_traced_memory()[1] if measure else 0
    finally:
        if measure:
            tracemalloc.stop()
    return out, peak


def _backward_task(
    sc: SlicedContraction, arrays: _Packed, cotangent: _Packed, keys: list, measure: bool
) -> tuple[list, int]:
    if measure:
        tracemalloc.start()
    try:
        ops = [Tensor._wrap(a) for a in arrays.value]
        _, vjp = tidu.vjp(lambda *o: sc.contract_keys(local_einsum, o, keys), *ops)
        cts = [_numpy(c) for c in vjp(Tensor._wrap(cotangent.value))]
        peak = tracemalloc.get_traced_memory()[1] if measure else 0
    finally:
        if measure:
            tracemalloc.stop()
    return cts, peak


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, list):
        return [x + y for x, y in zip(a, b)]
    return a + b


def _first(pair: tuple) -> Any:
    return pair[0]


def _second(pair: tuple) -> Any:
    return pair[1]


def _numpy(x: Any) -> np.ndarray:
    """Host values (a copy from a device: the workers compute on the CPU)."""
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)
