"""``tenferro.distributed.einsum`` on a Dask ``LocalCluster`` of two single-threaded worker
processes: the sliced, distributed value and gradient equal the unsliced local ones, every
intermediate fits the limit, and the workers' measured peaks stay near it.

The memory check: ``memory_limit`` bounds every intermediate (by the slicing); a task also
holds the inputs and output of one pairwise step and the interpreter's own allocations
(~0.5 MiB measured by ``tracemalloc`` in a fresh task), so its peak is asserted below
``4 * limit + 1 MiB``, while the same contraction unsliced in one task peaks above ``8 * limit``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import lattice_network

import tenferro as tf
import tidu

distributed = pytest.importorskip("distributed")
pytest.importorskip("cotengra")
import tenferro.distributed as td


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_value_gradient_and_memory_of_a_sliced_distributed_contraction(client):
    eq, ops = lattice_network(4, 4, 16)
    unsliced = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate
    limit = unsliced // 16
    # a first, unmeasured run warms the fresh workers: their first task imports modules and
    # fills plan caches inside the measured window (seen: peaks of 2.4-3.5 MB on the first
    # run against 1.1-1.8 MB on later ones for the same tasks), which is not the contraction's memory
    td.einsum(eq, *ops, client=client, memory_limit=limit)
    value, info = td.einsum(eq, *ops, client=client, memory_limit=limit, measure_memory=True, info=True)
    assert info.slicing.slices >= 16 and info.slicing.largest_intermediate <= limit < unsliced
    assert info.workers == 2 and info.tasks >= 2
    want = tf.einsum(eq, *ops)
    assert float(value) == pytest.approx(float(want), rel=1e-12)
    assert max(info.task_peak_bytes) <= 4 * limit + (1 << 20)
    _, whole = td.einsum(eq, *ops, client=client, tasks=1, measure_memory=True, info=True)
    assert whole.slicing.slices == 1 and max(whole.task_peak_bytes) > 8 * limit

    args = tuple(range(len(ops)))
    v, grads = tidu.value_and_grad(lambda *o: td.einsum(eq, *o, client=client, memory_limit=limit), argnums=args)(*ops)
    v0, grads0 = tidu.value_and_grad(lambda *o: tf.einsum(eq, *o), argnums=args)(*ops)
    assert float(v) == pytest.approx(float(v0), rel=1e-12)
    for g, g0 in zip(grads, grads0):
        np.testing.assert_allclose(np.asarray(g), np.asarray(g0), rtol=1e-12, atol=1e-12 * np.abs(np.asarray(g0)).max())


def test_complex_gradient_with_open_legs(client):
    eq, ops = lattice_network(3, 3, 4, "complex128", seed=5)
    eq = eq.replace("->", "->A")  # one bond left open: a vector output
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 4

    def loss(fn):
        return lambda *o: tf.real(tf.sum(fn(eq, *o) * tf.conj(fn(eq, *o))))

    dist = loss(lambda *a: td.einsum(*a, client=client, memory_limit=limit))
    grads = tidu.grad(dist, argnums=(0, 4))(*ops)
    want = tidu.grad(loss(tf.einsum), argnums=(0, 4))(*ops)
    for g, g0 in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(g0), rtol=1e-11, atol=1e-12)


def test_the_result_does_not_depend_on_scheduling(client):
    eq, ops = lattice_network(3, 4, 6, seed=7)
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 8
    runs = {float(td.einsum(eq, *ops, client=client, memory_limit=limit)) for _ in range(3)}
    assert len(runs) == 1  # fixed groups and a fixed summation tree: bit for bit


def test_errors_name_the_problem(client, monkeypatch):
    eq, ops = lattice_network(2, 2, 2)
    with pytest.raises(tf.TenferroTypeError, match="must be a dask.distributed.Client"):
        td.einsum(eq, *ops, client="tcp://nowhere")
    with pytest.raises(tf.TenferroValueError, match="tasks must be a positive integer"):
        td.einsum(eq, *ops, client=client, tasks=0)
    with pytest.raises(tf.TenferroValueError, match="memory_limit must be a positive integer"):
        td.einsum(eq, *ops, client=client, memory_limit=-1)
    monkeypatch.setattr(td.dask_distributed, "get_client", lambda: (_ for _ in ()).throw(ValueError("none")))
    with pytest.raises(tf.TenferroValueError, match="no Dask client is running"):
        td.einsum(eq, *ops)
    monkeypatch.setattr(td, "dask_distributed", None)
    with pytest.raises(tf.OptionalDependencyError, match="'distributed' extra"):
        td.einsum(eq, *ops, client=client)


def test_a_closed_client_is_refused_before_any_work():
    eq, ops = lattice_network(2, 2, 2)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as c:
        want = float(td.einsum(eq, *ops, client=c, tasks=np.int64(2), memory_limit=np.int64(1 << 20)))
    assert want == pytest.approx(float(tf.einsum(eq, *ops)), rel=1e-12)
    assert c.status == "closed"
    with pytest.raises(td.DaskClientError, match="the Dask client is closed.*pass an open distributed.Client") as info:
        td.einsum(eq, *ops, client=c)
    assert isinstance(info.value, ConnectionError) and isinstance(info.value, tf.TenferroError)
    with pytest.raises(tf.TenferroValueError, match="tasks must be a positive integer, got 2.5"):
        td.einsum(eq, *ops, client=c, tasks=2.5)  # arguments are checked before the client
