"""Progress bars of the long calls (tqdm, on stderr): ``progress=True`` in ``dmrg``, ``tdvp`` and
``tebd`` shows the bar the command line shows, a callable receives the updates itself.

:class:`SweepBar` is the bar across the bonds of each sweep (one bar per sweep, the energy and the
bond dimension after each local update): the command line's ``dmrg`` and Python's
``dmrg(progress=True)`` draw the same one. :class:`StepBar` counts the time steps of an evolution.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from tqdm import tqdm

from .errors import Tensor4allTypeError

__all__ = ["SweepBar", "StepBar", "progress_hook"]


class SweepBar:
    """Called with each local update (anything with ``sweep``, ``step``, ``steps``, ``energy`` and
    ``bond_dim``, such as a :class:`~tensor4all.BondUpdate`): a bar per sweep; :meth:`close` at the end."""

    def __init__(self, file: Any = None):
        self.file = sys.stderr if file is None else file
        self.bar: Any = None
        self.sweep: int | None = None

    def __call__(self, u: Any) -> None:
        if self.bar is None or u.sweep != self.sweep:
            self.close()
            self.bar = tqdm(
                total=u.steps,
                desc=f"sweep {u.sweep}",
                unit="bond",
                leave=False,
                file=self.file,
                dynamic_ncols=True,
                mininterval=0.1,
            )
            self.sweep = u.sweep
        self.bar.set_postfix_str(f"E={u.energy:.10f} chi={u.bond_dim}", refresh=False)
        self.bar.update(1)
        if u.step == u.steps:  # a fast sweep may end between refreshes: show its last state
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class StepBar:
    """Counts the time steps of an evolution (``total`` steps); called once per step."""

    def __init__(self, total: int, what: str, file: Any = None):
        self.bar = tqdm(total=total, desc=what, unit="step", leave=False, file=sys.stderr if file is None else file)

    def __call__(self, *_: Any) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def progress_hook(progress: Any, what: str) -> Callable[[Any], Any] | None:
    """``progress`` of a long call: ``True`` (a :class:`SweepBar`), ``False``/``None`` (none) or a
    callable (itself); anything else raises :class:`Tensor4allTypeError` naming ``what``."""
    if progress is True:
        return SweepBar()
    if progress is None or progress is False:
        return None
    if not callable(progress):
        raise Tensor4allTypeError(
            f"{what} must be True (a progress bar), False/None or a callable, got {type(progress).__name__} "
            f"{progress!r}"
        )
    return progress
