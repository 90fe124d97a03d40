"""``tensor4all evolve`` (issue 24): parsing, states, exact references, and end-to-end runs.

Bad arguments run in-process (``main`` exits through argparse, code 2); the runs go through
a subprocess as a user runs them. Evolutions are checked against references computed here
independently of the program: dense ``expm`` of the explicit ``2^L`` Hamiltonian
(:func:`tensor4all.references.sparse_hamiltonian`), and for the XX chain the free-fermion
formula of :func:`tensor4all.references.xx_magnetization` (itself checked against ``expm``).
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
import scipy.linalg

import tensor4all as t4a
from tensor4all.cli import evolve as ev
from tensor4all.cli import evolve_states as evs
from tensor4all.cli import models as evm
from tensor4all import models, references
from tensor4all.cli import build_parser, main

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import basis_vector, exact_hubbard, site_op as electron_op  # noqa: E402

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


# ---- exact references (no evolution code of the library) ----------------------------------
PAULI = {"X": np.array([[0.0, 1.0], [1.0, 0.0]]), "Y": np.array([[0.0, -1j], [1j, 0.0]]), "Z": np.diag([1.0, -1.0])}


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (L - i - 1)))


def product_vector(vectors) -> np.ndarray:
    out = np.ones(1)
    for v in vectors:
        out = np.kron(out, v)
    return out


def ed_evolve(H: np.ndarray, psi: np.ndarray, times, ops) -> np.ndarray:
    """``<psi(t)| op_i |psi(t)>`` for every time (first axis) and operator (dense expm)."""
    out = []
    for t in times:
        v = scipy.linalg.expm(-1j * t * H) @ psi
        out.append([np.real(np.vdot(v, o @ v)) for o in ops])
    return np.array(out)


@pytest.mark.parametrize(
    "states,J,h", [([0, 1, 0, 1, 0, 1], 1.0, 0.0), ([0, 0, 0, 1, 1, 1], 0.7, 0.3), ([1, 0, 0, 1, 0], -1.3, 0.0)]
)
def test_xx_magnetization_matches_dense_expm(states, J, h):
    L = len(states)
    H = references.sparse_hamiltonian(models.heisenberg_opsum(L, J, 0.0, h), L).toarray()
    psi = product_vector([np.eye(2)[s] for s in states])
    times = [0.0, 0.4, 1.7]
    sz = ed_evolve(H, psi, times, [site_op(0.5 * PAULI["Z"], i, L) for i in range(L)])
    assert np.allclose(references.xx_magnetization(states, times, J), sz, atol=1e-12)
    assert references.xx_magnetization(states, 0.4, J).shape == (L,)
    if states == [0, 1, 0, 1, 0, 1]:
        m = references.xx_neel_magnetization(L, times, J)
        assert m[0] == pytest.approx(0.5, abs=1e-15) and np.allclose(m, sz @ ((-1.0) ** np.arange(L)) / L, atol=1e-12)


def test_xx_magnetization_rejects_bad_states():
    with pytest.raises(t4a.InvalidOptionError, match="basis indices 0"):
        references.xx_magnetization([0, 2], [0.0])
    with pytest.raises(t4a.InvalidOptionError, match="finite"):
        references.xx_magnetization([0, 1], [np.nan])


@pytest.mark.parametrize("states,t", [([1, 2, 1, 2], 1.0), ([3, 3, 0, 1], 0.7), ([0, 3, 2, 1], -1.2)])
def test_hubbard_free_densities_match_the_jordan_wigner_expm(states, t):
    """U = 0, any mu: each spin hops freely; against expm of the explicit Fock-space Hamiltonian."""
    L, times = len(states), [0.0, 0.3, 1.1]
    H = exact_hubbard(L, t, 0.0, 0.4)
    ops = [electron_op(t4a.local_space("electron").matrix(op), i, L) for op in ("Nup", "Ndn") for i in range(L)]
    exact = ed_evolve(H, basis_vector(states), times, ops)
    up, dn = references.hubbard_free_densities(states, times, t)
    assert np.allclose(up, exact[:, :L], atol=1e-12) and np.allclose(dn, exact[:, L:], atol=1e-12)
    assert references.hubbard_free_densities(states, 0.3, t)[0].shape == (L,)
    with pytest.raises(t4a.InvalidOptionError, match="basis indices 0"):
        references.hubbard_free_densities([0, 4], [0.0])
    with pytest.raises(t4a.InvalidOptionError, match="finite"):
        references.hubbard_free_densities([0, 1], [np.inf])


def test_models_xx_is_heisenberg_with_jz_zero():
    psi = t4a.MPS.random(6, 2, bond_dim=4, seed=3)
    for conserve in (None, "Sz"):
        H = models.xx(6, J=0.8, h=0.2, conserve=conserve)
        ref = models.heisenberg(6, J=0.8, Jz=0.0, h=0.2)
        assert float(np.asarray(t4a.expectation(psi, H))) == pytest.approx(
            float(np.asarray(t4a.expectation(psi, ref))), abs=1e-13
        )


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


# ---- end to end --------------------------------------------------------------------------------
def _table_rows(stdout: str) -> list[list[float]]:
    return [
        [float(x) for x in line.split()]
        for line in stdout.splitlines()
        if re.match(r"^\s+\d[\d.e+-]*\s+-?\d+\.\d{10}\s", line)
    ]


# cutoff 1e-12: at the default 1e-10 the discarded weight alone moves <Sz_i> by about 1e-6 here
XX_RUNS = [
    pytest.param("tdvp", [], id="tdvp-Sz"),
    pytest.param("tdvp", ["--conserve", "none"], id="tdvp-dense"),
    pytest.param("tebd", ["--order", "4"], id="tebd4-Sz"),
    pytest.param("tebd", ["--order", "4", "--conserve", "none"], id="tebd4-dense"),
]


@pytest.mark.parametrize("method,extra", XX_RUNS)
def test_xx_neel_matches_free_fermions(tmp_path, method, extra):
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "xx",
        "--L",
        "10",
        "--state",
        "neel",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["schema"] == "tensor4all.evolve/2" and doc["parameters"]["method"] == method
    assert doc["parameters"]["conserve"] == (None if "none" in extra else "Sz")
    times = np.array(doc["times"])
    assert np.allclose(times, 0.05 * np.arange(21), atol=1e-12)
    exact = references.xx_magnetization([i % 2 for i in range(10)], times)
    sz = np.array(doc["observables"]["Sz"])
    assert sz.shape == (21, 10)
    assert np.max(np.abs(sz - exact)) < 1e-6
    assert np.allclose(doc["reference"]["Sz"], exact, atol=1e-14)
    stag = np.array(doc["summaries"]["Sz"]["staggered"])
    assert np.allclose(stag, references.xx_neel_magnetization(10, times), atol=1e-6)
    assert max(doc["reference"]["error"]) < 1e-6
    # the energy of the Neel state is 0 and conserved; the norm stays 1
    assert np.max(np.abs(doc["observables"]["energy"])) < 1e-6
    assert np.max(np.abs(np.array(doc["observables"]["norm"]) - 1)) < 1e-6
    assert len(doc["history"]) == 20 and doc["history"][-1]["time"] == pytest.approx(1.0)
    # the table: one row per output time, the exact column and its error as in the JSON
    rows = _table_rows(proc.stdout)
    assert len(rows) == 21
    assert [r[0] for r in rows] == pytest.approx(times, abs=1e-9)
    assert [r[-2] for r in rows] == pytest.approx(references.xx_neel_magnetization(10, times), abs=1e-6)
    assert max(r[-1] for r in rows) < 1e-6
    assert re.search(r"^exact\s+max \|<Sz_i> - exact\| = ", proc.stdout, flags=re.MULTILINE)
    assert proc.stderr == ""  # no terminal: no progress bar


# TEBD order 4 is within 1.0e-7 of the exact <Sz_i>, <Ntot_i>; two-site TDVP has the time step
# error of its integrator, larger than for the XX chain (1.5e-7 there): 3.8e-5, 4.6e-6, 4.0e-7
# at dt = 0.1, 0.05, 0.025 (of order dt^3 while the bonds grow from the product state)
HUBBARD_RUNS = [
    pytest.param("tdvp", [], 1e-5, id="tdvp-NSz"),
    pytest.param("tebd", ["--order", "4", "--conserve", "N"], 1e-6, id="tebd4-N"),
    pytest.param("tebd", ["--order", "4", "--conserve", "none"], 1e-6, id="tebd4-dense"),
]


@pytest.mark.parametrize("method,extra,bound", HUBBARD_RUNS)
def test_hubbard_neel_at_U_zero_matches_free_fermions(tmp_path, method, extra, bound):
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "6",
        "--U",
        "0",
        "--state",
        "neel",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    p = doc["parameters"]
    assert (p["model"], p["t"], p["U"], p["mu"], p["observe"]) == ("hubbard", 1.0, 0.0, 0.0, ["Ntot", "Sz"])
    assert "J" not in p  # hubbard's hopping is t
    conserve = None if "none" in extra else "N" if "N" in extra else "N,Sz"
    assert p["conserve"] == conserve
    assert doc["final"]["sector"] == {None: {}, "N": {"N": 6.0}, "N,Sz": {"N": 6.0, "Sz": 0.0}}[conserve]
    times = np.array(doc["times"])
    up, dn = references.hubbard_free_densities([1, 2] * 3, times, 1.0)
    for op, exact in (("Ntot", up + dn), ("Sz", 0.5 * (up - dn))):
        assert np.max(np.abs(np.array(doc["observables"][op]) - exact)) < bound
        assert np.allclose(doc["reference"][op], exact, atol=1e-14)
    assert doc["reference"]["source"].endswith("references.hubbard_free_densities")
    assert max(doc["reference"]["error"]) < bound
    assert abs(doc["reference"]["staggered"][-1] - np.mean(0.5 * (up - dn)[-1] * (-1.0) ** np.arange(6))) < 1e-14
    assert np.max(np.abs(doc["observables"]["energy"])) < 1e-6  # <H> = 0 for the Neel state at U = 0
    rows = _table_rows(proc.stdout)
    assert len(rows) == 21 and max(r[-1] for r in rows) < bound
    assert "exact: free fermions (Jordan-Wigner, each spin)" in proc.stdout
    assert re.search(r"^exact\s+max \|<Sz/Ntot_i> - exact\| = ", proc.stdout, flags=re.MULTILINE)


# TDVP from a product state has a projection error while the bonds grow, O(dt^2): ~5e-5 here
@pytest.mark.parametrize("method,extra,bound", [("tebd", ["--order", "4"], 1e-6), ("tdvp", [], 2e-4)])
def test_hubbard_at_U_4_matches_exact_diagonalization(tmp_path, method, extra, bound):
    L, states, times = 4, [3, 1, 0, 2], np.linspace(0, 1, 5)
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "4",
        "--mu",
        "0.3",
        "--state",
        "product:2u0d",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--every",
        "5",
        "--observe",
        "Ntot,Sz,Nupdn",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["reference"] is None and np.allclose(doc["times"], times)
    sp = t4a.local_space("electron")
    names = ("Ntot", "Sz", "Nupdn")
    H = exact_hubbard(L, 1.0, 4.0, 0.3)
    exact = ed_evolve(
        H, basis_vector(states), times, [electron_op(sp.matrix(op), i, L) for op in names for i in range(L)]
    )
    for k, op in enumerate(names):
        assert np.max(np.abs(np.array(doc["observables"][op]) - exact[:, k * L : (k + 1) * L])) < bound, op
    e0 = np.real(np.vdot(basis_vector(states), H @ basis_vector(states)))
    assert np.allclose(doc["observables"]["energy"], e0, atol=1e-8)
    assert doc["final"]["sector"] == {"N": 4.0, "Sz": 0.0}


def test_hubbard_quench_of_U_from_the_ground_state(tmp_path):
    """Half-filled ground state at U = 2 (DMRG, N = 4) evolved with U = 6: the double occupancy
    against expm of the Fock-space Hamiltonian from the exact ground state of the sector."""
    L, times = 4, np.linspace(0, 1, 5)
    n = np.array([sum((0, 1, 1, 2)[b // 4 ** (L - 1 - i) % 4] for i in range(L)) for b in range(4**L)])
    sel = np.flatnonzero(n == L)
    H0, H1 = exact_hubbard(L, 1.0, 2.0, 0.0), exact_hubbard(L, 1.0, 6.0, 0.0)
    e, v = np.linalg.eigh(H0[np.ix_(sel, sel)])
    psi0 = np.zeros(4**L)
    psi0[sel] = v[:, 0]
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "2",
        "--state",
        "ground",
        "--quench-U",
        "6",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--every",
        "5",
        "--observe",
        "Nupdn,Ntot",
        "--method",
        "tebd",
        "--order",
        "4",
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["parameters"]["quench"] == {"t": 1.0, "U": 6.0, "mu": 0.0} and doc["parameters"]["U"] == 2.0
    assert doc["parameters"]["conserve"] == "N,Sz" and doc["parameters"]["sector"] == {"N": 4.0, "Sz": 0.0}
    assert doc["ground_state"]["energy"] == pytest.approx(e[0], abs=1e-9)
    sp = t4a.local_space("electron")
    d = ed_evolve(H1, psi0, times, [electron_op(sp.matrix("Nupdn"), i, L) for i in range(L)])
    assert np.ptp(d) > 0.05  # the quench moves the double occupancy
    assert np.max(np.abs(np.array(doc["observables"]["Nupdn"]) - d)) < 1e-6
    assert np.max(np.abs(np.array(doc["observables"]["Ntot"]) - 1.0)) < 1e-6  # half filling, particle-hole
    assert np.allclose(doc["observables"]["energy"], np.vdot(psi0, H1 @ psi0), atol=1e-7)
    assert "state ground: DMRG ground state of hubbard L=4 t=1 U=2 mu=0" in proc.stdout
    assert "symmetry U(1) x U(1) N,Sz, sector N = 4, Sz = 0" in proc.stdout


def test_tebd_order_2_has_its_trotter_error(tmp_path):
    # Strang splitting at dt = 0.05: an error of order dt^2 (about 2e-5 here), far above order 4's
    path = tmp_path / "o2.json"
    proc = run_cli(
        "evolve",
        "--L",
        "10",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        "tebd",
        "--cutoff",
        "1e-12",
        "--every",
        "10",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["parameters"]["order"] == 2 and doc["parameters"]["two_site"] is None
    assert 1e-6 < max(doc["reference"]["error"]) < 1e-4
    assert "TEBD order 2" in proc.stdout


def test_tfim_quench_from_the_ground_state_matches_dense_expm(tmp_path):
    # ground state of g = 0.5 (exact diagonalization), evolved with g = 1.5: <X_i>, <Z_i> in
    # the model's basis, whether the run conserves the parity (rotated basis) or not
    L, times = 6, np.linspace(0, 1, 6)
    H0 = references.sparse_hamiltonian(models.tfim_opsum(L, 1.0, 0.5), L, "pauli").toarray()
    H1 = references.sparse_hamiltonian(models.tfim_opsum(L, 1.0, 1.5), L, "pauli").toarray()
    psi0 = np.linalg.eigh(H0)[1][:, 0]
    X = ed_evolve(H1, psi0, times, [site_op(PAULI["X"], i, L) for i in range(L)])
    for conserve in ("auto", "none"):
        path = tmp_path / f"{conserve}.json"
        proc = run_cli(
            "evolve",
            "--model",
            "tfim",
            "--L",
            str(L),
            "--g",
            "0.5",
            "--state",
            "ground",
            "--quench-g",
            "1.5",
            "--t-final",
            "1",
            "--dt",
            "0.05",
            "--every",
            "4",
            "--observe",
            "X,Z",
            "--conserve",
            conserve,
            "--json",
            str(path),
            "--quiet",
        )
        assert proc.returncode == 0, proc.stderr
        doc = strict_json(path)
        assert doc["parameters"]["conserve"] == ("parity" if conserve == "auto" else None)
        assert doc["parameters"]["quench"] == {"J": 1.0, "g": 1.5} and doc["parameters"]["g"] == 0.5
        assert doc["ground_state"]["energy"] == pytest.approx(np.linalg.eigvalsh(H0)[0], abs=1e-9)
        assert np.allclose(doc["times"], times)
        assert np.max(np.abs(np.array(doc["observables"]["X"]) - X)) < 1e-6
        # <Z_i> is 0 by the parity; the energy of the quenched Hamiltonian is conserved
        assert np.max(np.abs(doc["observables"]["Z"])) < 1e-6
        e1 = np.real(np.vdot(psi0, H1 @ psi0))
        assert np.allclose(doc["observables"]["energy"], e1, atol=1e-6)
        assert "|norm-1|" not in proc.stdout and _table_rows(proc.stdout) == []  # --quiet: summary only


def test_imaginary_time_reaches_the_tfim_ground_energy(tmp_path):
    path = tmp_path / "im.json"
    proc = run_cli(
        "evolve",
        "--model",
        "tfim",
        "--L",
        "8",
        "--g",
        "1.5",
        "--state",
        "product:++++++++",
        "--imaginary",
        "--t-final",
        "6",
        "--dt",
        "0.1",
        "--every",
        "10",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    e = np.array(doc["observables"]["energy"])
    assert np.all(np.diff(e) < 1e-9)  # the energy decreases in imaginary time
    assert e[-1] == pytest.approx(references.tfim_ground_energy(8, 1.0, 1.5), abs=1e-6)
    assert doc["reference"] is None and "exact  " not in proc.stdout


def test_save_json_plot_files(tmp_path):
    js, npz, png = tmp_path / "r.json", tmp_path / "psi.npz", tmp_path / "fig.png"
    args = [
        "evolve",
        "--L",
        "8",
        "--state",
        "domain-wall",
        "--t-final",
        "0.5",
        "--dt",
        "0.05",
        "--every",
        "3",
        "--json",
        str(js),
        "--save",
        str(npz),
    ]
    have_mpl = True
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        have_mpl = False
    if have_mpl:
        args += ["--plot", str(png)]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(js)
    # every 3rd of the 10 steps, and the final time
    assert doc["times"] == pytest.approx([0, 0.15, 0.3, 0.45, 0.5]) and len(_table_rows(proc.stdout)) == 5
    psi = t4a.MPS.load(npz)
    assert psi.L == 8 and psi.bond_dims == doc["final"]["bond_dims"]
    sz = [float(np.real(complex(np.asarray(psi.expect("Sz", i))))) for i in range(8)]
    assert sz == pytest.approx(doc["observables"]["Sz"][-1], abs=1e-10)
    assert sz == pytest.approx(references.xx_magnetization([0] * 4 + [1] * 4, 0.5), abs=1e-5)  # cutoff 1e-10
    assert psi.entanglement_entropy() == pytest.approx(doc["final"]["entanglement_entropy"], abs=1e-10)
    assert set(doc) >= {
        "schema",
        "program",
        "parameters",
        "times",
        "observables",
        "summaries",
        "reference",
        "history",
        "final",
        "timing",
    }
    assert doc["program"]["argv"][0] == "evolve"
    written = f"save {npz}, json {js}" + (f", plot {png}" if have_mpl else "")
    assert f"wrote       {written}" in proc.stdout
    if have_mpl:
        import matplotlib.image as mpimg

        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        img = mpimg.imread(png)
        assert img.shape[1] >= 1200 and img[..., :3].std() > 0.05


def test_json_dash_writes_only_the_document_to_stdout(tmp_path):
    proc = run_cli("evolve", "--L", "6", "--t-final", "0.2", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "tensor4all.evolve/2" and len(doc["times"]) == 5
    assert "EVOLVE  xx L=6" in proc.stderr and "wrote       json (standard output)" in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_progress_bar_on_a_terminal():
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensor4all", "evolve", "--L", "8", "--t-final", "1", "--every", "5"],
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    assert proc.wait(timeout=300) == 0
    os.close(master)
    tty = b"".join(chunks).decode(errors="replace")
    assert "tdvp:" in tty and "/20 [" in tty and re.search(r"t=[\d.]+ chi=\d+", tty)
    assert len(_table_rows(out)) == 5 and "time" not in tty.split("tdvp:")[0]
