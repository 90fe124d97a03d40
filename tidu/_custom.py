"""User-defined derivatives (``custom_jvp``, ``custom_vjp``), ``checkpoint`` and
``stop_gradient``, and the one table saying how each trace type handles a custom call
or a checkpoint.

Each is handled by the trace that meets it: outside any transformation the plain function
runs; a :class:`~tidu._ad.JVPTrace` uses the user's rule (:mod:`tidu._custom_ad`), a
:class:`~tidu._batching.BatchTrace` runs the function and its rules once per example
(:mod:`tidu._custom_batch`), a :class:`~tidu.graph.GraphTrace` records one ``custom_call``
equation, closure-converted when the function closes over traced values
(:mod:`tidu._custom_call`), and a graph trace or a batch trace meeting a checkpoint records one
``checkpoint`` equation (:mod:`tidu._checkpoint`); a trace type not listed inlines the function. Calls, their
arguments and the checks of rule results are in :mod:`tidu._custom_rules` and
:mod:`tidu._custom_checks`; ``checkpoint`` in :mod:`tidu._checkpoint`.
"""

from __future__ import annotations

from typing import Any

from ._ad import JVPTrace
from ._batching import BatchTrace
from ._checkpoint import (
    checkpoint,
    checkpoint_p,
    checkpoint_process,
    remat,
    remat_lin_p,
    stage_checkpoint,
    stop_gradient,
    stop_gradient_p,
)
from ._custom_ad import custom_jvp_process, custom_vjp_lin_p, custom_vjp_process
from ._custom_batch import custom_jvp_batch, custom_vjp_batch
from ._custom_call import custom_call_p, stage_custom_call
from ._custom_rules import DEFAULTS, HANDLERS, CustomCall, custom_jvp, custom_vjp
from .graph import Graph, GraphTrace

__all__ = [
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
    "remat",
    "stop_gradient",
    "custom_call_p",
    "custom_vjp_lin_p",
    "checkpoint_p",
    "remat_lin_p",
    "stop_gradient_p",
]


def _inline_call(trace: Any, call: CustomCall, leaves: list) -> Any:
    return call.fun(*leaves)


def _inline_graph(trace: Any, graph: Graph, args: list) -> list:
    return graph.eval_flat(*args)


HANDLERS.update(
    {
        (JVPTrace, "custom_jvp"): custom_jvp_process,
        (JVPTrace, "custom_vjp"): custom_vjp_process,
        (JVPTrace, "checkpoint"): checkpoint_process,
        (GraphTrace, "custom_jvp"): stage_custom_call,
        (GraphTrace, "custom_vjp"): stage_custom_call,
        (GraphTrace, "checkpoint"): stage_checkpoint,
        (BatchTrace, "custom_jvp"): custom_jvp_batch,
        (BatchTrace, "custom_vjp"): custom_vjp_batch,
        (BatchTrace, "checkpoint"): stage_checkpoint,  # batched by checkpoint_p's rule, staying one
    }
)
DEFAULTS.update({"custom_jvp": _inline_call, "custom_vjp": _inline_call, "checkpoint": _inline_graph})
