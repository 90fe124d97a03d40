"""tidu: a small, generic automatic-differentiation engine.

tidu knows nothing about tensors. A *primitive* is any :class:`Primitive` with an
evaluation rule, an abstract (shape) rule, a JVP rule and a transpose rule; a
*value type* is anything that registers a :class:`VSpace`. On top of that tidu
provides JAX-style transformations (``jvp``, ``linearize``, ``linear_transpose``,
``vjp``, ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian``, ``hvp``),
user-defined rules (``custom_jvp``, ``custom_vjp``), rematerialization
(``checkpoint``) and first-class graphs (``make_graph``). Reverse mode is
linearize followed by transpose, and every transformation nests.
"""

from ._api import LinearFunction, grad, hvp, jvp, linear_transpose, linearize, value_and_grad, vjp
from ._jacobian import hessian, jacfwd, jacrev
from ._core import Primitive, Trace, UndefinedPrimal, is_undefined
from ._batching import BatchTracer, broadcast_batch, move_batch_axis, vmap
from ._tracer import Tracer, aval_of, vspace_of
from ._zero import Zero, instantiate
from ._custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient
from ._errors import (
    AvalMismatchError,
    ComplexOutputError,
    CustomRuleError,
    InvalidArgumentError,
    MissingRuleError,
    RuleError,
    NonDifferentiableError,
    NonScalarOutputError,
    TangentMismatchError,
    TiduError,
    TracerConversionError,
    TreeStructureError,
    UnbatchableError,
    UnexpectedTracerError,
    UnregisteredTypeError,
)
from .graph import Eqn, Graph, Var, make_graph
from ._call import ClosedCall, call_p, inline_calls
from ._staging import CacheInfo, RetraceWarning, StagedFunction, StagingError
from .passes import Rewriter, fold_constants, rewrite, run_passes
from ._ad import backward_pass as transpose_graph
from ._ad import debug_checks, paused_gc
from ._pytree import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from ._vspace import VSpace, register_scalar_promotion, register_vspace, vspace_of_aval

__all__ = [
    "jvp",
    "linearize",
    "linear_transpose",
    "vjp",
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "hessian",
    "hvp",
    "LinearFunction",
    "vmap",
    "BatchTracer",
    "move_batch_axis",
    "broadcast_batch",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
    "remat",
    "stop_gradient",
    "Primitive",
    "Trace",
    "Tracer",
    "UndefinedPrimal",
    "is_undefined",
    "Graph",
    "Eqn",
    "Var",
    "make_graph",
    "paused_gc",
    "transpose_graph",
    "debug_checks",
    "ClosedCall",
    "call_p",
    "inline_calls",
    "StagedFunction",
    "StagingError",
    "RetraceWarning",
    "CacheInfo",
    "fold_constants",
    "run_passes",
    "rewrite",
    "Rewriter",
    "VSpace",
    "Zero",
    "register_vspace",
    "register_scalar_promotion",
    "aval_of",
    "vspace_of",
    "vspace_of_aval",
    "instantiate",
    "PyTreeDef",
    "register_pytree_node",
    "tree_flatten",
    "tree_unflatten",
    "tree_map",
    "tree_leaves",
    "tree_structure",
    "TiduError",
    "NonDifferentiableError",
    "TreeStructureError",
    "TangentMismatchError",
    "NonScalarOutputError",
    "ComplexOutputError",
    "CustomRuleError",
    "TracerConversionError",
    "InvalidArgumentError",
    "AvalMismatchError",
    "UnexpectedTracerError",
    "UnregisteredTypeError",
    "UnbatchableError",
    "MissingRuleError",
    "RuleError",
]
