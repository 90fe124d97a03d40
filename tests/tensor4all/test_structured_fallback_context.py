"""Issue 21, the structured layer: the fallback policy is a setting of the current context (a
thread, an asyncio task), as NumPy's ``errstate`` and decimal contexts are: a block in one thread
leaves the others alone, interleaved blocks restore what they found, and
``set_fallback_policy`` is the default that blocks override. (Split from
``test_structured_safety.py``.) Each test fails on the code before the fix.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all.structured import BlockDiagonal, DensifyError, fallback_policy, get_fallback_policy, set_fallback_policy


L = t4a.linalg


def blocks():
    """A 3 x 3 block-diagonal."""
    return BlockDiagonal([tf.asarray(np.array([[2.0, 0.5], [0.5, 3.0]])), tf.asarray(np.array([[4.0]]))])


@pytest.fixture(autouse=True)
def _default_policy():
    yield
    set_fallback_policy("count")
    t4a.reset_fallback_stats()


def _run(*targets):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001  (reported to the test below)
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    if errors:
        raise errors[0]


def test_fallback_policy_in_one_thread_leaves_the_others_alone():
    b = blocks()
    inside, checked = threading.Barrier(2, timeout=10), threading.Barrier(2, timeout=10)
    seen = {}

    def a():
        with fallback_policy("error"):
            inside.wait()
            seen["a"] = get_fallback_policy()
            with pytest.raises(DensifyError):
                L.norm(b, ord=2)
            checked.wait()

    def other():
        inside.wait()
        seen["b"] = get_fallback_policy()
        L.norm(b, ord=2)  # densifies (counted), no DensifyError here
        checked.wait()

    _run(a, other)
    assert seen == {"a": "error", "b": "count"} and get_fallback_policy() == "count"


def test_interleaved_fallback_policy_blocks_restore_the_default():
    """A enters, B enters, A leaves, B leaves: with a process-global save/restore the
    policy stayed at A's after both blocks had been left."""
    b_in, a_out = threading.Event(), threading.Event()
    seen = []

    def a():
        with fallback_policy("error"):
            assert b_in.wait(10)
            seen.append(get_fallback_policy())
        a_out.set()

    def b():
        with fallback_policy("warn"):
            b_in.set()
            assert a_out.wait(10)
            seen.append(get_fallback_policy())

    _run(a, b)
    assert seen == ["error", "warn"] and get_fallback_policy() == "count"


def test_set_fallback_policy_is_the_process_default_and_blocks_override_it():
    old = set_fallback_policy("warn")
    assert old == "count"
    seen = []
    _run(lambda: seen.append(get_fallback_policy()))
    with fallback_policy("error"):
        _run(lambda: seen.append(get_fallback_policy()))  # a new thread: the process default
        seen.append(get_fallback_policy())
    assert seen == ["warn", "warn", "error"] and get_fallback_policy() == "warn"


def test_fallback_policy_is_per_asyncio_task():
    async def task(policy, inside, read):
        with fallback_policy(policy):
            await inside.wait()  # both tasks are inside their blocks
            seen = get_fallback_policy()
            await read.wait()
        return seen

    async def main():
        inside, read = asyncio.Barrier(2), asyncio.Barrier(2)
        return await asyncio.gather(task("error", inside, read), task("warn", inside, read))

    assert asyncio.run(main()) == ["error", "warn"] and get_fallback_policy() == "count"
