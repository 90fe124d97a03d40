"""Configuration of the derivative rules of :mod:`tenferro.linalg`.

``tenferro.linalg.config`` holds three settings. Assigning to it
(``config.gauge = "raise"``) changes the process-wide default;
:func:`tenferro.linalg.settings` overrides settings temporarily **in the current
context only** (a :class:`contextvars.ContextVar`: other threads and asyncio
tasks keep their own values):

* ``broadening`` (``None`` | float, default ``None``): how the derivative rules
  invert differences of eigenvalues (differences and sums of singular values),
  the ``1 / d`` of the eigenvector and singular-vector terms.

  - ``None`` (default): **exact**. ``1 / d`` for every pair that the degeneracy
    threshold (``degeneracy_rtol`` below) does not call degenerate, 0 for the pairs
    it does (rounding noise of an exactly repeated value, ~1e-16 relative, would
    otherwise be divided by itself). Exact for every spectrum whose gaps exceed
    ``degeneracy_rtol * max|w|``, at every scale; inside the threshold the pair is
    treated as exactly degenerate (docs/ad/gauge.md says which losses are exact
    there, and the gauge check and :class:`DegeneracyWarning` report the others).
  - ``0``: ``1 / d`` for every pair that is not exactly equal, down to the last bit
    (no threshold). Exact for near-degenerate spectra below the threshold, but the
    rounding noise of an exactly repeated value is then amplified: invariant losses
    at exact degeneracy (projectors onto a whole degenerate eigenspace, the polar
    factor) lose their exactness.
  - ``eps > 0``: Lorentzian broadening ``d / (d**2 + eps)`` (Liao, Liu, Wang, Xiang,
    PRX 9, 031041, 2019), absolute, in the units of ``d**2``: bounded by
    ``1 / (2 sqrt(eps))``, a deliberately **biased** gradient that keeps
    optimisations near degeneracies stable. The relative error of a vector-dependent
    gradient is about ``eps / gap**2``: 1e-4 at gap 1e-4 with ``eps = 1e-12``, O(1)
    at gap 1e-6, and it depends on the spectrum's scale (``eps`` is not relative).
    Exactly equal values contribute 0, never ``inf``.
* ``gauge`` (``"warn"`` | ``"raise"`` | ``"ignore"``, default ``"warn"``): what
  reverse mode does when the cotangent shows that the loss depends on the gauge
  of singular vectors or eigenvectors (:class:`GaugeWarning` / :class:`GaugeError`),
  or on both the values and the vectors of an exactly degenerate block, where the
  gradient is not determined by the decomposition
  (:class:`DegeneracyWarning` / :class:`DegeneracyError`); see docs/ad/gauge.md.
* ``degeneracy_rtol`` (float, default ``1e-9``): two eigenvalues (singular
  values) ``a, b`` count as degenerate for the gauge check when
  ``|a - b| <= degeneracy_rtol * max(|w|)`` (per matrix of a batch; never below 64
  machine epsilons of the values' dtype, ``_spectral.effective_rtol``). The same
  threshold decides which pairs the default ``broadening=None`` treats as exactly
  degenerate and where :class:`DegeneracyWarning` looks.

All three are read when a derivative rule is **built** (the forward/JVP pass):
``with settings(gauge="raise"): _, f = vjp(...)`` makes ``f`` raise even when it
is called outside the ``with`` block.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from .._errors import TenferroValueError

__all__ = ["config", "settings", "LinalgConfig", "snapshot"]

_GAUGE_POLICIES = ("warn", "raise", "ignore")
_DEFAULTS = {"broadening": None, "gauge": "warn", "degeneracy_rtol": 1e-9}

_global: dict[str, Any] = dict(_DEFAULTS)  # process-wide values (assignment)
_global_lock = threading.Lock()
_overrides: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "tenferro_linalg_settings", default=MappingProxyType({})
)


def _validate(name: str, value: object) -> None:
    if name not in _DEFAULTS:
        raise TenferroValueError(
            f"tenferro.linalg.settings: unknown setting {name!r}; expected one of {tuple(_DEFAULTS)}"
        )
    if name == "gauge" and value not in _GAUGE_POLICIES:
        raise TenferroValueError(f"tenferro.linalg.config.gauge must be one of {_GAUGE_POLICIES}, got {value!r}")
    if name == "broadening" and value is None:
        return
    if name in ("broadening", "degeneracy_rtol") and not (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    ):
        extra = " or None (exact outside the degeneracy threshold)" if name == "broadening" else ""
        raise TenferroValueError(f"tenferro.linalg.config.{name} must be a float >= 0{extra}, got {value!r}")


class LinalgConfig:
    """The active settings: the current context's :func:`settings` overrides,
    else the process-wide values."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name not in _DEFAULTS:
            raise AttributeError(f"tenferro.linalg.config has no setting {name!r}")
        o = _overrides.get()
        return o[name] if name in o else _global[name]

    def __setattr__(self, name: str, value: object) -> None:
        _validate(name, value)
        with _global_lock:
            _global[name] = value

    def __repr__(self) -> str:
        return "LinalgConfig(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _DEFAULTS) + ")"


config = LinalgConfig()


def snapshot() -> tuple:
    """The active settings as a hashable value (part of ``tenferro.jit``'s cache key:
    derivative rules read them when they are traced)."""
    o = _overrides.get()
    return tuple(o[k] if k in o else _global[k] for k in _DEFAULTS)


@contextlib.contextmanager
def settings(**kwargs: object) -> Iterator[LinalgConfig]:
    """Temporarily override :data:`config` in the current context (thread or
    asyncio task), e.g. ``with settings(gauge="raise"): ...``."""
    for k, v in kwargs.items():
        _validate(k, v)
    token = _overrides.set(MappingProxyType({**_overrides.get(), **kwargs}))
    try:
        yield config
    finally:
        _overrides.reset(token)
