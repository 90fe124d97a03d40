"""One vocabulary across the command line and Python: a name means one thing everywhere.

The table below is the vocabulary (docs/cli.md and the docstrings use it): for each quantity its
command-line option and its Python keyword. The tests walk the argument parsers of every command
and the signatures of every public callable of ``tensor4all`` (functions, and the methods of
``MPS`` and ``MPO``) and fail on

* a parameter or option spelled as another code spells it (``chi``, ``maxdim``, ``nsweeps``,
  ``svd_min``, ... : :data:`tensor4all.tools.keywords.PEER_NAMES`), except deprecated aliases that
  warn;
* a name used for two quantities (``t``: the hopping in ``models`` and on the command line, so the
  final time of an evolution is ``t_final`` in Python and ``--t-final`` on the command line);
* an option shared by commands with a different meaning (its destination and its type);
* different defaults of the one truncation cutoff of the simulations.
"""

from __future__ import annotations

import inspect

import pytest

import tensor4all as t4a
from tensor4all.cli import build_parser
from tensor4all.tools.keywords import PEER_NAMES

#: quantity -> (command-line option, Python keyword)
VOCABULARY = {
    "largest bond dimension": ("--max-bond", "max_bond"),
    "truncation cutoff (discarded weight per bond)": ("--cutoff", "cutoff"),
    "number of sweeps": ("--sweeps", "sweeps"),
    "energy tolerance that stops the sweeps": ("--tol", "tol"),
    "two-site updates": ("--two-site/--one-site", "two_site"),
    "noise of the first sweeps": ("--noise", "noise"),
    "conserved charge": ("--conserve", "conserve"),
    "random seed": ("--seed", "seed"),
    "BLAS threads": ("--threads", "threads"),
    "time step": ("--dt", "dt"),
    "final time of an evolution": ("--t-final", "t_final"),
    "imaginary time": ("--imaginary", "imaginary"),
    "hopping of fermion models": ("--t", "t"),
    "exchange coupling": ("--J", "J"),
    "number of sites": ("--L", "L"),
}
#: option spellings kept for one release, each warning and naming its replacement
DEPRECATED_OPTIONS = {"--chi": "--max-bond"}
#: where an option's internal destination differs between commands but means the same quantity
SAME_QUANTITY_DESTS = [{"chi", "max_bond"}, {"two_site", "one_site"}]


def _commands():
    return build_parser().commands  # type: ignore[attr-defined]


def _public_callables():
    out = []
    for name in t4a.__all__:
        obj = getattr(t4a, name)
        if inspect.isfunction(obj) or (callable(obj) and hasattr(obj, "__wrapped__")):
            out.append((name, obj))
    for cls in (t4a.MPS, t4a.MPO):
        for name, obj in vars(cls).items():
            if not name.startswith("_") and callable(getattr(cls, name)):
                out.append((f"{cls.__name__}.{name}", getattr(cls, name)))
    for mod in (t4a.models, t4a.measurements, t4a.tci, t4a.quantics):
        out += [(f"{mod.__name__}.{n}", getattr(mod, n)) for n in mod.__all__ if inspect.isfunction(getattr(mod, n))]
    return out


def _params(fn):
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def test_no_public_signature_uses_another_codes_spelling():
    bad = [(name, p) for name, fn in _public_callables() for p in _params(fn) if p in PEER_NAMES]
    assert not bad, f"parameters spelled as other codes spell them (use the project's name): {bad}"


def test_no_command_offers_another_codes_spelling_but_deprecated_aliases():
    peer_options = {"--" + k.replace("_", "-") for k in PEER_NAMES}
    for cmd, sub in _commands().items():
        opts = {o for a in sub._actions for o in a.option_strings}
        bad = sorted((opts & peer_options) - set(DEPRECATED_OPTIONS))
        assert not bad, (cmd, bad)


def test_the_final_time_and_the_hopping_are_two_names():
    """``t`` is the hopping (``models.hubbard(t=)``, ``--t``); the final time is ``t_final``."""
    for fn in (t4a.tdvp, t4a.tebd):
        params = _params(fn)
        assert "t_final" in params and "t" not in params, (fn.__name__, params)
    assert "t" in _params(t4a.models.hubbard)
    evolve = _commands()["evolve"]
    actions = {o: a for a in evolve._actions for o in a.option_strings}
    assert actions["--t"].dest == "t" and actions["--t-final"].dest == "t_final"


def test_options_shared_by_commands_mean_the_same():
    seen: dict[str, list] = {}
    for cmd, sub in _commands().items():
        for a in sub._actions:
            for o in a.option_strings:
                if o.startswith("--") and o != "--help":
                    seen.setdefault(o, []).append((cmd, a.dest))
    for option, uses in seen.items():
        dests = {d for _, d in uses}
        assert len(dests) == 1 or any(dests <= same for same in SAME_QUANTITY_DESTS), (option, uses)


def test_every_quantity_of_the_table_is_spelled_the_same_in_python():
    names = {p for _, fn in _public_callables() for p in _params(fn)}
    for quantity, (option, keyword) in VOCABULARY.items():
        assert keyword in names, (quantity, keyword)
        options = {o for sub in _commands().values() for a in sub._actions for o in a.option_strings}
        for spelled in option.split("/"):
            assert spelled in options, (quantity, spelled)


@pytest.mark.parametrize("fn", [t4a.dmrg, t4a.tdvp, t4a.tebd])
def test_one_default_cutoff(fn):
    python = inspect.signature(fn).parameters["cutoff"].default
    cli = {}
    for cmd in ("dmrg", "evolve"):
        a = next(a for a in _commands()[cmd]._actions if a.dest == "cutoff")
        cli[cmd] = a.default[0] if isinstance(a.default, list) else a.default
    assert python == cli["dmrg"] == cli["evolve"] == 1e-10, (fn.__name__, python, cli)
