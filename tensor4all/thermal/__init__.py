"""Finite temperature: thermal states by purification (:func:`thermal_state`), the specific heat
and susceptibilities as tidu derivatives through the cooling (:func:`thermodynamics`) and METTS
(:func:`metts`, with its chains as a task list for Dask, :func:`metts_tasks`); a purification's
real-time evolution with the ancilla disentangler (:func:`evolve_thermal`).

Modules, bottom to top: ``results`` (the records), ``purified`` (the doubled local space, the
infinite-temperature states), ``purification`` (the cooling loop and ``ln Z`` from the norms),
``thermodynamics`` (the derivative path, with ``tangent_path``: the forward derivative carried
beside the concrete run), ``realtime`` (:func:`evolve_thermal`: real time, with the ancillas'
backwards evolution as disentangler), ``metts``.
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from .metts import MettsChain, collapse, metts, metts_tasks
from .purification import thermal_state
from .purified import purified_space
from .realtime import evolve_thermal
from .results import MettsResult, MettsSample, ThermalResult, Thermodynamics
from .thermodynamics import thermodynamics

__all__ = [
    "thermal_state",
    "thermodynamics",
    "evolve_thermal",
    "metts",
    "metts_tasks",
    "MettsChain",
    "collapse",
    "purified_space",
    "ThermalResult",
    "Thermodynamics",
    "MettsResult",
    "MettsSample",
]


def __dir__() -> list[str]:
    """The public names and the public submodules."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
