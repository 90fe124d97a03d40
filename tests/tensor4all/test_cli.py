"""The command-line program, run as a subprocess (``python -m tensor4all ...``), as a user runs it.

Energies are checked against references computed here independently of the program
(exact diagonalization from ``conftest.sparse_hamiltonian``, the TFIM closed form at
g = J = 1, the tabulated L = 32 Heisenberg energy of issue 13).
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.cli import main
from tensor4all import models

from .conftest import ground_energy

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: the library's table value for the open Heisenberg chain L = 32: the Bethe ansatz ground energy
#: -13.997315618224327 to 13 decimals (conftest.heisenberg_bethe_energy, checked in test_dmrg.py;
#: an independent TeNPy DMRG at chi 200 gives -13.99731561822433)
E_HEISENBERG_32 = -13.9973156182243


def run_cli(
    *args: str,
    env: dict | None = None,
    cwd: pathlib.Path | None = None,
    timeout: float = 300,
    python_args: tuple[str, ...] = ("-m", "tensor4all"),
) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, *python_args, *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=timeout,
    )


def strict_json(path: pathlib.Path) -> dict:
    def no_constants(name: str):
        raise AssertionError(f"non-standard JSON constant {name} in {path}")

    return json.loads(path.read_text(), parse_constant=no_constants)


HISTORY_KEYS = {
    "sweep": int,
    "energy": float,
    "delta_energy": (float, type(None)),
    "max_bond": int,
    "max_truncation_error": float,
    "matvecs": int,
    "seconds": float,
    "peak_memory": int,
    "env_memory": int,
    "max_bond_limit": int,
    "cutoff": float,
    "noise": float,
    "blocks": (int, type(None)),
    "exact_solves": int,
}


def check_schema(doc: dict, L: int) -> None:
    """The JSON schema documented in the README ("Run a simulation")."""
    assert doc["schema"] == "tensor4all.dmrg/1"
    assert set(doc) == {
        "schema",
        "program",
        "parameters",
        "basis",
        "energy",
        "energy_per_site",
        "variance",
        "converged",
        "sector",
        "sweeps_run",
        "reference",
        "history",
        "bond_dims",
        "entanglement_entropy",
        "timing",
    }
    assert set(doc["program"]) == {"name", "version", "argv", "started", "python", "numpy"}
    p = doc["parameters"]
    common = {
        "model",
        "L",
        "J",
        "chi",
        "sweeps",
        "cutoff",
        "tol",
        "two_site",
        "noise",
        "seed",
        "dtype",
        "threads",
        "blas_threads",
        "conserve",
        "sector",
    }
    extra = {"g"} if p["model"] == "tfim" else {"Jz", "h", "spin"}
    assert set(p) == common | extra
    assert p["L"] == L
    assert isinstance(doc["energy"], float) and isinstance(doc["variance"], float)
    assert doc["energy_per_site"] == pytest.approx(doc["energy"] / L, rel=1e-14)
    assert isinstance(doc["converged"], bool)
    hist = doc["history"]
    assert len(hist) == doc["sweeps_run"] >= 1
    for k, rec in enumerate(hist, start=1):
        assert set(rec) == set(HISTORY_KEYS)
        for key, typ in HISTORY_KEYS.items():
            assert isinstance(rec[key], typ), (key, rec[key])
        assert rec["sweep"] == k
        assert rec["max_bond"] <= rec["max_bond_limit"]
    assert hist[0]["delta_energy"] is None  # nan in Python, null in JSON
    for prev, rec in zip(hist, hist[1:]):
        assert rec["delta_energy"] == pytest.approx(rec["energy"] - prev["energy"], abs=1e-12)
    assert hist[-1]["energy"] == doc["energy"]
    assert len(doc["bond_dims"]) == L - 1 and all(isinstance(b, int) and b >= 1 for b in doc["bond_dims"])
    assert max(doc["bond_dims"]) == hist[-1]["max_bond"]
    ent = doc["entanglement_entropy"]
    assert len(ent) == L - 1 and all(isinstance(s, float) and s >= -1e-12 for s in ent)
    t = doc["timing"]
    assert set(t) == {"setup_seconds", "dmrg_seconds", "sweep_seconds", "analysis_seconds", "total_seconds"}
    assert t["sweep_seconds"] == [r["seconds"] for r in hist]
    assert 0 < t["dmrg_seconds"] <= t["total_seconds"]
    ref = doc["reference"]
    if ref is not None:
        assert set(ref) == {"energy", "source", "exact", "error"}
        assert ref["error"] == pytest.approx(abs(doc["energy"] - ref["energy"]), abs=1e-15)


def summary_value(stdout: str, label: str) -> float:
    m = re.search(rf"^{label}\s+(\S+)", stdout, flags=re.M)
    assert m, f"no '{label}' line in:\n{stdout}"
    return float(m.group(1))


# ---- the default run ---------------------------------------------------------------------
def test_default_run_heisenberg_32_chi_64():
    proc = run_cli("dmrg")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "heisenberg L=32" in out and "chi 64" in out
    # the default model conserves Sz (--conserve auto): the table has a column of sectors at the middle bond
    assert "symmetry U(1) Sz, sector Sz = 0" in out
    header = re.search(r"^sweep\s+energy\s+dE\s+max bond\s+max trunc err\s+seconds\s+blocks$", out, flags=re.M)
    assert header, out
    rows = re.findall(r"^\s+(\d+)\s+(-\d+\.\d+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\d+\.\d+)\s+(\d+)$", out, flags=re.M)
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 2
    assert rows[0][2] == "-"  # no dE for the first sweep
    # the cutoff 1e-10 (one default for dmrg, evolve and Python) keeps 48 states where 64 are allowed
    assert 40 <= max(int(r[3]) for r in rows) <= 64
    energy = summary_value(out, "energy")
    assert energy == pytest.approx(float(rows[-1][1]), abs=1e-11)
    # discarding a weight up to 1e-10 per bond over 31 bonds costs about 1e-8 in the energy (measured
    # 8.6e-9; with the former CLI default 1e-12, 2.4e-10)
    assert abs(energy - E_HEISENBERG_32) < 2e-8
    assert summary_value(out, "reference") == E_HEISENBERG_32
    assert summary_value(out, "error") == pytest.approx(abs(energy - E_HEISENBERG_32), rel=1e-2, abs=1e-13)
    assert 0 <= summary_value(out, "variance") < 1e-7
    assert "converged   yes" in out
    # stderr is a pipe here, not a terminal: no progress bar and nothing else
    assert proc.stderr == ""


def test_old_spellings_warn_and_unknown_options_get_a_suggestion(capsys):
    """``--chi`` is the deprecated spelling of ``--max-bond`` (a warning, the same run); options are
    never abbreviated, and an unknown one is named with the closest known option (in-process:
    ``tensor4all.cli.main``)."""
    assert main(["dmrg", "--L", "6", "--max-bond", "8", "--quiet"]) == 0
    new = capsys.readouterr()
    assert main(["dmrg", "--L", "6", "--chi", "8", "--quiet"]) == 0
    old = capsys.readouterr()
    assert "warning: --chi is deprecated, use --max-bond (same meaning)" in old.err and new.err == ""
    assert summary_value(old.out, "energy") == summary_value(new.out, "energy")
    for argv, hint in (
        (["dmrg", "--cutof", "1e-8"], "unrecognized arguments: --cutof (did you mean --cutoff?)"),
        (["dmrg", "--max-bon", "8"], "(did you mean --max-bond?)"),
        (["evolve", "--tfinal", "1"], "(did you mean --t-final?)"),
        (["scan", "--model", "tfim", "--worker", "2"], "(did you mean --workers?)"),
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and hint in err, (argv, err)


def test_quiet_prints_only_the_summary():
    proc = run_cli("dmrg", "--L", "8", "--max-bond", "16", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "max trunc err" not in proc.stdout
    assert abs(summary_value(proc.stdout, "energy") - ground_energy(models.heisenberg_opsum(8), 8)) < 1e-9
    assert proc.stderr == ""


def _run_with_terminal_stderr(*args: str) -> tuple[int, str, str]:
    """Run the program with stderr on a pseudo-terminal of 120 columns; returns (rc, stdout, tty text)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensor4all", *args], stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    rc = proc.wait(timeout=300)
    os.close(master)
    return rc, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_progress_bar_on_a_terminal_and_not_with_quiet():
    rc, out, tty = _run_with_terminal_stderr("dmrg", "--L", "24", "--max-bond", "16", "--sweeps", "3")
    assert rc == 0, tty
    # one bar per sweep across its 2 (L - 1) = 46 two-site updates, energy and bond dimension in the postfix
    for sweep in (1, 2, 3):
        assert f"sweep {sweep}:" in tty
    assert "/46 [" in tty and "bond/s" in tty
    assert re.search(r"E=-\d+\.\d{10} chi=\d+", tty)
    assert "max trunc err" in out and "max trunc err" not in tty  # the table goes to stdout
    rc, out, tty = _run_with_terminal_stderr("dmrg", "--L", "24", "--max-bond", "16", "--sweeps", "3", "--quiet")
    assert rc == 0 and "sweep 1:" not in tty and "bond/s" not in tty
    assert "max trunc err" not in out and "energy" in out


