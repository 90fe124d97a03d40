"""Deterministic random tensors from an explicit seed.

Every function takes ``seed`` first: a non-negative int (fed to
``numpy.random.Generator(PCG64(seed))``) or a ``numpy.random.Generator`` (used
and advanced in place). The same int seed always gives the same values. Values
are drawn as a flat sequence and laid out in column-major order, so element
``k`` in column-major order is the ``k``-th draw.

``placement`` (default: :func:`tenferro.get_default_placement`) says where the
tensor is made. On a GPU an int seed drives CuPy's generator **on the device**
(no host round trip), so the values differ from the CPU's for the same seed
(as in PyTorch); a ``numpy.random.Generator`` seed is drawn on the host and
uploaded (its state lives on the host).

Under :func:`tenferro.jit` the function runs once, while tracing, and what it
draws becomes a constant of the compiled program. An int seed is static (keyed by
value): each seed value is traced once and gives the same numbers as an eager call
with that seed. A ``numpy.random.Generator`` seed raises :class:`tenferro.JitError`
there (its draws would be frozen, the generator never advanced): draw outside the
compiled function and pass the tensor in, or pass an int seed.

Complex dtypes: :func:`normal` draws real and imaginary parts independently
from N(0, 1/2), so the result is standard complex normal with ``E|z|^2 = 1``;
:func:`uniform` draws both parts independently from ``U[low, high)``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tidu import StagedFunction

from ._creation import out_of_memory
from ._dtypes import DTypeLike, dtype as _dtype, float64, int64
from ._errors import DTypeError, TenferroTypeError, TenferroValueError
from ._placement import CPU, Placement, device_scope, import_cupy, resolve_placement
from ._shape import as_extents
from ._tensor import Tensor

__all__ = ["normal", "uniform", "randint"]

Seed = Any  # int | numpy.random.Generator


def _generator(op: str, seed: Seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return np.random.Generator(np.random.PCG64(int(seed)))
    raise TenferroValueError(f"{op}: seed must be a non-negative int or a numpy.random.Generator, got {seed!r}")


def _layout(flat: Any, shape: tuple[int, ...]) -> Tensor:
    return Tensor._wrap(flat.reshape(shape, order="F"))


_FROZEN_DRAW_FIX = (
    "Draw the random numbers outside the compiled function and pass them as a tensor argument, "
    "or pass an int seed to tenferro.random (a Python int is static: each seed value is traced once "
    "and gives the same numbers as an eager call with that seed; a new seed traces again)"
)
"""How to draw random numbers for a compiled function: the advice of both refusals of a NumPy
generator (:func:`_refuse_frozen` here, the argument check of ``tenferro.jit``)."""


def _refuse_frozen(op: str, seed: Seed) -> None:
    """A Generator seed inside a trace (``tenferro.jit``): the draw would run once and be
    replayed by every call, the generator never advanced; refused with the trace's error."""
    staged = StagedFunction.tracing() if isinstance(seed, np.random.Generator) else None
    if staged is not None:
        raise staged.error(
            f"tenferro.random.{op} got a numpy.random.Generator seed while the function is traced: the "
            "draw would run once, its numbers would be frozen into the compiled program and every later "
            f"call would repeat them (the generator would not advance). {_FROZEN_DRAW_FIX}"
        )


def _draw(
    op: str, seed: Seed, placement: Placement | None, shape: tuple[int, ...], draw: Any, dtype: Any = None
) -> Tensor:
    _refuse_frozen(op, seed)
    try:
        return _draw_at(op, seed, placement, shape, draw)
    except MemoryError:
        raise out_of_memory(op, shape, dtype, resolve_placement(op, placement)) from None


def _draw_at(op: str, seed: Seed, placement: Placement | None, shape: tuple[int, ...], draw: Any) -> Tensor:
    """``draw(rng)``, a flat array of ``prod(shape)`` samples, laid out column-major
    on the target placement: a NumPy generator on the CPU (or for a Generator
    seed), CuPy's generator on the device for an int seed."""
    target = resolve_placement(op, placement)
    if target is CPU or isinstance(seed, np.random.Generator):
        t = _layout(draw(_generator(op, seed)), shape)
        return t if target is CPU else t.to_gpu(target.device)
    _generator(op, seed)  # validates the seed
    cupy = import_cupy(op)
    with device_scope(op, target):
        return _layout(draw(cupy.random.default_rng(int(seed))), shape)


