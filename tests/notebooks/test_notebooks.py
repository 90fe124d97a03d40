"""Execute every notebook under notebooks/ (they are part of the test suite).

A notebook passes when every cell runs and none writes to stderr: a warning (a
``GaugeWarning`` of a gradient, a ``RuntimeWarning`` of NumPy, a deprecation that
Python's default filters show) is printed there, and a stored notebook that shows one
is a defect of the notebook or of the library it runs."""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat", reason="install the 'notebooks' extra to execute notebooks")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def stderr_outputs(nb) -> list[str]:
    """What the cells of the executed notebook ``nb`` wrote to stderr, one entry per output."""
    return [
        f"cell {i}: {out.get('text', '')}"
        for i, cell in enumerate(nb.cells)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: pathlib.Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    noise = stderr_outputs(nb)
    assert not noise, f"{path.name} wrote to stderr (a warning?):\n" + "\n".join(noise)