def test_closed_stdout_stops_quietly():
    # as in 'tensor4all dmrg | head -2': the reader goes away after the first lines
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensor4all", "dmrg", "--L", "16", "--max-bond", "16"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    rc = proc.wait(timeout=300)
    err = proc.stderr.read().decode()
    assert first.startswith(b"DMRG  heisenberg L=16")
    assert rc == 141 and "Traceback" not in err and "Broken pipe" not in err, err


# ---- every model, with --json --------------------------------------------------------------
def _ed(os_, L, local="spin-1/2"):
    return ground_energy(os_, L, local)


MODEL_CASES = [
    (
        "heisenberg-ED",
        ["--model", "heisenberg", "--L", "10", "--max-bond", "32"],
        10,
        lambda: _ed(models.heisenberg_opsum(10), 10),
        True,
    ),
    (
        "xxz-field-ED",
        ["--model", "xxz", "--L", "10", "--Jz", "0.5", "--h", "0.3", "--max-bond", "32"],
        10,
        lambda: _ed(models.heisenberg_opsum(10, 1.0, 0.5, 0.3), 10),
        True,
    ),
    (
        "tfim-g0.6-ED",
        ["--model", "tfim", "--L", "10", "--g", "0.6", "--J", "1.0"],
        10,
        lambda: _ed(models.tfim_opsum(10, 1.0, 0.6), 10, "pauli"),
        True,
    ),
    (
        "tfim-critical-closed-form",
        ["--model", "tfim", "--L", "24"],
        24,
        lambda: 1.0 - 1.0 / math.sin(math.pi / (2 * (2 * 24 + 1))),
        True,
    ),
    (
        "spin1-ED-one-site",
        ["--spin", "1", "--L", "6", "--max-bond", "27", "--one-site", "--sweeps", "12"],
        6,
        lambda: _ed(models.heisenberg_opsum(6), 6, "spin-1"),
        True,
    ),
    (
        "complex-dtype",
        ["--model", "xxz", "--L", "8", "--Jz", "2.0", "--max-bond", "16", "--dtype", "complex128"],
        8,
        lambda: _ed(models.heisenberg_opsum(8, 1.0, 2.0), 8),
        True,
    ),
]


