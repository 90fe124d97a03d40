"""Configuration of the derivative rules of :mod:`tenferro.linalg`.

``tenferro.linalg.config`` holds three settings. Assigning to it
(``config.gauge = "raise"``) changes the process-wide default;
:func:`tenferro.linalg.settings` overrides settings temporarily **in the current
context only** (a :class:`contextvars.ContextVar`: other threads and asyncio
tasks keep their own values):

* ``broadening`` (float, default ``1e-12``): the epsilon of the Lorentzian
  broadening ``x / (x**2 + eps)`` that replaces ``1 / x`` for differences of
  eigenvalues (or differences and sums of singular values) in the derivative rules
  (Liao, Liu, Wang, Xiang, PRX 9, 031041, 2019). It is absolute, in the units of
  ``x**2``. ``0`` disables broadening (exactly degenerate pairs then still
  contribute 0, never ``inf``).
* ``gauge`` (``"warn"`` | ``"raise"`` | ``"ignore"``, default ``"warn"``): what
  reverse mode does when the cotangent shows that the loss depends on the gauge
  of singular vectors or eigenvectors (see docs/ad/gauge.md).
* ``degeneracy_rtol`` (float, default ``1e-9``): two eigenvalues (singular
  values) ``a, b`` count as degenerate for the gauge check when
  ``|a - b| <= degeneracy_rtol * max(|w|)``.

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

__all__ = ["config", "settings", "LinalgConfig"]

_GAUGE_POLICIES = ("warn", "raise", "ignore")
_DEFAULTS = {"broadening": 1e-12, "gauge": "warn", "degeneracy_rtol": 1e-9}

_global: dict[str, Any] = dict(_DEFAULTS)       # process-wide values (assignment)
_global_lock = threading.Lock()
_overrides: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "tenferro_linalg_settings", default=MappingProxyType({}))


def _validate(name: str, value: object) -> None:
    if name not in _DEFAULTS:
        raise TenferroValueError(f"tenferro.linalg.settings: unknown setting {name!r}; "
                                 f"expected one of {tuple(_DEFAULTS)}")
    if name == "gauge" and value not in _GAUGE_POLICIES:
        raise TenferroValueError(f"tenferro.linalg.config.gauge must be one of {_GAUGE_POLICIES}, got {value!r}")
    if name in ("broadening", "degeneracy_rtol") and not (
            isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0):
        raise TenferroValueError(f"tenferro.linalg.config.{name} must be a float >= 0, got {value!r}")


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
