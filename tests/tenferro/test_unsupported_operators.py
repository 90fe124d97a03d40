"""Operators a tensor does not take (``//``, ``%``, ``~``, ``&``, ``|``) raise Python's TypeError
in every mode: eagerly, and on the traced tensors of grad, jit and vmap (those raised
AttributeError, so an ``except TypeError`` written for eager code missed them)."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu

X = tf.asarray(np.array([3.0, 4.0]))

CASES = {
    "floordiv": lambda a: a // 2,
    "rfloordiv": lambda a: 2 // a,
    "mod": lambda a: a % 2,
    "invert": lambda a: ~(a > 1),
    "and": lambda a: (a > 1) & (a > 2),
    "or": lambda a: (a > 1) | (a > 2),
}

MODES = {
    "eager": lambda f: f(X),
    "grad": lambda f: tidu.grad(lambda a: tf.sum(a * 0.0) + 0 * tf.sum(f(a)))(X),
    "jit": lambda f: tf.jit(f)(X),
    "vmap": lambda f: tidu.vmap(f)(X),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_operator_tensors_do_not_take_is_a_type_error_in_every_mode(case, mode):
    with pytest.raises(TypeError) as info:
        MODES[mode](CASES[case])
    assert not isinstance(info.value, AttributeError)
    assert "unsupported operand" in str(info.value) or "bad operand type" in str(info.value)
