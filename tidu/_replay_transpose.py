"""Recorded transpose rules: the backward pass's per-equation cost cut to the work itself.

The tangent equations a JVP recipe appends (:class:`tidu._replay.StepEqn`) share, per
recipe step, their primitive, parameters and avals. For a primitive that opts in
(``Primitive.transpose_replay``: its transpose rule's equations depend only on those
and on which arguments are linear), the rule is traced once per step, at its first
transposition, with an abstract cotangent, the linear arguments undefined and the
others abstract; the backward pass then runs it as one straight-line function: the
rule's primitives called with their ``impl`` on the concrete cotangent and residuals
(what ``bind`` does with no tracer: the values the rule computes), the results summed
into the cotangents with the value type's ``add``. A rule that does not trace
abstractly runs directly, and so does an equation whose cotangent or residual is a
tracer (reverse mode under another transformation).
"""

from __future__ import annotations

from typing import Any, Callable

from ._core import UndefinedPrimal, new_trace
from .graph import Eqn, GraphTrace, GraphTracer, Var
from ._replay import _MAX_CONST_SIZE, straight_line
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero

__all__ = ["compile_transpose"]


def compile_transpose(eqn: Eqn, linear: tuple, check: Callable[..., None]) -> Callable[..., bool] | None:
    """``eqn``'s transpose rule, the arguments flagged in ``linear`` undefined, as
    ``run(ct, inputs, env, ct_env, linear_vars, checks) -> bool``: False (nothing done)
    when a flagged argument is not in ``linear_vars`` or a value is a tracer; otherwise the
    cotangents accumulated into ``ct_env`` (``check(prim, inputs, cts, linear_vars)`` run
    on them first when ``checks``). ``None`` when the rule does not trace abstractly or
    returns anything but its own staged values for the linear arguments."""
    prim = eqn.prim
    recorder = GraphTrace()
    try:
        with new_trace(recorder):
            ct = recorder.new_arg(eqn.outputs[0].aval)
            args: list[Any] = []
            known = [ct]
            for v, lin in zip(eqn.inputs, linear):
                if lin:
                    args.append(UndefinedPrimal(v.aval))
                else:
                    t = recorder.new_arg(v.aval)
                    args.append(t)
                    known.append(t)
            cts = list(prim.transpose_rule(ct, *args, **eqn.params))  # type: ignore[misc]
    except Exception:  # a rule that needs concrete values (or fails): it runs as before
        return None
    if len(cts) != len(linear):
        return None
    ns: dict[str, Any] = {"Tracer": Tracer, "PRIM": prim, "check": check}
    name: dict[Var, str] = {ct._var: "ct"}
    body = ["if isinstance(ct, Tracer):", "    return False"]
    for i, (v, lin) in enumerate(zip(eqn.inputs, linear)):
        if lin:
            body += [f"if inputs[{i}] not in linear:", "    return False"]
        else:
            name[args[i]._var] = f"x{i}"
            body += [
                f"x{i} = env.get(inputs[{i}])",
                f"if x{i} is None or isinstance(x{i}, Tracer):",
                "    return False",
            ]
    for j, (v, c) in enumerate(zip(recorder.constvars, recorder.consts)):
        a = aval_of(c)
        if vspace_of_aval(a).size(a) > _MAX_CONST_SIZE:
            return None
        ns[f"K{j}"], name[v] = c, f"K{j}"
    for m, e in enumerate(recorder.eqns):
        if len(e.outputs) != 1 or e.prim.multiple_results:
            return None
        ns[f"P{m}"], ns[f"M{m}"] = e.prim.impl, e.params
        kw = f", **M{m}" if e.params else ""
        body.append(f"r{m} = P{m}({', '.join(name[v] for v in e.inputs)}{kw})")
        name[e.outputs[0]] = f"r{m}"
    outs: list[tuple[int, str]] = []
    for i, (c, lin) in enumerate(zip(cts, linear)):
        if c is None or type(c) is Zero or not lin:
            continue
        if type(c) is not GraphTracer or c._trace is not recorder:  # a value the rule made: run it directly
            return None
        outs.append((i, name[c._var]))
    cts_list = ["None"] * len(linear)
    for i, n in outs:
        cts_list[i] = n
    body += ["if checks:", f"    check(PRIM, inputs, [{', '.join(cts_list)}], linear)"]
    for i, n in outs:  # accumulate, with the value type's add (as backward_pass does)
        a = eqn.inputs[i].aval
        ns[f"ADD{i}"] = vspace_of_aval(a).add
        body += [f"v = inputs[{i}]", "prev = ct_env.get(v)", f"ct_env[v] = {n} if prev is None else ADD{i}(prev, {n})"]
    body.append("return True")
    return straight_line("transpose", "ct, inputs, env, ct_env, linear, checks", body, ns)
