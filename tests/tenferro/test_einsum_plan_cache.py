"""The plan cache of tenferro.einsum: a hit does no parsing or path search, the cache is
bounded and shared by equivalent equations, derived einsums use it, and it stays
consistent when another thread evicts an entry or many threads use it at once. The
plan-cache tests are about eager calls and run once."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu
from test_einsum import _rand


# ---------------------------------------------------------------------------
# the plan cache
# ---------------------------------------------------------------------------
def test_cache_hit_does_no_parsing_or_path_search(monkeypatch):
    import opt_einsum

    from tenferro.einsum import _api

    tf.einsum_cache_clear()
    ops = [tf.asarray(_rand((2, 3))), tf.asarray(_rand((3,))), tf.asarray(_rand((3, 4)))]
    first = tf.einsum("ik,k,kj->ij", *ops)
    info = tf.einsum_cache_info()
    assert (info.hits, info.misses, info.size) == (0, 1, 1)

    def boom(*a, **k):
        raise AssertionError("path search on a cached call")

    monkeypatch.setattr(opt_einsum, "contract_path", boom)
    monkeypatch.setattr(_api, "parse_subscripts", boom)
    monkeypatch.setattr(_api, "canonicalize", boom)
    second = tf.einsum("ik,k,kj->ij", *ops)
    info = tf.einsum_cache_info()
    assert (info.hits, info.misses) == (1, 1)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    # a new shape is a miss (and would search a path)
    with pytest.raises(AssertionError, match="path search"):
        tf.einsum("ik,k,kj->ij", tf.asarray(_rand((5, 3))), ops[1], ops[2])


def test_cache_is_bounded_and_shared_by_equivalent_equations():
    tf.einsum_cache_clear(maxsize=4)
    try:
        for n in range(1, 8):
            tf.einsum("ij->i", tf.ones((n, 2)))
        info = tf.einsum_cache_info()
        assert info.size == 4 and info.maxsize == 4 and info.misses == 7
        tf.einsum_cache_clear(maxsize=512)
        a = tf.ones((2, 3))
        tf.einsum("ij,jk->ik", a, tf.ones((3, 2)))
        tf.einsum("ab,bc->ac", a, tf.ones((3, 2)))
        assert tf.einsum_cache_info().plans.hits == 1  # same canonical spec, one plan
    finally:
        tf.einsum_cache_clear(maxsize=512)


def test_derived_einsums_use_the_plan_cache():
    tf.einsum_cache_clear()
    a, b = tf.asarray(_rand((2, 3))), tf.asarray(_rand((3, 4)))

    def loss(a, b):
        return tf.einsum("ij,jk->", a, b)

    tidu.grad(loss, argnums=(0, 1))(a, b)
    before = tf.einsum_cache_info().plans
    tidu.grad(loss, argnums=(0, 1))(a, b)
    after = tf.einsum_cache_info().plans
    assert after.misses == before.misses and after.hits > before.hits


# --- review fixes -------------------------------------------------------------------
def test_plan_cache_get_survives_an_eviction_between_lookup_and_refresh():
    """Another thread may evict a key between ``get``'s lookup and its ``move_to_end``
    (that raised KeyError). Simulated deterministically: the lookup itself evicts."""
    from collections import OrderedDict

    from tenferro.einsum._cache import LRUCache

    class EvictingDict(OrderedDict):
        def get(self, key, default=None):
            v = super().get(key, default)
            self.pop(key, None)  # "another thread" evicts it right after the lookup
            return v

    cache = LRUCache(4)
    cache.put("k", "plan")
    cache.data = EvictingDict(cache.data)
    assert cache.get("k") == "plan"
    assert cache.get("k") is None


def test_plan_cache_is_consistent_under_threads():
    import threading

    from tenferro.einsum._cache import LRUCache

    cache = LRUCache(4)
    errors = []

    def hammer(seed):
        try:
            for i in range(5000):
                k = (seed * 7 + i) % 11
                if cache.get(k) is None:
                    cache.put(k, i + 1)
        except Exception as e:  # noqa: BLE001  (any exception is the failure)
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]
    assert len(cache.data) <= 4
