"""Gradient checking for any registered value type.

* :func:`check_jvp`: the JVP against central finite differences in a random direction.
* :func:`check_vjp`: the dot-product test ``<J u, v> = <u, J* v>`` with ``J u`` from
  finite differences (autograd/JAX style); it catches transposition bugs that
  value checks miss.
* :func:`check_grads`: both, recursively to the requested order (the JVP and VJP
  maps are themselves checked as functions).
* :func:`check_vmap`: :func:`tidu.vmap` against a Python loop over the examples.

Complex values are handled through the real inner product ``Re <a, b>``: the
adjoint of the VJP is ``conj(vjp(conj(v)))`` under tidu's (JAX's) convention.
Hypothesis strategies live in :mod:`tidu.testing.strategies`.
"""

from ._check import check_grads, check_jvp, check_vjp, GradientCheckError, numerical_jvp
from ._vmap_check import VmapCheckError, check_vmap, take_example

__all__ = [
    "check_grads",
    "check_jvp",
    "check_vjp",
    "numerical_jvp",
    "GradientCheckError",
    "check_vmap",
    "VmapCheckError",
    "take_example",
]
