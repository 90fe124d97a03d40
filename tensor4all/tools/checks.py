"""Small helpers shared by the network modules: traced-value tests, conversions
between tenferro tensors and raw NumPy arrays, and the validation of every kind of
parameter (sizes, seeds, tolerances and cutoffs, flags, callbacks, couplings, paths),
each raising a typed error that names the parameter."""

from __future__ import annotations

import cmath
import math
import numbers
import os
import warnings
from typing import Any, Callable

import numpy as np

import tenferro as tf
from tenferro.checks import fmt_bytes, physical_memory
import tidu

from .errors import (
    BondDimensionError,
    InvalidOptionError,
    NonFiniteError,
    NotDifferentiableError,
    SiteOutOfRangeError,
    Tensor4allMemoryError,
    Tensor4allTypeError,
    ValueRangeError,
)

__all__ = [
    "is_traced",
    "any_traced",
    "to_numpy",
    "check_index",
    "numeric_array",
    "as_tensor",
    "np_dtype",
    "check_positive_int",
    "check_int",
    "is_scalar_number",
    "check_real",
    "check_time_grid",
    "MAX_GRID_STEPS",
    "check_steps",
    "check_cutoff",
    "check_bool",
    "check_callable",
    "check_seed",
    "check_coupling",
    "check_path",
    "concrete",
    "first_nonfinite",
    "check_finite_arrays",
    "exponent",
    "ldexp",
    "float_dtype",
    "check_alloc",
]


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a value being transformed by tidu (a tracer)."""
    return isinstance(x, tidu.Tracer)


def any_traced(xs: Any) -> bool:
    return any(isinstance(x, tidu.Tracer) for x in xs)


def to_numpy(x: Any, what: str) -> np.ndarray:
    """``x`` as a NumPy array; a tracer raises :class:`NotDifferentiableError` naming ``what``."""
    if isinstance(x, tidu.Tracer):
        raise NotDifferentiableError(
            f"{what} works on concrete values and is not differentiable; it was given a traced "
            "value (call it outside tidu.grad/jvp, or use a differentiable function instead)"
        )
    return np.asarray(x)


def numeric_array(x: Any, what: str) -> np.ndarray:
    """``x`` as a float or complex NumPy array (integers become float64); a traced value raises
    :class:`NotDifferentiableError`, anything else :class:`Tensor4allTypeError`, naming ``what``."""
    try:
        a = to_numpy(x, what)
    except NotDifferentiableError:
        raise
    except (TypeError, ValueError) as e:
        raise Tensor4allTypeError(f"{what} is not an array ({e})") from None
    if a.dtype.kind in "iu":
        return a.astype(np.float64)
    if a.dtype.kind not in "fc":
        raise Tensor4allTypeError(f"{what} must hold numbers, got {type(x).__name__} {x!r}")
    return a


def as_tensor(x: Any) -> Any:
    """A tenferro tensor (tracers and tensors pass through unchanged)."""
    if isinstance(x, (tf.Tensor, tidu.Tracer)):
        return x
    return tf.asarray(np.asarray(x))


def np_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a tenferro DType, a NumPy dtype or a name."""
    if isinstance(dtype, tf.DType):
        return np.dtype(dtype.numpy)
    return np.dtype(dtype)


_FLOAT_DTYPES = ("float32", "float64", "complex64", "complex128")


def float_dtype(dtype: Any, what: str) -> np.dtype:
    """``dtype`` as a NumPy floating or complex dtype, else :class:`InvalidOptionError`."""
    try:
        dt = np_dtype(dtype)
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt.name not in _FLOAT_DTYPES:
        raise InvalidOptionError(f"{what} must be one of {', '.join(_FLOAT_DTYPES)}, got {dtype!r}")
    return dt


