"""The compiled executor: one straight-line Python function per graph.

:func:`generate` writes the optimized graph as Python source (a local variable
per value, one line per equation calling its kernel with precomputed arguments,
see :mod:`._kernels`), compiles it once with :func:`compile` and returns a
:class:`Program`. At run time there is no dispatch, shape check or tracing: the
function unwraps its input tensors, runs the lines and wraps its outputs.

Memory: a value of at least :data:`FREE_BYTES` is deleted after its last use
(``del``), and an elementwise
kernel writes into a dying input of its own shape and dtype (NumPy ``out=``)
when that buffer is owned by the program: made by a kernel that always returns
a new buffer (or a donated argument), and never read by a kernel that might
return a view of it. Those ``out=`` lines are the only writes into an existing
buffer, so the first line that writes into a donated argument's buffer is known
here, and a call that raised tells from its traceback whether it got there
(:meth:`Program.written`).

On a GPU, :mod:`._cuda_graph` captures the program into a CUDA graph at its
second call and replays it after (``Program.cuda_graph``); a CPU program's call
is the generated function itself.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from tidu import Zero
from tidu.graph import Graph, Var

from .._placement import CPU
from .._tensor import Tensor
from ._cost import eqn_flops, nbytes
from ._cuda_graph import CudaGraphRunner, CudaGraphState, graph_runner
from ._kernels import Kernel, kernel_for

__all__ = ["Program", "generate", "return_expressions"]

FREE_BYTES = 1 << 16
"""Values at least this big are deleted after their last use."""
_COUNTER = itertools.count()


class Program:
    """A compiled graph: the callable, its source and its cost estimate.

    ``runner``: the :class:`CudaGraphRunner` a call goes through on a GPU
    (``None``: the call is ``fn`` itself, and ``runner_off`` says why)."""

    __slots__ = (
        "graph",
        "source",
        "fn",
        "flops",
        "peak_bytes",
        "reused_buffers",
        "donated_writes",
        "runner",
        "runner_off",
        "report",
        "writes_inputs",
        "_run",
    )

    def __init__(
        self,
        graph: Graph,
        source: str,
        fn: Callable[..., list],
        flops: float,
        peak_bytes: int,
        reused_buffers: int,
        donated_writes: dict[int, int] | None = None,
        runner: CudaGraphRunner | None = None,
        runner_off: str | None = None,
    ):
        self.graph = graph
        self.source = source
        self.fn = fn
        self.flops = flops
        self.peak_bytes = peak_bytes
        self.reused_buffers = reused_buffers
        self.donated_writes = donated_writes or {}  # donated input -> first source line writing its buffer
        self.runner = runner
        self.runner_off = runner_off
        self.report = None  # the native backend's CompileReport (None: the NumPy backend, never asked)
        self.writes_inputs = True  # False: no line writes into an argument's buffer (the native backend)
        self._run = fn if runner is None else runner

    def __call__(self, *args: Any) -> list:
        return self._run(*args)

    @property
    def cuda_graph(self) -> CudaGraphState:
        """Where the program stands with CUDA graphs (see :class:`CudaGraphState`)."""
        if self.runner is None:
            return CudaGraphState("off", 0, 0, self.runner_off)
        return self.runner.info()

    def written(self, exc: BaseException) -> set[int]:
        """The donated inputs whose buffers a call that raised ``exc`` may have
        written into: those whose first writing line it reached (the line it
        failed at included). The others are untouched."""
        line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code is self.fn.__code__:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:  # not raised inside the program: assume the worst
            return set(self.donated_writes)
        return {i for i, first in self.donated_writes.items() if first <= line}


def _on_cpu(graph: Graph) -> bool:
    avals = [v.aval for v in graph.invars] + [v.aval for v in graph.constvars]
    avals += [o.aval for e in graph.eqns for o in e.outputs]
    return all(getattr(a, "placement", CPU) is CPU for a in avals)


def generate(graph: Graph, donate: tuple[bool, ...] = (), name: str = "compiled", cuda_graph: bool = True) -> Program:
    """Generate, compile and return the program of ``graph`` (inputs and outputs
    are tensors). ``donate[i]``: input ``i``'s buffer may be overwritten.
    ``cuda_graph``: a program on a GPU is captured into a CUDA graph and replayed
    (:mod:`._cuda_graph`)."""
    on_cpu = _on_cpu(graph)
    names: dict[Var, str] = {}
    env: dict[str, Any] = {"_W": Tensor._wrap, "_errstate": np.errstate}
    head: list[str] = []
    for i, v in enumerate(graph.invars):
        names[v] = f"a{i}"
        head.append(f"a{i} = x{i}._data")
    for i, (v, c) in enumerate(zip(graph.constvars, graph.consts)):
        names[v] = f"c{i}"
        env[f"c{i}"] = c._data if type(c) is Tensor else c

    kernels: list[Kernel] = []
    for n, eqn in enumerate(graph.eqns):
        k = kernel_for(eqn, str(n), on_cpu)
        kernels.append(k)
        env.update(k.env)
        for j, o in enumerate(eqn.outputs):
            names[o] = f"v{n}" if len(eqn.outputs) == 1 else f"v{n}_{j}"

    # liveness: the index of the last equation reading each variable
    last_use: dict[Var, int] = {}
    readers_safe: dict[Var, bool] = {}
    for n, (eqn, k) in enumerate(zip(graph.eqns, kernels)):
        safe = k.ufunc or k.fresh and eqn.prim.name == "dot_general"
        for v in eqn.inputs:
            last_use[v] = n
            readers_safe[v] = readers_safe.get(v, True) and safe
    outputs = {v for v in graph.outvars if type(v) is Var}
    owned: set[Var] = set()
    in_donated: dict[Var, int] = {}  # a value in a donated input's buffer -> that input
    for i, v in enumerate(graph.invars):
        if i < len(donate) and donate[i]:
            owned.add(v)
            in_donated.setdefault(v, i)
    first_write: dict[int, int] = {}  # donated input -> index in body of the first line writing into it

    body: list[str] = []
    quiet_lines: set[int] = set()  # lines of kernels that run under np.errstate(all="ignore"), as eager
    reused = 0
    live_bytes = sum(nbytes(v.aval) for v in graph.invars) + sum(nbytes(v.aval) for v in graph.constvars)
    peak = live_bytes
    flops = 0.0
    for n, (eqn, k) in enumerate(zip(graph.eqns, kernels)):
        args = [names[v] for v in eqn.inputs]
        expr = k.expr.format(*args)
        out_names = [names[o] for o in eqn.outputs]
        target = None
        if k.ufunc:
            out_aval = eqn.outputs[0].aval
            for v in eqn.inputs:
                if (
                    v in owned
                    and last_use.get(v) == n
                    and v not in outputs
                    and readers_safe.get(v, False)
                    and v.aval == out_aval
                ):
                    target = v
                    break
        if target is not None:
            expr = expr[:-1] + f", {names[target]})"  # positional out: cheaper than out= for NumPy ufuncs
            reused += 1
            if target in in_donated:
                first_write.setdefault(in_donated[target], len(body))
                in_donated[eqn.outputs[0]] = in_donated[target]
        if k.quiet:
            quiet_lines.add(len(body))
        body.append(
            f"{', '.join(out_names)}{',' if len(out_names) == 1 and eqn.prim.multiple_results else ''} = {expr}"
        )
        flops += eqn_flops(eqn)
        new_bytes = 0 if target is not None else sum(nbytes(o.aval) for o in eqn.outputs)
        live_bytes += new_bytes
        peak = max(peak, live_bytes)
        if k.fresh or target is not None and target in owned:
            owned.update(eqn.outputs)
        # free big values after their last use (small ones live until the return: a del
        # costs more than it saves)
        dying = [
            v
            for v in dict.fromkeys(eqn.inputs)
            if last_use.get(v) == n and v not in outputs and names[v][0] == "v" and nbytes(v.aval) >= FREE_BYTES
        ]
        dying += [o for o in eqn.outputs if o not in last_use and o not in outputs and nbytes(o.aval) >= FREE_BYTES]
        dead = sorted(names[v] for v in dying)
        live_bytes -= sum(nbytes(v.aval) for v in dying if v is not target)
        if dead:
            body.append("del " + ", ".join(dead))

    rets = return_expressions(graph, names, env)

    params = ", ".join(f"x{i}" for i in range(len(graph.invars)))
    lines = [f"def {name}({params}):"]
    lines += ["    " + h for h in head]
    line_of: list[int] = []  # body line -> its source line (1-based)
    for b, text in enumerate(body):
        # only the quiet kernels' lines ignore floating-point errors (each run of them in one
        # block): the program's other lines signal as eager does under np.errstate(invalid="raise")
        if b in quiet_lines and b - 1 not in quiet_lines:
            lines.append("    with _errstate(all='ignore'):")
        lines.append(("        " if b in quiet_lines else "    ") + text)
        line_of.append(len(lines))
    lines.append("    " + f"return [{', '.join(rets)}]")
    source = "\n".join(lines) + "\n"
    filename = f"<tenferro.jit {name} #{next(_COUNTER)}>"
    code = compile(source, filename, "exec")
    exec(code, env)
    donated_writes = {i: line_of[b] for i, b in first_write.items()}
    fn = env[name]
    runner, off = (None, "the program runs on the CPU") if on_cpu else graph_runner(graph, fn, name, cuda_graph)
    return Program(graph, source, fn, flops, peak, reused, donated_writes, runner, off)


def return_expressions(graph: Graph, names: dict, env: dict) -> list[str]:
    """The generated program's return values, one per graph output: a zero made on demand
    (its maker put in ``env``), an input as a new tensor over its array (as JAX, never the
    argument object itself: donating the result then finds the array shared and leaves the
    argument valid), a constant copied (the caller may write to it), a value wrapped as a
    tensor (``_W``); a value returned a second time (``(exp(x), exp(x))`` after CSE) is copied, so
    two outputs never share a buffer, as in eager mode."""
    rets = []
    seen: set = set()
    for j, v in enumerate(graph.outvars):
        if type(v) is not Zero and v in seen and v not in graph.invars:
            rets.append(f"_W({names[v]}.copy(order='K'))")
            continue
        if type(v) is not Zero:
            seen.add(v)
        if type(v) is Zero:
            env[f"_zero{j}"] = v.instantiate
            rets.append(f"_zero{j}()")
        elif v in graph.invars:
            rets.append(f"_W(x{graph.invars.index(v)}._data)")
        elif names[v][0] == "c":
            rets.append(f"_W({names[v]}.copy(order='F'))")
        else:
            rets.append(f"_W({names[v]})")
    return rets
