"""Op specs for the single gradient test table (tests/tenferro/test_grad_table.py).

Each family module defines ``SPECS: list[OpSpec]``. A spec names the primitive(s)
it covers, a function of tensors built from the user-level API, and the argument
shapes to try. The table runs ``tidu.testing.check_grads`` (order 2, fwd and rev)
for every spec x shape set x dtype.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class OpSpec:
    name: str  # test id
    fn: Callable[..., Any]  # function of tensors
    shapes: Sequence[tuple[tuple[int, ...], ...]]  # argument shapes, one tuple per case
    covers: tuple[str, ...]  # primitive names exercised
    dtypes: tuple[str, ...] = ("float64", "complex128")
    order: int = 2
    domain: str = "any"  # "any" | "positive" (|x| bounded away from 0) | "unit" (|x| < 0.9)
    make_args: Callable[..., Any] | None = None  # optional custom argument builder (rng, dtype, shapes)
    rtol: float | None = None  # only with a comment explaining why
    atol: float | None = None
    modes: tuple[str, ...] = ("fwd", "rev")


def all_specs() -> list[OpSpec]:
    import importlib
    import pkgutil

    out: list[OpSpec] = []
    for m in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{m.name}")
        out.extend(getattr(mod, "SPECS", []))
    return out
