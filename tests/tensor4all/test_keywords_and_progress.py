"""Habits brought from other codes: a keyword the call does not take is named with the project's
(``dmrg(maxdim=64)`` -> ``max_bond``), a renamed keyword still works for one release with a
``FutureWarning``, and ``progress=True`` draws the command line's bar (on stderr) in the long calls."""

from __future__ import annotations

import io
import warnings

import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.tools.keywords import keyword_hints, renamed_keywords
from tensor4all.tools.progress import SweepBar

H4 = models.heisenberg(4)
PSI4 = t4a.MPS.random(4, bond_dim=2, seed=1)


@pytest.mark.parametrize(
    "call,kw,meant",
    [
        (lambda **kw: t4a.dmrg(H4, **kw), {"maxdim": 8}, "max_bond= (ITensor's maxdim"),
        (lambda **kw: t4a.dmrg(H4, **kw), {"chi": 8}, "max_bond="),
        (lambda **kw: t4a.dmrg(H4, **kw), {"nsweeps": 3}, "sweeps= (ITensor's nsweeps"),
        (lambda **kw: t4a.dmrg(H4, **kw), {"svd_min": 1e-8}, "cutoff= (TeNPy's svd_min"),
        (lambda **kw: t4a.dmrg(H4, **kw), {"cutof": 1e-8}, "did you mean cutoff=?"),
        (lambda **kw: t4a.apply(H4, PSI4, **kw), {"maxdim": 4}, "max_bond="),
        (lambda **kw: t4a.tci.crossinterpolate2(lambda i: 1.0, [2, 2], **kw), {"chi_max": 4}, "max_bond="),
    ],
)
def test_an_unknown_keyword_names_the_meant_one(call, kw, meant):
    with pytest.raises(TypeError, match="unexpected keyword argument") as info:
        call(**kw)
    assert isinstance(info.value, t4a.Tensor4allTypeError) and meant in str(info.value)


def test_a_keyword_with_no_near_name_gets_the_plain_message():
    with pytest.raises(t4a.Tensor4allTypeError) as info:
        t4a.dmrg(H4, zzzz=1)
    assert str(info.value) == "dmrg() got an unexpected keyword argument 'zzzz'"


def test_renamed_keywords_warn_and_pass_the_value():
    @keyword_hints
    @renamed_keywords({"old": "new"})
    def f(a, *, new=0):
        return a + new

    assert f(1, new=2) == 3
    with pytest.warns(FutureWarning, match=r"old= is now new="):
        assert f(1, old=2) == 3
    with pytest.raises(t4a.Tensor4allTypeError, match="got old= and new="):
        f(1, old=2, new=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a call with the new name warns nothing
        f(1, new=1)


def test_progress_true_draws_a_bar_per_sweep(capsys):
    res = t4a.dmrg(models.heisenberg(8), max_bond=8, sweeps=2, tol=0.0, progress=True)
    err = capsys.readouterr().err
    assert "sweep 1" in err and "sweep 2" in err and "bond" in err
    assert res.energy < 0
    for bad in (3, "yes"):
        with pytest.raises(t4a.Tensor4allTypeError, match="progress must be True"):
            t4a.dmrg(H4, progress=bad)
    assert t4a.dmrg(H4, max_bond=4, progress=False).energy == t4a.dmrg(H4, max_bond=4).energy


def test_the_bar_follows_the_updates():
    out = io.StringIO()
    bar = SweepBar(file=out)
    updates = []
    t4a.dmrg(models.heisenberg(6), max_bond=4, sweeps=2, tol=0.0, progress=lambda u: (updates.append(u), bar(u)))
    bar.close()
    assert [u.sweep for u in updates] == [1] * updates[0].steps + [2] * updates[0].steps
    assert "sweep 2" in out.getvalue()


def test_the_final_time_is_t_final_and_t_still_works_for_one_release(capsys):
    H, psi = models.heisenberg(4), t4a.MPS.product_state([0, 1, 0, 1])
    for evolve in (t4a.tdvp, t4a.tebd):
        new = evolve(H, psi, t_final=0.2, dt=0.1, progress=True)
        assert "step" in capsys.readouterr().err  # the bar over the steps
        with pytest.warns(FutureWarning, match=r"t= is now t_final="):
            old = evolve(H, psi, t=0.2, dt=0.1)
        assert float(old.state.expect("Sz", 0)) == float(new.state.expect("Sz", 0))
        with pytest.raises(t4a.Tensor4allTypeError, match="did you mean t_final="):
            evolve(H, psi, tmax=0.2, dt=0.1)
