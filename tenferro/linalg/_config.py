"""Configuration of the derivative rules of :mod:`tenferro.linalg`.

``tenferro.linalg.config`` holds three settings; change them globally by
assignment or temporarily with :func:`tenferro.linalg.settings`:

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
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

from .._errors import TenferroValueError

__all__ = ["config", "settings", "LinalgConfig"]

_GAUGE_POLICIES = ("warn", "raise", "ignore")


@dataclass
class LinalgConfig:
    broadening: float = 1e-12
    gauge: str = "warn"
    degeneracy_rtol: float = 1e-9

    def __setattr__(self, name: str, value: object) -> None:
        if name == "gauge" and value not in _GAUGE_POLICIES:
            raise TenferroValueError(f"tenferro.linalg.config.gauge must be one of {_GAUGE_POLICIES}, got {value!r}")
        if name in ("broadening", "degeneracy_rtol") and not (isinstance(value, (int, float)) and value >= 0):
            raise TenferroValueError(f"tenferro.linalg.config.{name} must be a float >= 0, got {value!r}")
        object.__setattr__(self, name, value)


config = LinalgConfig()


@contextlib.contextmanager
def settings(**kwargs: object) -> Iterator[LinalgConfig]:
    """Temporarily change :data:`config`, e.g. ``with settings(gauge="raise"): ...``."""
    for k in kwargs:
        if k not in LinalgConfig.__dataclass_fields__:
            raise TenferroValueError(f"tenferro.linalg.settings: unknown setting {k!r}")
    old = {k: getattr(config, k) for k in kwargs}
    try:
        for k, v in kwargs.items():
            setattr(config, k, v)
        yield config
    finally:
        for k, v in old.items():
            setattr(config, k, v)
