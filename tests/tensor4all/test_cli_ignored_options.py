"""Command-line options that were accepted and then ignored (exit 0, no effect): ``tensor4all
scan --states N`` and ``--device gpu`` (copied with dmrg's whole 'algorithm' group, never
passed to the scan's task) and ``tensor4all evolve --seed`` with a product ``--state`` (the
seed only starts the ground-state DMRG of ``--state ground``). Now each is a usage error
(exit 2) naming the reason; every other option scan copies from dmrg changes the task."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tensor4all import cli
from tensor4all.cli import scan as cli_scan
from tensor4all.scans.task import describe

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


def _run(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "tensor4all", *args], capture_output=True, text=True, cwd=cwd, timeout=120, env=ENV
    )


# ---- tensor4all scan ------------------------------------------------------------------------------
SCAN = ("scan", "--model", "tfim", "--L", "4", "--g", "0.5,1.0", "--max-bond", "4", "--sweeps", "2", "--quiet")


@pytest.mark.parametrize(
    "option, fragment",
    [
        (("--states", "3"), "argument --states: a scan computes the ground state of each point"),
        (("--device", "gpu"), "argument --device: a scan runs its points on the CPU workers"),
    ],
    ids=["states", "device"],
)
def test_scan_refuses_the_dmrg_options_it_does_not_run(option, fragment, tmp_path):
    r = _run(*SCAN, *option, "--workers", "1", "--out", "s.parquet", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert fragment in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing ran, no file


def test_scan_accepts_what_every_point_does_and_hides_the_options_from_help():
    parser = cli.build_parser()
    args = parser.parse_args([*SCAN, "--states", "1", "--device", "cpu"])
    assert not hasattr(args, "states") and not hasattr(args, "device")
    text = parser.commands["scan"].format_help()
    assert "--states" not in text and "--device" not in text and "--max-bond" in text
    with pytest.raises(SystemExit) as info:
        parser.parse_args([*SCAN, "--states", "0"])  # dmrg's own check of the value comes first
    assert info.value.code == 2


def _task(argv):
    """The ScanTask and the grid that ``tensor4all scan argv`` would run (nothing runs)."""
    parser = cli.build_parser()
    args = parser.parse_args(["scan", *argv])
    command = cli_scan._ScanCommand(parser.commands["scan"], args)
    command.note = None
    grid = command.grid()
    command.scanned = list(grid)
    conserve, sector = command.check(command.points(grid))
    return describe(command.task(conserve, sector)), grid


#: a value other than the default for every option scan copies from dmrg (each on a base
#: command line of a model that takes it), by destination
CHANGES = {
    "model": (("--model", "heisenberg", "--L", "4,6"), ("--model", "xxz", "--L", "4,6")),
    "L": (("--model", "tfim", "--g", "1,2", "--L", "4"), ("--model", "tfim", "--g", "1,2", "--L", "6")),
    "J": (("--model", "tfim", "--g", "1,2"), ("--model", "tfim", "--g", "1,2", "--J", "2")),
    "Jz": (("--model", "xxz", "--L", "4,6"), ("--model", "xxz", "--L", "4,6", "--Jz", "0.5")),
    "h": (("--model", "xxz", "--L", "4,6"), ("--model", "xxz", "--L", "4,6", "--h", "0.5")),
    "g": (("--model", "tfim", "--L", "4,6"), ("--model", "tfim", "--L", "4,6", "--g", "0.5")),
    "spin": (("--model", "xxz", "--L", "4,6"), ("--model", "xxz", "--L", "4,6", "--spin", "1")),
    "chi": ((), ("--max-bond", "8")),
    "sweeps": ((), ("--sweeps", "3")),
    "cutoff": ((), ("--cutoff", "1e-8")),
    "tol": ((), ("--tol", "1e-6")),
    "two_site": ((), ("--one-site",)),
    "noise": (("--one-site",), ("--one-site", "--noise", "1e-3")),
    "conserve": ((), ("--conserve", "none")),
    "sz": (("--model", "xxz", "--L", "4,6"), ("--model", "xxz", "--L", "4,6", "--sz", "1")),
    "parity": ((), ("--parity", "1")),
    "seed": ((), ("--seed", "3")),
    "dtype": (("--conserve", "none"), ("--conserve", "none", "--dtype", "complex128")),
    "threads": ((), ("--threads", "2")),
}
BASE = ("--model", "tfim", "--L", "4", "--g", "0.5,1.0")


def test_every_option_scan_copies_from_dmrg_changes_its_task_or_is_refused():
    parser = cli.build_parser().commands["scan"]
    copied = {
        a.dest
        for g in parser._action_groups
        if g.title in ("model", "algorithm")
        for a in g._group_actions
        if a.dest != "help"
    }
    assert copied == set(CHANGES) | set(cli_scan.NOT_IN_SCAN)  # a new dmrg option: decide here
    for dest, (base, changed) in CHANGES.items():
        head = () if "--model" in base or "--model" in changed else BASE
        assert _task([*head, *base]) != _task([*head, *changed]), dest


# ---- tensor4all evolve --------------------------------------------------------------------------------
EVOLVE = ("evolve", "--model", "xxz", "--L", "4", "--t-final", "0.1", "--dt", "0.05", "--max-bond", "8", "--quiet")


def test_evolve_refuses_a_seed_with_a_product_state(tmp_path):
    r = _run(*EVOLVE, "--state", "neel", "--seed", "5", "--json", "e.json", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "argument --seed: seeds the random start of the ground-state DMRG (--state ground)" in r.stderr
    assert "--state neel" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def _evolve_json(tmp_path, *args):
    path = tmp_path / "e.json"
    assert cli.main([*EVOLVE, *args, "--json", str(path)]) == 0
    return json.loads(path.read_text())


def test_evolve_ground_keeps_its_default_seed_and_a_product_state_records_none(tmp_path, capsys):
    default = _evolve_json(tmp_path, "--state", "ground")
    given = _evolve_json(tmp_path, "--state", "ground", "--seed", "0")
    assert default["parameters"]["seed"] == given["parameters"]["seed"] == 0
    assert default["observables"] == given["observables"]
    assert _evolve_json(tmp_path, "--state", "ground", "--seed", "4")["parameters"]["seed"] == 4
    assert _evolve_json(tmp_path, "--state", "neel")["parameters"]["seed"] is None
    assert "(default: 0)" in cli.build_parser().commands["evolve"].format_help()
