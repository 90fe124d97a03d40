"""Without Numba (the ``fast`` extra) the native GEMM lists' modules import, ``native_gemms()``
is None and says why, and the sector sweeps take their NumPy path: checked in a fresh process in
which ``import numba`` fails, whether or not Numba is installed here."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tensor4all as t4a
from tensor4all import models

pytestmark = pytest.mark.cpu_only

_SCRIPT = r"""
import sys
for name in ("numba", "llvmlite", "llvmlite.binding"):
    sys.modules[name] = None  # import numba raises ImportError
import tensor4all.linalg._gemm_list_kernels as kernels
from tensor4all.linalg import gemm_list
from tensor4all.algorithms import sector_operator
import tensor4all as t4a
from tensor4all import models
assert kernels.run is None
assert gemm_list.native_gemms() is None and "fast" in gemm_list.REASON, gemm_list.REASON
seen = []
init = sector_operator.SectorOperator.__init__
def spy(self, *args, **kwargs):
    init(self, *args, **kwargs)
    seen.append(self.gemms)
sector_operator.SectorOperator.__init__ = spy
sector_operator.NATIVE_MIN_TERMS = 1
H = models.hubbard(t4a.lattices.square(3, 2), t=1.0, U=3.0, conserve="N,Sz")
print(t4a.dmrg(H, max_bond=32, sweeps=2, cutoff=1e-12).energy, len(seen), sum(g is not None for g in seen))
"""


def test_without_numba_the_numpy_path_runs():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    energy, operators, native = out.stdout.split()
    assert int(operators) > 0 and int(native) == 0
    # the same run here (natively where Numba is installed): the same energy
    H = models.hubbard(t4a.lattices.square(3, 2), t=1.0, U=3.0, conserve="N,Sz")
    here = t4a.dmrg(H, max_bond=32, sweeps=2, cutoff=1e-12).energy
    assert abs(float(energy) - here) < 1e-10 * abs(here), (energy, here)
