"""``tensor4all evolve`` (issue 24): parsing, states, help and bad arguments.

Bad arguments run in-process (``main`` exits through argparse, code 2); a run goes
through a subprocess as a user runs it (``run_cli``, used by the other modules too).
The runs checked against exact references are in test_cli_evolve_runs.py, the files
and outputs of a run in test_cli_evolve_outputs.py.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from tensor4all.cli import evolve as ev
from tensor4all.cli import evolve_states as evs
from tensor4all.cli import models as evm
from tensor4all.cli import build_parser, main

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import exact_hubbard  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: pathlib.Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensor4all", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        env=dict(os.environ),
    )


def strict_json(path: pathlib.Path) -> dict:
    def no_constants(name: str):
        raise AssertionError(f"non-standard JSON constant {name} in {path}")

    return json.loads(path.read_text(), parse_constant=no_constants)


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["evolve", *argv])


# ---- parsing and states ----------------------------------------------------------------------
def test_state_specs_and_letters():
    assert evm.letters_of("neel", 5) == "ududu"
    assert evm.letters_of("domain-wall", 5) == "uuddd" and evm.letters_of("domain-wall", 4) == "uudd"
    assert evm.letters_of("up", 3) == "uuu"
    assert evm.letters_of("ground", 3) is None
    sub = build_parser().commands["evolve"]
    for argv, stored, checked in (
        (["--state", "product:0,1,1,0"], "product:0110", "product:uddu"),
        (["--state", "product:U+-d"], "product:U+-d", "product:u+-d"),
        (["--model", "hubbard", "--state", "product:0,U,d,2"], "product:0Ud2", "product:0ud2"),
    ):
        a = parse("--L", "4", *argv)
        assert a.state == stored  # the letters are read for the model by check
        ev.check(sub, a)
        assert a.state == checked
    assert evm.letters_of("neel", 4) == "udud"  # the same letters for spins and electrons
    a = parse()
    assert (a.model, a.L, a.state, a.t_final, a.dt, a.method, a.max_bond, a.cutoff, a.every, a.conserve) == (
        "xx",
        16,
        "neel",
        10.0,
        0.05,
        "tdvp",
        64,
        1e-10,
        None,
        "auto",
    )
    ev.check(build_parser().commands["evolve"], a)
    assert a.every == 10  # auto: 20 rows of the 200 steps
    a = parse("--t-final", "0.35", "--every", "auto")
    ev.check(build_parser().commands["evolve"], a)
    assert a.every == 1


def test_couplings_before_and_after_a_quench():
    a = parse("--model", "heisenberg", "--state", "ground", "--quench-J", "2")
    assert evm.couplings(a, False) == {"J": 1.0, "Jz": 1.0, "h": 0.0}
    assert evm.couplings(a, True) == {"J": 2.0, "Jz": 2.0, "h": 0.0}  # isotropic stays isotropic
    a = parse("--model", "xxz", "--Jz", "0.5", "--state", "ground", "--quench-J", "2")
    assert evm.couplings(a, True) == {"J": 2.0, "Jz": 0.5, "h": 0.0}
    a = parse("--model", "tfim", "--g", "0.5", "--state", "ground", "--quench-g", "1.5")
    assert evm.couplings(a, False) == {"J": 1.0, "g": 0.5} and evm.couplings(a, True) == {"J": 1.0, "g": 1.5}
    assert evm.couplings(parse(), True) == {"J": 1.0, "h": 0.0}
    a = parse("--model", "hubbard", "--t", "0.5", "--state", "ground", "--quench-U", "8")
    assert evm.couplings(a, False) == {"t": 0.5, "U": 4.0, "mu": 0.0}
    assert evm.couplings(a, True) == {"t": 0.5, "U": 8.0, "mu": 0.0}
    a = parse("--model", "hubbard", "--J", "0.5", "--state", "ground", "--quench-J", "2")  # deprecated spellings
    assert evm.couplings(a, False) == {"t": 0.5, "U": 4.0, "mu": 0.0}
    assert evm.couplings(a, True) == {"t": 2.0, "U": 4.0, "mu": 0.0}
    a = parse("--model", "hubbard", "--U", "0", "--mu", "0.3", "--state", "ground", "--quench-mu", "1")
    assert evm.couplings(a, True) == {"t": 1.0, "U": 0.0, "mu": 1.0}


def test_product_states_in_the_models_basis():
    # spin chain: u/d conserve Sz; + and - are the Sx eigenstates (dense)
    psi = evm.product_mps("xx", "ud", "Sz")
    assert psi.symmetric and psi.sector == {"Sz": 0.0}
    psi = evm.product_mps("heisenberg", "u+-", None)
    assert [float(np.asarray(psi.expect("Sz", i))) for i in range(3)] == pytest.approx([0.5, 0.0, 0.0], abs=1e-15)
    assert [float(np.asarray(psi.expect("Sx", i))) for i in range(3)] == pytest.approx([0.0, 0.5, -0.5], abs=1e-15)
    # tfim, dense: the model's own basis (Z up/down)
    psi = evm.product_mps("tfim", "ud+", None)
    assert [float(np.asarray(psi.expect("Z", i, "pauli"))) for i in range(3)] == pytest.approx([1, -1, 0], abs=1e-15)
    # tfim, conserved parity: the rotated basis, where the model's X is Z (Hadamard)
    psi = evm.product_mps("tfim", "+-+", "parity")
    assert psi.symmetric and psi.sector == {"parity": 1.0}
    assert [float(np.asarray(psi.expect("Z", i, "pauli"))) for i in range(3)] == [1.0, -1.0, 1.0]
    # hubbard: 0 empty, u, d, 2 both, in the electron basis; (N, Sz) or N conserved, or dense
    for conserve in ("N,Sz", "N", None):
        psi = evm.product_mps("hubbard", "0ud2", conserve)
        assert psi.symmetric == (conserve is not None) and psi.phys_dims == [4] * 4
        for op, want in (("Ntot", [0, 1, 1, 2]), ("Sz", [0, 0.5, -0.5, 0])):
            assert [float(np.asarray(psi.expect(op, i, "electron"))) for i in range(4)] == want
    assert evm.product_mps("hubbard", "0ud2", "N").sector == {"N": 4.0}
    assert evm.product_mps("hubbard", "0ud2", "N,Sz").sector == {"N": 4.0, "Sz": 0.0}
    assert evm.product_mps("hubbard", "0uu2", "N,Sz").sector == {"N": 4.0, "Sz": 1.0}


def test_conserve_auto_follows_the_state(monkeypatch):
    def never(ns):
        pytest.fail("only ground states ask the dmrg command")

    monkeypatch.setattr(evs, "conserve_of", never)  # product states never ask the dmrg command's choice
    monkeypatch.setattr(evs, "sector_of", never)
    assert ev.build_states(parse("--L", "4")).conserve == "Sz"
    st = ev.build_states(parse("--L", "4", "--state", "product:u+dd"))
    assert st.conserve is None and "not an Sz eigenstate" in st.dense_reason
    st = ev.build_states(parse("--model", "tfim", "--L", "4", "--state", "product:++--"))
    assert st.conserve == "parity" and st.psi0.sector == {"parity": 0.0}
    st = ev.build_states(parse("--model", "tfim", "--L", "4", "--state", "up"))
    assert st.conserve is None and "parity" in st.dense_reason
    assert ev.build_states(parse("--L", "4", "--conserve", "none")).conserve is None
    st = ev.build_states(parse("--model", "hubbard", "--L", "4", "--state", "product:2u00"))
    assert st.conserve == "N,Sz" and st.psi0.sector == {"N": 3.0, "Sz": 0.5} and st.H.local == "electron"
    st = ev.build_states(parse("--model", "hubbard", "--L", "4", "--state", "product:2u00", "--conserve", "N"))
    assert st.conserve == "N" and st.psi0.sector == {"N": 3.0}
    assert ev.build_states(parse("--model", "hubbard", "--L", "4", "--conserve", "none")).conserve is None
    # a hubbard ground state: at half filling, without asking the dmrg command
    st = ev.build_states(parse("--model", "hubbard", "--L", "4", "--state", "ground", "--max-bond", "16"))
    assert st.conserve == "N,Sz" and st.psi0.sector == {"N": 4.0, "Sz": 0.0}
    sel = [b for b in range(256) if sum((0, 1, 1, 2)[b // 4 ** (3 - i) % 4] for i in range(4)) == 4]
    H = exact_hubbard(4, 1.0, 4.0, 0.0)
    assert st.ground.energy == pytest.approx(np.linalg.eigvalsh(H[np.ix_(sel, sel)])[0], abs=1e-9)


def test_conserve_auto_runs_small_evolutions_dense_and_says_so(tmp_path):
    """``--conserve auto`` (the default) passes ``conserve="auto"`` to tdvp/tebd, as their Python
    default for a symmetric state would conserve: a small run goes dense, a large one stays in the
    sector, and the header says which and why (the JSON record: what ran, its reason and the
    sector); an explicit charge conserves whatever the size."""
    small = ["evolve", "--L", "8", "--t-final", "0.1", "--dt", "0.05", "--max-bond", "16", "--quiet"]
    for extra, dense in (([], True), (["--conserve", "Sz"], False), (["--L", "16", "--max-bond", "64"], False)):
        path = tmp_path / "run.json"
        proc = run_cli(*small, *extra, "--json", str(path))
        assert proc.returncode == 0, proc.stderr
        doc = strict_json(path)
        assert "symmetry U(1) Sz, sector Sz = 0" in proc.stdout
        assert doc["final"]["conserve"] == (None if dense else "Sz") and doc["final"]["sector"] == {"Sz": 0.0}
        runs = re.search(r"^\s+runs\s+(.*)$", proc.stdout, flags=re.MULTILINE)
        if extra[:1] == ["--conserve"]:
            assert runs is None and doc["final"]["conserve_reason"] == "Sz: the state is symmetric"
        else:
            assert runs.group(1) == doc["final"]["conserve_reason"]
            assert runs.group(1).startswith("dense: conserve='auto'" if dense else "Sz: conserve='auto'")
        assert "\nran " not in proc.stdout  # the header's choice is the library's


def test_exact_reference_applies_to_the_xx_chain_from_up_down_states():
    assert evm.exact_reference_applies(parse())
    assert evm.exact_reference_applies(parse("--model", "xxz", "--Jz", "0", "--state", "domain-wall"))
    assert not evm.exact_reference_applies(parse("--model", "heisenberg"))
    assert not evm.exact_reference_applies(parse("--imaginary"))
    assert not evm.exact_reference_applies(parse("--L", "2", "--state", "product:u+"))
    assert not evm.exact_reference_applies(parse("--model", "tfim"))
    assert evm.exact_reference_applies(parse("--model", "hubbard", "--U", "0", "--state", "product:2200"))
    assert not evm.exact_reference_applies(parse("--model", "hubbard"))  # U = 4 by default
    assert not evm.exact_reference_applies(parse("--model", "hubbard", "--U", "0", "--state", "ground"))


# ---- help and bad arguments (in-process: argparse exits with 2) --------------------------------
def test_help_explains_every_option_with_its_default(capsys):
    with pytest.raises(SystemExit) as info:
        main(["evolve", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    sub = build_parser().commands["evolve"]
    options = [a for a in sub._actions if a.option_strings and a.dest != "help"]
    assert len(options) >= 25
    for action in options:
        assert action.help and "default" in action.help.lower(), action.option_strings
        for opt in action.option_strings:
            assert re.search(rf"(^|\s|\[){re.escape(opt)}\b", text), opt
    assert "(default: 16)" in text and "Default: xx" in text and "N and Sz together" in text
    assert "hubbard" in text and "--J" in text and "(default: 4)" in text and "half filling" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "evolve" in capsys.readouterr().out


BAD = [
    (["--dt", "0"], ["--dt", "positive"]),
    (["--dt", "-0.1"], ["--dt", "positive"]),
    (["--t-final", "-1"], ["--t-final", "non-negative"]),
    (["--t-final", "1", "--dt", "0.3"], ["--t-final", "is not a multiple of dt", "give a --t"]),
    (["--model", "potts"], ["--model", "invalid choice", "'xx', 'heisenberg', 'xxz', 'tfim', 'hubbard'"]),
    (
        ["--model", "hubbard", "--conserve", "Sz"],
        ["--conserve", "N and Sz together or of N alone, not of Sz", "--conserve N,Sz"],
    ),
    (["--model", "hubbard", "--conserve", "parity"], ["--conserve", "N and Sz together or of N alone, not of parity"]),
    (["--conserve", "N"], ["--conserve", "conserves Sz, not N"]),
    (["--model", "hubbard", "--L", "4", "--state", "product:0u1d"], ["--state", "'1'", "0 (empty), u (up)"]),
    (["--L", "4", "--state", "product:u2du"], ["--state", "'2'", "not a state of a --model xx site"]),
    (["--U", "1"], ["--U", "not a parameter of --model xx", "belongs to hubbard"]),
    (["--model", "hubbard", "--h", "1"], ["--h", "not a parameter of --model hubbard", "takes --t, --U, --mu"]),
    (["--model", "hubbard", "--quench-U", "2"], ["--quench-U", "give --state ground"]),
    (["--model", "hubbard", "--U", "nan"], ["--U", "finite"]),
    (["--model", "hubbard", "--observe", "Sx"], ["--observe", "valid operators: Ntot, Sz, Nup, Ndn, Nupdn"]),
    (["--state", "foo"], ["--state", "invalid state", "valid states: neel, domain-wall, up, ground, product:"]),
    (["--state", "product:uxd"], ["--state", "invalid product state"]),
    (["--state", "product:"], ["--state", "invalid product state"]),
    (["--L", "1"], ["--L", "at least 2 sites"]),
    (["--L", "4", "--state", "product:uud"], ["--state", "gives 3 sites, but --L is 4"]),
    (["--Jz", "1"], ["--Jz", "the xx chain has Jz = 0", "--model xxz"]),
    (["--g", "1"], ["--g", "belongs to tfim"]),
    (["--J", "nan"], ["--J", "finite"]),
    (["--quench-J", "2"], ["--quench-J", "give --state ground"]),
    (["--model", "tfim", "--state", "ground", "--quench-h", "1"], ["--quench-h", "not a parameter of --model tfim"]),
    (["--method", "tebd", "--one-site"], ["--one-site", "--method tdvp"]),
    (["--one-site"], ["--one-site", "would stay a product state", "--state ground"]),
    (["--order", "4"], ["--order", "--method tebd"]),
    (["--method", "tebd", "--order", "3"], ["--order", "invalid choice"]),
    (["--method", "mps"], ["--method", "'tdvp', 'tebd'"]),
    (["--conserve", "parity"], ["--conserve", "conserves Sz, not a parity"]),
    (["--model", "tfim", "--conserve", "Sz"], ["--conserve", "conserves no Sz"]),
    (["--conserve", "Sz", "--L", "4", "--state", "product:+-+-"], ["--conserve", "not an eigenstate of the Sz"]),
    (["--model", "tfim", "--conserve", "parity"], ["--conserve", "product of + and -"]),
    (["--observe", "X"], ["--observe", "unknown operator 'X'", "valid operators: Sx, Sy, Sz"]),
    (["--observe", "Sz,,Sx"], ["--observe", "invalid list"]),
    (["--every", "0"], ["--every", "positive integer"]),
    (["--every", "some"], ["--every", "invalid integer"]),
    (["--max-bond", "0"], ["--max-bond", "positive integer"]),
    (["--cutoff", "-1"], ["--cutoff", "non-negative"]),
    (["--threads", "many"], ["--threads", "'auto' or a non-negative integer"]),
    (["--save", "psi.txt"], ["--save", ".arrow, .parquet, .npz"]),
    (["--plot", "fig.jpg"], ["--plot", ".png, .pdf, .svg"]),
    (["--json", "/no/such/dir/r.json"], ["--json", "does not exist"]),
    (["--L", "100000", "--max-bond", "100000"], ["of memory is available", "lower --max-bond"]),
]


@pytest.mark.parametrize("args,needles", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_arguments_exit_2_with_a_message(args, needles, capsys):
    with pytest.raises(SystemExit) as info:
        main(["evolve", *args])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: tensor4all evolve" in err and "error:" in err
    last = err.strip().splitlines()[-1]  # usage, then the message on one line
    assert last.startswith("tensor4all evolve: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in last, (needle, err)