def check_positive_int(value: Any, what: str, error: type[Exception] = BondDimensionError) -> int:
    """``value`` as an ``int`` >= 1: a value that is no integer (a float, a string, a bool) raises
    :class:`Tensor4allTypeError`, one below 1 ``error``, each naming ``what`` (:class:`BondDimensionError`
    for the sizes it is named after, a bond dimension or a number of sites; :class:`InvalidOptionError`
    for counts that are options, such as sweeps)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Tensor4allTypeError(f"{what} must be a positive integer, got {type(value).__name__} {value!r}")
    if value < 1:
        raise error(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def check_int(value: Any, what: str, low: int, error: type[Exception] = InvalidOptionError) -> int:
    """``value`` as an ``int`` >= ``low``: a value that is no integer (a float, a string, a bool) raises
    :class:`Tensor4allTypeError`, one below ``low`` ``error``, each naming ``what`` (as
    :func:`check_positive_int`, for counts whose least value is not 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Tensor4allTypeError(f"{what} must be an integer >= {low}, got {type(value).__name__} {value!r}")
    if value < low:
        raise error(f"{what} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_index(value: Any, count: int, what: str, noun: str = "site") -> int:
    """``value`` as an ``int`` in ``0..count-1`` (a site or a bond of a chain): a value that is
    not an integer (a float, a bool, a list) raises :class:`Tensor4allTypeError`, one outside the
    range :class:`SiteOutOfRangeError`, each naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Tensor4allTypeError(f"{what} must be an integer {noun}, got {type(value).__name__} {value!r}")
    if not 0 <= value < count:
        raise SiteOutOfRangeError(f"{what} {int(value)} is outside 0..{count - 1}")
    return int(value)


def is_scalar_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0) or isinstance(x, np.generic)


# ---- numeric options ------------------------------------------------------------------
def check_real(
    value: Any, what: str, *, low: float | None = None, high: float | None = None, high_open: bool = False
) -> float:
    """``value`` as a finite ``float`` in ``[low, high]`` (``[low, high)`` with ``high_open``).

    Not a real number (a string, ``None``, a bool, a complex number):
    :class:`Tensor4allTypeError`; NaN, infinity or out of range: :class:`InvalidOptionError`.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise Tensor4allTypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise InvalidOptionError(f"{what} must be a finite number, got {value!r}")
    if low is not None and x < low:
        raise InvalidOptionError(f"{what} must be >= {low:g}, got {value!r}")
    if high is not None and (x >= high if high_open else x > high):
        raise InvalidOptionError(f"{what} must be {'<' if high_open else '<='} {high:g}, got {value!r}")
    return x


#: the most steps of a time (or inverse-temperature) grid: more is a step too small to reach the end
MAX_GRID_STEPS = 10**7


def check_steps(t: float, dt: float, what: str, t_name: str = "t_final", dt_name: str = "dt") -> float:
    """``t / dt`` (``t >= 0`` and ``dt > 0`` finite floats, checked by the caller) when it is at most
    :data:`MAX_GRID_STEPS` steps (up to rounding), else :class:`InvalidOptionError` in the words of
    tebd's and tdvp's check ("dt = ... is too small for t = ...: t / dt = ... steps"); a subnormal ``dt``
    (``t / dt = inf``) is one of them. The ratio is printed as a float, never as a huge integer."""
    ratio = t / dt
    if not ratio <= MAX_GRID_STEPS + 0.5:  # every larger ratio rounds to more than MAX_GRID_STEPS steps
        raise InvalidOptionError(
            f"{what}: {dt_name} = {dt!r} is too small for {t_name} = {t!r}: {t_name} / {dt_name} = {ratio:.3g} "
            f"steps; give a larger {dt_name} (at most {MAX_GRID_STEPS:.0e} steps)"
        )
    return ratio


def check_time_grid(t_final: Any, dt: Any, what: str) -> tuple[float, float, int]:
    """``(t_final, dt, steps)`` of a time grid ``0, dt, ..., t_final``: ``t_final >= 0`` and ``dt > 0``
    real numbers, ``t_final`` a whole number of steps (to 1e-9 relative) and at most
    :data:`MAX_GRID_STEPS` of them (:func:`check_steps`), else :class:`InvalidOptionError` naming ``what``."""
    t_final = check_real(t_final, f"{what}: t_final", low=0.0)
    dt = check_real(dt, f"{what}: dt", low=0.0)
    if dt <= 0:
        raise InvalidOptionError(f"{what}: dt must be positive, got {dt}")
    steps = round(check_steps(t_final, dt, what))
    if abs(steps * dt - t_final) > 1e-9 * max(1.0, t_final):
        raise InvalidOptionError(f"{what}: t_final / dt must be a whole number, got {t_final} / {dt}")
    return t_final, dt, steps


def check_cutoff(value: Any, what: str = "cutoff") -> float:
    """A truncation cutoff: a relative discarded weight in ``[0, 1)``."""
    return check_real(value, f"{what} (a relative discarded weight in [0, 1))", low=0.0, high=1.0, high_open=True)


def check_rtol(rtol: Any, cutoff: Any, what: str) -> float:
    """A rank threshold relative to the largest value, in ``[0, 1)``: ``rtol``, or the older
    keyword ``cutoff`` (a :class:`DeprecationWarning`: across the project ``cutoff`` is the
    discarded weight, so a threshold on sizes is called ``rtol``, as in NumPy's ``matrix_rank``)."""
    if cutoff is not None:
        warnings.warn(
            f"{what}: cutoff= here was a threshold relative to the largest pivot; it is now called rtol= "
            "(cutoff means the discarded weight across tensor4all)",
            DeprecationWarning,
            stacklevel=3,
        )
        rtol = cutoff
    return check_real(
        rtol, f"{what}: rtol (a threshold relative to the largest, in [0, 1))", low=0.0, high=1.0, high_open=True
    )


def check_bool(value: Any, what: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (a NumPy bool too); ``"False"``, ``0`` or
    ``None`` raise :class:`Tensor4allTypeError` (``bool("False")`` is true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise Tensor4allTypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_callable(value: Any, what: str) -> Callable | None:
    """``value`` if it is callable or ``None``, else :class:`Tensor4allTypeError`."""
    if value is not None and not callable(value):
        raise Tensor4allTypeError(f"{what} must be a callable or None, got {type(value).__name__} {value!r}")
    return value


def check_seed(value: Any, what: str = "seed") -> int | None:
    """A random seed: a non-negative integer, or ``None`` (fresh entropy from the OS)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Tensor4allTypeError(
            f"{what} must be a non-negative integer or None, got {type(value).__name__} {value!r}"
        )
    if value < 0:
        raise InvalidOptionError(f"{what} must be a non-negative integer or None, got {value}")
    return int(value)


# ---- couplings and concrete values ------------------------------------------------------
def concrete(x: Any) -> Any:
    """The concrete value of ``x`` as a tenferro tensor (a JVP tracer's primal), or
    ``None`` where there is none (an abstract value under ``tenferro.jit``)."""
    if isinstance(x, tidu.Tracer):
        x = tidu.stop_gradient(x)
    return x if isinstance(x, tf.Tensor) else None


def _all_finite(t: Any) -> bool:
    """Whether the tenferro tensor ``t`` holds no NaN or infinity: on the host through its NumPy
    view (one call, not two tenferro operations: the setup of a sweep checks every block), on a
    device by tenferro's reduction there."""
    if not t.size:
        return True
    if tf.placement_of(t) == tf.CPU:
        return bool(np.isfinite(np.asarray(t)).all())
    return bool(tf.amin(tf.isfinite(t)))


def check_coupling(value: Any, what: str) -> Any:
    """``value`` unchanged if it is a finite scalar: a Python/NumPy number (complex too),
    a 0-d array or tenferro tensor, or a tidu tracer (whose concrete value is checked
    when it has one). Booleans, strings, ``None`` and arrays raise
    :class:`Tensor4allTypeError`; NaN and infinity :class:`NonFiniteError`."""
    kind = type(value).__name__
    if isinstance(value, (tf.Tensor, tidu.Tracer)):
        aval = tidu.aval_of(value)
        if tuple(aval.shape) != () or aval.dtype.kind == "bool":
            raise Tensor4allTypeError(
                f"{what} must be a scalar number, got a {kind} of shape {tuple(aval.shape)} and dtype {aval.dtype}"
            )
        c = concrete(value)
        if c is not None and not _all_finite(c):
            raise NonFiniteError(f"{what} must be finite, got {np.asarray(c).item()!r}")
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Number):
        raise Tensor4allTypeError(
            f"{what} must be a number (or a tenferro scalar or tidu tracer), got {kind} {value!r}"
        )
    try:
        as_complex = complex(value)
    except OverflowError:  # an int or Fraction past the float range
        raise ValueRangeError(
            f"{what} must fit a float64 (|value| < 1.8e308), got {kind} {_decimal_exponent(value)}"
        ) from None
    if not cmath.isfinite(as_complex):
        raise NonFiniteError(f"{what} must be finite, got {value!r}")
    return value


def _decimal_exponent(value: numbers.Number) -> str:
    """``"of about 10^k"`` for a rational number too large for a float (an int or a Fraction), without
    printing its digits; ``""`` for another kind."""
    if isinstance(value, numbers.Rational) and value.numerator:
        return f"of about 10^{int(math.log10(abs(value.numerator)) - math.log10(value.denominator))}"
    return ""


def first_nonfinite(tensors: Any) -> int | None:
    """The index of the first tensor holding NaN or infinity (tracers: their concrete value;
    abstract values are skipped), or ``None``."""
    for i, t in enumerate(tensors):
        c = concrete(t) if not isinstance(t, np.ndarray) else t
        if c is None:
            continue
        if isinstance(c, np.ndarray):
            if c.dtype.kind in "fc" and not np.isfinite(c).all():
                return i
        elif not _all_finite(c):
            return i
    return None


def check_finite_arrays(tensors: Any, what: str) -> None:
    """:class:`NonFiniteError` naming the site if a site tensor holds NaN or infinity."""
    bad = first_nonfinite(tensors)
    if bad is not None:
        raise NonFiniteError(f"{what}: site tensor {bad} holds NaN or infinity")


def exponent(a: np.ndarray) -> int:
    """``e`` with ``max|a|`` in ``[2**(e-1), 2**e)`` (0 for an all-zero array): dividing by
    ``2**e`` (exact) brings the entries into ``[-1, 1]``."""
    m = float(np.max(np.abs(a))) if a.size else 0.0
    return math.frexp(m)[1] if m > 0.0 and math.isfinite(m) else 0


def ldexp(a: Any, e: int) -> Any:
    """``a * 2**e`` for real or complex arrays and scalars, exact unless it over- or underflows."""
    if e == 0:
        return a
    a = np.asarray(a)
    with np.errstate(over="ignore", under="ignore"):
        if np.iscomplexobj(a):
            return np.ldexp(a.real, e) + 1j * np.ldexp(a.imag, e)
        return np.ldexp(a, e)


# ---- memory -------------------------------------------------------------------------------
def check_alloc(nbytes: int, what: str) -> None:
    """:class:`Tensor4allMemoryError` naming the bytes if ``what`` needs more than the
    machine's physical memory (an allocation that size would fail or be killed)."""
    total = physical_memory()
    if total is not None and nbytes > total:
        raise Tensor4allMemoryError(
            f"{what} needs {fmt_bytes(nbytes)}, more than this machine's memory ({fmt_bytes(total)})"
        )


# ---- file paths --------------------------------------------------------------------------
def check_path(path: Any, what: str) -> str:
    """A file path (``str``, ``bytes`` or ``os.PathLike``) as a ``str``; anything else
    raises :class:`Tensor4allTypeError`."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise Tensor4allTypeError(f"{what}: a path must be a str or os.PathLike, got {type(path).__name__} {path!r}")
    try:
        p = os.fsdecode(os.fspath(path))
    except TypeError as e:  # a PathLike whose __fspath__ returns something else
        raise Tensor4allTypeError(f"{what}: {path!r} is not a valid path ({e})") from None
    return p
