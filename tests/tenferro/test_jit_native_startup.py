"""What a native program's first call costs beyond its machine code (issue 55): the
workspace allocator of the lowering (random alloc/release sequences against the
invariants of a best-fit allocator: live blocks disjoint, free and live blocks tiling
the workspace, the free list sorted and coalesced); the cyclic collector paused while a
program compiles and restored after it, errors included; the machine code compiled (or
loaded) once, for the signature the calls then use. Skipped as a whole when Numba (the
``fast`` extra) is not installed."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")
pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("native_jit_cache")]

import tenferro as tf  # noqa: E402
from tenferro.jit import _native  # noqa: E402
from tenferro.jit._native_lower import _Allocator  # noqa: E402
from tidu import paused_gc  # noqa: E402

# a step: allocate a block of that size (>= 0), or release the live block of that index (< 0)
_STEPS = st.lists(st.one_of(st.integers(0, 40), st.integers(-50, -1)), max_size=120)


@settings(max_examples=150, deadline=None)
@given(_STEPS)
def test_allocator_blocks_are_disjoint_and_the_free_list_coalesced(steps):
    alloc = _Allocator()
    live: list[tuple[int, int]] = []
    for step in steps:
        if step >= 0:
            fits = [(n, o) for o, n in alloc.free if n >= step]
            expected = min(fits)[1] if fits else alloc.top  # best fit (the lowest of equals), else the top
            off = alloc.alloc(step)
            assert off == expected
            if step:
                live.append((off, step))
        elif live:
            off, size = live.pop(-step % len(live))
            alloc.release(off, size)
        blocks = sorted(live + alloc.free)
        end = 0
        for off, size in blocks:  # live and free blocks tile [0, top) exactly
            assert off == end and size > 0
            end = off + size
        assert end == alloc.top == max((o + n for o, n in live), default=0)
        assert alloc.peak >= alloc.top
        assert alloc.free == sorted(alloc.free)
        for (o1, n1), (o2, _) in zip(alloc.free, alloc.free[1:]):
            assert o1 + n1 < o2  # coalesced: no two free blocks touch


def test_allocator_takes_the_smallest_free_block_that_fits():
    alloc = _Allocator()
    blocks = [alloc.alloc(n) for n in (5, 1, 3, 1, 8, 1)]  # offsets 0, 5, 6, 9, 10, 18
    assert blocks == [0, 5, 6, 9, 10, 18]
    for i in (0, 2, 4):  # free blocks of 5, 3, 8 between live ones
        alloc.release(blocks[i], (5, 3, 8)[i // 2])
    assert alloc.alloc(3) == 6  # exact fit
    assert alloc.alloc(4) == 0  # the 5-block (not the 8-block), its rest kept free
    assert alloc.free == [(4, 1), (10, 8)]
    assert alloc.alloc(9) == 19  # nothing fits: the top
    assert alloc.peak == 28


def test_collector_paused_while_compiling_and_restored(monkeypatch):
    seen = []
    generate = _native._generate

    def spy(*args, **kwargs):  # the native backend's code generation: the collector is off there
        seen.append(gc.isenabled())
        return generate(*args, **kwargs)

    monkeypatch.setattr(_native, "_generate", spy)

    def f(x):
        return tf.sum(tf.tanh(x) * x)

    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), paused_gc():
        1 / 0
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a collector the caller disabled stays disabled
    finally:
        gc.enable()
    x = tf.asarray(np.linspace(-1.0, 1.0, 5))
    value = float(tf.jit(f, backend="native")(x).numpy())
    assert gc.isenabled()
    assert seen == [False]
    assert value == pytest.approx(float(np.sum(np.tanh(np.linspace(-1.0, 1.0, 5)) * np.linspace(-1.0, 1.0, 5))))


def test_machine_code_prepared_once_for_the_calls_signature():
    def f(x, y):
        return tf.sum(tf.tanh(x) * y + x)

    x, y = (tf.asarray(np.linspace(-1.0, 1.0, 6) + k) for k in (0.0, 0.5))
    jf = tf.jit(f, backend="native")
    for _ in range(2):
        jf(x, y)
    report = jf.lower(x, y).compile_report()
    assert len(report.regions) == 1
    modules = [m for m in _native._MODULES.values() if m.run.signatures]
    assert modules
    for module in modules:  # compiled (or loaded) before the first call, for the types it then has
        assert len(module.run.signatures) == 1
        stats = module.run.stats
        assert sum(stats.cache_hits.values()) + sum(stats.cache_misses.values()) == 1
