"""``tensor4all evolve`` (issue 24): what a run writes, through a subprocess as a user runs
it: the saved state, the JSON document and the plot, the JSON document alone on standard
output (``--json -``), and the progress bar on a terminal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import references

from .test_cli_evolve import ROOT, run_cli, strict_json


def _table_rows(stdout: str) -> list[list[float]]:
    return [
        [float(x) for x in line.split()]
        for line in stdout.splitlines()
        if re.match(r"^\s+\d[\d.e+-]*\s+-?\d+\.\d{10}\s", line)
    ]


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