@pytest.mark.parametrize("name,args,L,exact,has_ref", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_models_json_against_exact(tmp_path, name, args, L, exact, has_ref):
    path = tmp_path / "run.json"
    proc = run_cli("dmrg", *args, "--json", str(path))
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    check_schema(doc, L)
    e_exact = exact()
    assert abs(doc["energy"] - e_exact) < 1e-8, (doc["energy"], e_exact)
    assert doc["variance"] < 1e-6
    assert doc["reference"] is not None and doc["reference"]["exact"] is True
    assert abs(doc["reference"]["energy"] - e_exact) < 1e-10
    assert summary_value(proc.stdout, "energy") == pytest.approx(doc["energy"], abs=1e-13)
    # the parameters record what was asked for (model flags appear in the parameters)
    flags = dict(zip(args[::2], args[1::2]))
    if "--model" in flags:
        assert doc["parameters"]["model"] == flags["--model"]
    if "--dtype" in flags:
        assert doc["parameters"]["dtype"] == flags["--dtype"]
    if "--one-site" in args:
        assert doc["parameters"]["two_site"] is False and doc["parameters"]["noise"] == 1e-4
    assert doc["program"]["argv"][:1] == ["dmrg"]


def test_json_of_the_default_model_records_the_tabulated_reference(tmp_path):
    path = tmp_path / "r.json"
    proc = run_cli("dmrg", "--quiet", "--json", str(path), "--sweeps", "6", "--cutoff", "1e-10,1e-12")
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    check_schema(doc, 32)
    assert doc["reference"]["energy"] == E_HEISENBERG_32 and doc["reference"]["exact"] is False
    assert doc["parameters"]["cutoff"] == [1e-10, 1e-12]
    assert [r["cutoff"] for r in doc["history"]][:2] == [1e-10, 1e-12]
    assert abs(doc["energy"] - E_HEISENBERG_32) < 1e-8
    # the entanglement profile is symmetric for this reflection-symmetric chain and peaks in the middle
    ent = np.array(doc["entanglement_entropy"])
    assert np.allclose(ent, ent[::-1], atol=1e-4) and ent.argmax() in (14, 15, 16)


def test_chi_schedule_is_followed(tmp_path):
    path = tmp_path / "s.json"
    proc = run_cli("dmrg", "--L", "20", "--max-bond", "4,8,16", "--sweeps", "5", "--tol", "0", "--json", str(path))
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert [r["max_bond_limit"] for r in doc["history"]] == [4, 8, 16, 16, 16]
    assert [r["max_bond"] for r in doc["history"]][:2] == [4, 8]
    assert doc["sweeps_run"] == 5 and doc["converged"] is False
    assert "converged   no" in proc.stdout


# ---- --plot ------------------------------------------------------------------------------
def test_plot_png_is_written_and_decodes(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image", reason="the 'plot' extra (matplotlib) is part of the test extras")
    path = tmp_path / "conv.png"
    proc = run_cli("dmrg", "--model", "tfim", "--L", "16", "--max-bond", "16", "--plot", str(path), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert f"plot {path}" in proc.stdout
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 20_000  # two panels with curves, text and ticks
    img = mpimg.imread(path)
    assert img.shape[0] >= 300 and img.shape[1] >= 800
    rgb = img[..., :3]
    assert rgb.std() > 0.05  # not a blank canvas
    # the curves are drawn in matplotlib's C0 (blue) and C1 (orange)
    blue = np.all(np.abs(rgb - np.array([0.122, 0.467, 0.706])) < 0.05, axis=-1).sum()
    orange = np.all(np.abs(rgb - np.array([1.0, 0.498, 0.055])) < 0.05, axis=-1).sum()
    assert blue > 50 and orange > 50


# ---- --save ------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".npz", ".arrow"])
def test_save_and_load_back(tmp_path, ext):
    if ext == ".arrow":
        pytest.importorskip("pyarrow", reason="the 'arrow' extra is part of the test extras")
    path = tmp_path / f"psi{ext}"
    js = tmp_path / "r.json"
    proc = run_cli(
        "dmrg",
        "--model",
        "xxz",
        "--L",
        "12",
        "--Jz",
        "0.7",
        "--max-bond",
        "24",
        "--quiet",
        "--save",
        str(path),
        "--json",
        str(js),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(js)
    psi = t4a.MPS.load(path)
    assert psi.L == 12 and psi.bond_dims == doc["bond_dims"]
    H = models.xxz(12, Jz=0.7)
    e = float(np.asarray(t4a.expectation(psi, H)))
    assert e == pytest.approx(doc["energy"], abs=1e-10)
    assert float(np.asarray(psi.norm())) == pytest.approx(1.0, abs=1e-10)
    assert psi.entanglement_entropy() == pytest.approx(doc["entanglement_entropy"], abs=1e-10)


# ---- threads -----------------------------------------------------------------------------
def test_threads_limit_blas_during_the_run_and_restore_afterwards(tmp_path):
    # the run's BLAS thread count is read inside the sweep (callback); after main returns,
    # the caller's setting (here 3 threads, set by the caller) is back
    js = tmp_path / "a.json"
    code = (
        "import sys; from threadpoolctl import threadpool_info, threadpool_limits; "
        "import tensor4all.cli as cli, tensor4all.algorithms.dmrg as d; "
        "blas = lambda: sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}); "
        "threadpool_limits(3); seen = []; orig = d._run; "
        "d._run = lambda *a, **k: (seen.append(blas()), orig(*a, **k))[1]; "
        "rc = cli.main(sys.argv[1:]); print('DURING', seen[0], 'AFTER', blas()); sys.exit(rc)"
    )
    for option, during in ((("--threads", "2"), "[2]"), ((), "[1]"), (("--threads", "0"), "[3]")):
        proc = run_cli(
            "dmrg", "--L", "6", "--max-bond", "8", "--quiet", *option, "--json", str(js), python_args=("-c", code)
        )
        assert proc.returncode == 0, proc.stderr
        # every BLAS library loaded (NumPy's and SciPy's) is limited, and restored
        assert f"DURING {during} AFTER [3]" in proc.stdout, (option, proc.stdout)
        params = strict_json(js)["parameters"]
        assert params["blas_threads"] == {"[2]": 2, "[1]": 1, "[3]": None}[during]
        assert params["threads"] == (int(option[1]) if option else None)


# ---- help and bad arguments ------------------------------------------------------------------
def test_help_explains_every_option_with_its_default():
    top = run_cli("--help")
    assert top.returncode == 0 and "dmrg" in top.stdout and "ground state" in top.stdout
    proc = run_cli("dmrg", "--help")
    assert proc.returncode == 0
    text = proc.stdout
    from tensor4all.cli import build_parser

    sub = build_parser().commands["dmrg"]
    options = [a for a in sub._actions if a.option_strings and a.dest != "help"]
    assert len(options) >= 20
    for action in options:
        assert action.help and "default" in action.help.lower(), action.option_strings
        for opt in action.option_strings:
            assert re.search(rf"(^|\s|\[){re.escape(opt)}\b", text), opt
    for name in (
        "--model",
        "--L",
        "--J",
        "--Jz",
        "--g",
        "--h",
        "--spin",
        "--max-bond",
        "--sweeps",
        "--cutoff",
        "--tol",
        "--two-site",
        "--one-site",
        "--seed",
        "--dtype",
        "--threads",
        "--json",
        "--plot",
        "--save",
        "--quiet",
    ):
        assert name in text
    assert "(default: 64)" in text and "(default: 32)" in text and "Default: heisenberg" in text


BAD = [
    (["dmrg", "--max-bond", "0"], ["--max-bond", "positive integers", "16,32,64"]),
    (["dmrg", "--max-bond", "16,x"], ["--max-bond", "positive integers"]),
    (["dmrg", "--model", "foo"], ["--model", "invalid choice", "'heisenberg', 'xxz', 'tfim'"]),
    (["dmrg", "--L", "1"], ["--L", "at least 2 sites"]),
    (["dmrg", "--L", "ten"], ["--L", "invalid integer"]),
    (["dmrg", "--dtype", "float16"], ["--dtype", "'float64', 'complex128'"]),
    (["dmrg", "--spin", "3/2"], ["--spin", "'1/2', '1'"]),
    (["dmrg", "--g", "0.5"], ["--g", "belongs to tfim"]),
    (["dmrg", "--model", "tfim", "--Jz", "2"], ["--Jz", "heisenberg, xxz", "tfim takes --L, --J, --g"]),
    (["dmrg", "--cutoff", "-1"], ["--cutoff", "non-negative"]),
    (["dmrg", "--J", "nan"], ["--J", "finite"]),
    (["dmrg", "--sweeps", "0"], ["--sweeps", "at least 1"]),
    (["dmrg", "--max-bond", "8,16,32", "--sweeps", "2"], ["--sweeps", "3-entry --max-bond schedule"]),
    (["dmrg", "--noise", "1e-3"], ["--noise", "--one-site"]),
    (["dmrg", "--two-site", "--one-site"], ["--one-site", "not allowed with argument --two-site"]),
    (["dmrg", "--save", "psi.txt"], ["--save", ".arrow, .parquet, .npz"]),
    (["dmrg", "--plot", "fig.jpg"], ["--plot", ".png, .pdf, .svg"]),
    (["dmrg", "--json", "/no/such/dir/r.json"], ["--json", "does not exist"]),
    (["dmrg", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["simulate"], ["invalid choice", "'dmrg'"]),
    ([], ["a command is required", "valid commands: dmrg"]),
]


@pytest.mark.parametrize("args,needles", BAD, ids=[" ".join(a) or "(none)" for a, _ in BAD])
def test_bad_arguments_exit_2_with_a_message(args, needles):
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert "usage: tensor4all" in proc.stderr and "error:" in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


@pytest.mark.parametrize(
    "module,args,needles",
    [
        ("matplotlib", ["--plot", "fig.png"], ["--plot", "matplotlib is not installed", "tidu-tenferro[plot]"]),
        ("pyarrow", ["--save", "psi.arrow"], ["--save", "pyarrow", "tidu-tenferro[arrow]", ".npz"]),
    ],
)
def test_missing_optional_dependency_exits_2_naming_the_extra(tmp_path, module, args, needles):
    code = "import sys; sys.modules[%r] = None; from tensor4all.cli import main; sys.exit(main(sys.argv[1:]))" % module
    proc = run_cli("dmrg", *args, python_args=("-c", code), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    for needle in needles:
        assert needle in proc.stderr
    assert not (tmp_path / args[1]).exists()


# ---- packaging -----------------------------------------------------------------------------
def test_console_script_is_declared_and_runs(tmp_path):
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^\[project\.scripts\]\ntensor4all = "tensor4all\.cli:main"$', text, flags=re.M)
    deps = re.search(r"^dependencies = \[(.*?)\]", text, flags=re.M | re.S).group(1)
    assert '"tqdm' in deps  # the progress bar of the main job is a runtime dependency
    assert re.search(r'^plot = \["matplotlib>=[0-9.]+"\]$', text, flags=re.M)  # the bound itself may move
    # the installed entry point (pip install -e . puts a 'tensor4all' script next to python)
    code = (
        "import sys; from importlib.metadata import entry_points; "
        "(ep,) = entry_points(group='console_scripts', name='tensor4all'); "
        "sys.exit(ep.load()(['dmrg', '--L', '6', '--max-bond', '8', '--quiet']))"
    )
    proc = run_cli(python_args=("-c", code), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert abs(summary_value(proc.stdout, "energy") - ground_energy(models.heisenberg_opsum(6), 6)) < 1e-10


def test_json_dash_writes_the_document_to_stdout_and_the_report_to_stderr(tmp_path):
    proc = run_cli(
        "dmrg", "--model", "tfim", "--L", "8", "--max-bond", "8", "--cutoff", "1e-12", "--json", "-", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # stdout is exactly one JSON document
    assert doc["schema"] == "tensor4all.dmrg/1"
    assert doc["energy"] == pytest.approx(doc["reference"]["energy"], abs=1e-10)
    assert "energy " in proc.stderr and "wrote       json (standard output)" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # no file named '-'