def normal(
    seed: Seed, shape: int | tuple[int, ...], dtype: DTypeLike = float64, placement: Placement | None = None
) -> Tensor:
    """Standard normal samples (complex: real and imag parts each N(0, 1/2))."""
    ext = as_extents("normal", shape)
    d = _dtype(dtype)
    if not d.is_inexact:
        raise DTypeError(f"normal: dtype must be floating or complex, got {d.name}")
    n = math.prod(ext)
    real = d.real_dtype.numpy

    def draw(rng: Any) -> Any:
        if d.is_complex:
            parts = rng.standard_normal(2 * n, dtype=real) * real.type(math.sqrt(0.5))
            return (parts[0::2] + 1j * parts[1::2]).astype(d.numpy, copy=False)
        return rng.standard_normal(n, dtype=real)

    return _draw("normal", seed, placement, ext, draw, d)


def uniform(
    seed: Seed,
    shape: int | tuple[int, ...],
    dtype: DTypeLike = float64,
    low: float = 0.0,
    high: float = 1.0,
    placement: Placement | None = None,
) -> Tensor:
    """Uniform samples in ``[low, high)`` (complex: both parts independently)."""
    ext = as_extents("uniform", shape)
    d = _dtype(dtype)
    if not d.is_inexact:
        raise DTypeError(f"uniform: dtype must be floating or complex, got {d.name}; use randint for integers")
    for name, bound in (("low", low), ("high", high)):
        if isinstance(bound, bool) or not isinstance(bound, numbers.Real) or not math.isfinite(bound):
            raise TenferroValueError(f"uniform: {name} must be a finite real number, got {name}={bound!r}")
    if not low < high:
        raise TenferroValueError(f"uniform: expected low < high, got low={low}, high={high}")
    n = math.prod(ext)
    real = d.real_dtype.numpy
    info = np.finfo(real)
    if not math.isfinite(float(high) - float(low)) or max(abs(low), abs(high)) > float(info.max):
        raise TenferroValueError(
            f"uniform: the range [{low}, {high}) does not fit {d.name} (high - low must be finite in float64 and "
            f"both bounds at most {float(info.max):.3g} in size); every sample would be an infinity or its clamp"
        )
    count = 2 * n if d.is_complex else n
    # the largest value below high in the target precision: a float64 draw rounded to float32
    # (or low + (high - low) * r rounded in float64) can reach high itself
    top = np.nextafter(real.type(high), real.type(low))

    def draw(rng: Any) -> Any:
        parts = (low + (high - low) * rng.random(count, dtype=np.float64)).astype(real)
        parts[parts > top] = top
        return (parts[0::2] + 1j * parts[1::2]).astype(d.numpy) if d.is_complex else parts

    return _draw("uniform", seed, placement, ext, draw, d)


def randint(
    seed: Seed,
    shape: int | tuple[int, ...],
    low: int,
    high: int | None = None,
    dtype: DTypeLike = int64,
    placement: Placement | None = None,
) -> Tensor:
    """Integers in ``[low, high)``; with ``high`` omitted, in ``[0, low)``."""
    ext = as_extents("randint", shape)
    d = _dtype(dtype)
    if d.kind != "int":
        raise DTypeError(f"randint: dtype must be int32 or int64, got {d.name}")
    for name, bound in (("low", low), ("high", high)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, numbers.Integral)):
            raise TenferroTypeError(f"randint: {name} must be an integer, got {name}={bound!r}")
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if not low < high:
        raise TenferroValueError(f"randint: expected low < high, got low={low}, high={high}")
    info = np.iinfo(d.numpy)
    if low < info.min or high - 1 > info.max:
        raise TenferroValueError(f"randint: bounds [{low}, {high}) do not fit in {d.name}")

    def draw(rng: Any) -> Any:
        return rng.integers(low, high, size=math.prod(ext), dtype=d.numpy)

    return _draw("randint", seed, placement, ext, draw, d)
