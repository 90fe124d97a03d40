"""Keyword arguments that users bring from other codes: a call with an unknown keyword names the
project's keyword it meant (``dmrg(chi=64)`` -> ``max_bond``), from a table of the names the peers
use (ITensor's ``maxdim`` and ``nsweeps``, TeNPy's ``chi_max`` and ``svd_min``, quimb's
``bond_dims`` and ``cutoffs``) or the closest spelling, instead of Python's bare ``TypeError``.

:func:`keyword_hints` decorates a public function (a dictionary lookup per keyword of a call);
:func:`renamed_keywords` keeps a renamed keyword working for one release with a ``FutureWarning``.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

from .errors import Tensor4allTypeError

__all__ = ["PEER_NAMES", "keyword_hints", "renamed_keywords", "UnknownKeywordError"]

F = TypeVar("F", bound=Callable[..., Any])

#: the names other codes give our keywords (the project's name, and where the other comes from)
PEER_NAMES: dict[str, tuple[str, str]] = {
    "chi": ("max_bond", "TeNPy's and the papers' chi"),
    "chi_max": ("max_bond", "TeNPy's chi_max"),
    "maxdim": ("max_bond", "ITensor's maxdim"),
    "max_bond_dim": ("max_bond", "a common spelling"),
    "bond_dims": ("max_bond", "quimb's bond_dims"),
    "D": ("max_bond", "the papers' D"),
    "nsweeps": ("sweeps", "ITensor's nsweeps"),
    "max_sweeps": ("sweeps", "TeNPy's max_sweeps"),
    "n_sweeps": ("sweeps", "a common spelling"),
    "svd_min": ("cutoff", "TeNPy's svd_min"),
    "trunc_cut": ("cutoff", "TeNPy's trunc_cut"),
    "cutoffs": ("cutoff", "quimb's cutoffs"),
    "tau": ("dt", "a common name of the time step"),
    "delta_t": ("dt", "a common name of the time step"),
    "tmax": ("t_final", "the final time is t_final (CLI: --t-final)"),
    "t_max": ("t_final", "the final time is t_final (CLI: --t-final)"),
    "T": ("t_final", "the final time is t_final (CLI: --t-final)"),
    "maxiter": ("max_iter", "SciPy's maxiter"),
    "verbose": ("progress", "progress bars and callbacks"),
}


class UnknownKeywordError(Tensor4allTypeError):
    """A keyword argument the function does not take; the message names the one it meant."""


def _hint(name: str, params: list[str]) -> str:
    peer = PEER_NAMES.get(name)
    if peer is not None and peer[0] in params:
        return f"; did you mean {peer[0]}= ({peer[1]} is {peer[0]} here)?"
    close = difflib.get_close_matches(name, params, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}=?" if close else ""


def keyword_hints(fn: F) -> F:
    """``fn`` raising :class:`UnknownKeywordError` (a ``TypeError``) that names the meant keyword
    when it is called with one it does not take; other calls go straight through."""
    sig = inspect.signature(fn)
    params = [p.name for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    accepted = set(params) | set(getattr(fn, "_renamed", {}))  # and the old names renamed_keywords takes
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    name = fn.__qualname__

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not takes_any:
            unknown = [k for k in kwargs if k not in accepted]
            if unknown:
                k = unknown[0]
                raise UnknownKeywordError(f"{name}() got an unexpected keyword argument {k!r}{_hint(k, params)}")
        return fn(*args, **kwargs)

    return call  # type: ignore[return-value]


def renamed_keywords(renamed: dict[str, str]) -> Callable[[F], F]:
    """Keep the old names of renamed keywords working for one release: ``renamed = {old: new}``;
    a call with ``old=`` warns (``FutureWarning``, which Python shows by default) and passes it as
    ``new=``. Apply inside :func:`keyword_hints` (``@keyword_hints`` above ``@renamed_keywords``)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise UnknownKeywordError(f"{fn.__qualname__}() got {old}= and {new}=, which is its new name")
                    warnings.warn(
                        f"{fn.__qualname__}(): the keyword {old}= is now {new}= (same meaning); {old}= goes in the "
                        "next release",
                        FutureWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        call.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        call._renamed = dict(renamed)  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return decorate
