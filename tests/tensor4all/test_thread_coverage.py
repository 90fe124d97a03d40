"""The one BLAS thread policy covers every export (:mod:`tensor4all.tools.threads`): each public
callable of tensor4all (``tensor4all.__all__``, the ``__all__`` of ``infinite``, ``trees``,
``spectra``, ``thermal``, ``quantics``, ``tci`` and ``measurements``, and the public methods of
the exported classes outside ``structured``) either runs every dense linear-algebra call it makes
with one BLAS thread on a small fixture, the caller's setting (3 threads) restored afterwards,
or is listed in :data:`EXEMPT` with the reason it does no dense linear algebra. A new export
in neither table fails :func:`test_every_export_is_in_one_table`.

The probe is a profile hook: on entry to NumPy's, SciPy's, tenferro's and tensor4all's linear
algebra (``numpy.linalg``, ``scipy.linalg``, ``scipy.sparse.linalg``, ``tenferro.linalg``, tenferro's
contractions and einsum, ``tensor4all.linalg``), ``np.tensordot``/``np.einsum``, and the NumPy
builtins ``dot``/``matmul``/``vdot``/``inner``/``c_einsum``, it reads the BLAS libraries' thread
counts (``a @ b`` itself is not seen; the calls around it are). The session fixture of
``conftest.py`` pins every test to one thread, so each call here sets the caller's 3 itself."""

from __future__ import annotations

import contextvars
import functools
import sys
import threading
import types
import warnings
from typing import Any, Callable

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import tensor4all as t4a
from tensor4all import infinite, measurements, quantics, spectra, tci, thermal, trees
from tensor4all.tools import threads as policy
from tensor4all.tools.errors import OptionalDependencyError

CALLER = 3  # the caller's own BLAS setting: neither 1 nor a library default

#: where the exports are read, with the prefix of their names in the tables
MODULES = [
    ("", t4a),
    ("infinite.", infinite),
    ("trees.", trees),
    ("spectra.", spectra),
    ("thermal.", thermal),
    ("quantics.", quantics),
    ("tci.", tci),
    ("measurements.", measurements),
]

HOT = (
    "numpy/linalg",
    "numpy/_core/einsumfunc",
    "scipy/linalg",
    "scipy/sparse/linalg",
    "tenferro/linalg",
    "tenferro/_contraction",
    "tenferro/_matrix",
    "tenferro/einsum",
    "tensor4all/linalg/",
)
BUILTINS = {"dot", "matmul", "vdot", "inner", "c_einsum", "tensordot"}
#: functions of those modules that do no linear algebra (a table lookup)
NOT_LINEAR_ALGEBRA = {"get_solver"}


def exported() -> dict[str, Any]:
    """``{name: object}`` of every public callable: the exports (first name wins for an object
    exported twice) and the public methods of the exported classes (``"MPS.random"``)."""
    out: dict[str, Any] = {}
    seen: set[int] = set()
    for prefix, mod in MODULES:
        for n in mod.__all__:
            obj = getattr(mod, n)
            if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
                continue
            if not getattr(obj, "__module__", "").startswith("tensor4all") or id(obj) in seen:
                continue
            seen.add(id(obj))
            out[prefix + n] = obj
            if isinstance(obj, type) and not obj.__module__.startswith("tensor4all.structured"):
                for m, v in vars(obj).items():
                    if not m.startswith("_") and (callable(v) or isinstance(v, (classmethod, staticmethod))):
                        out[f"{prefix}{n}.{m}"] = getattr(obj, m)
    return out


# ---- fixtures: tiny, built once on first use ------------------------------------------------
@functools.cache
def fx() -> types.SimpleNamespace:
    f = types.SimpleNamespace()
    f.H = t4a.models.heisenberg(6)
    f.psi = t4a.MPS.random(6, bond_dim=4, seed=1)
    f.phi = t4a.MPS.random(6, bond_dim=3, seed=2)
    f.sym = t4a.MPS.random(6, bond_dim=4, seed=3, conserve="Sz")
    f.el = t4a.MPS.random(4, d=4, bond_dim=4, seed=4, conserve="N", local="electron")
    f.Hs = t4a.models.xx(6, conserve="Sz")
    f.ground = t4a.dmrg(f.Hs, max_bond=8, sweeps=2).state
    f.G = t4a.dynamical_correlation(f.Hs, f.ground, "Sz", "Sz", t_final=0.8, dt=0.1)
    f.Hx = t4a.models.xx(4)
    f.thermal = t4a.thermal_state(f.Hx, 0.2, dbeta=0.1, max_bond=8)
    f.iH = t4a.infinite_model("tfim", g=1.5)
    f.ipsi = t4a.iMPS.random("spin-1/2", 1, 4, seed=1)
    f.tree = trees.Tree([(0, 1), (1, 2), (1, 3)])
    f.ttn = trees.TreeTN.random(f.tree, 2, 3, seed=0)
    f.tH = trees.tree_heisenberg(f.tree)
    f.grid = quantics.Grid(5)
    f.qtt = quantics.quantics_interpolate(lambda x: np.sin(3 * x), f.grid)
    f.tci = tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2] * 5, batched=True)
    f.layout = trees.quantics_tree(2, 2, "tree")
    try:  # TeNPy's first import, outside the probe (it is slow under a profile hook)
        t4a.to_tenpy(f.psi)
    except OptionalDependencyError:
        pass
    return f


def fresh(psi: t4a.MPS) -> t4a.MPS:
    """A copy of ``psi`` without the Schmidt form it keeps once measured (so the call makes it)."""
    return t4a.MPS._from_leaves(list(psi.tensors), psi._grading)


def unseen(H: t4a.MPO) -> t4a.MPO:
    """``H`` times a factor drawn anew: content whose hermiticity no earlier test in this
    process has had remembered (``MPO.is_hermitian`` keeps it by content), so the call tests it."""
    c = float(np.random.default_rng().uniform(1.0, 2.0))
    return t4a.MPO([t.numpy() * c if i == 0 else t for i, t in enumerate(H.tensors)], H.local)


#: the exports that do dense linear algebra, each with a call on the fixtures
CALLS: dict[str, Callable[[types.SimpleNamespace], Any]] = {
    # ---- chains
    "MPS.random": lambda f: t4a.MPS.random(6, bond_dim=4, seed=1),
    "MPS.from_dense": lambda f: t4a.MPS.from_dense(np.arange(64.0), 6),
    "MPS.add": lambda f: f.psi.add(f.phi, max_bond=4),
    "MPS.to_dense": lambda f: f.psi.to_dense(),
    "MPS.canonicalize": lambda f: fresh(f.psi).canonicalize(3),
    "MPS.norm": lambda f: f.psi.norm(),
    "MPS.normalize": lambda f: fresh(f.psi).normalize(),
    "MPS.compress": lambda f: fresh(f.psi).compress(max_bond=2),
    "MPS.expect": lambda f: fresh(f.psi).expect("Sz"),
    "MPS.correlation": lambda f: fresh(f.psi).correlation("Sz", "Sz", 1, 4),
    "MPS.correlation_matrix": lambda f: fresh(f.psi).correlation_matrix("Sz", "Sz"),
    "MPS.entanglement_entropy": lambda f: fresh(f.psi).entanglement_entropy(),
    "MPS.schmidt_values": lambda f: fresh(f.psi).schmidt_values(),
    "MPS.entanglement_spectrum": lambda f: fresh(f.sym).entanglement_spectrum(2),
    "MPS.schmidt_form": lambda f: fresh(f.psi).schmidt_form(),
    "overlap": lambda f: t4a.overlap(f.psi, f.phi),
    "add": lambda f: t4a.add(f.psi, f.phi, max_bond=4),
    "apply": lambda f: t4a.apply(f.H, f.psi, max_bond=4),
    "MPO.from_opsum": lambda f: t4a.MPO.from_opsum(t4a.models.heisenberg_opsum(6), 6),
    "MPO.to_dense": lambda f: f.H.to_dense(),
    "MPO.is_hermitian": lambda f: unseen(f.H).is_hermitian(),
    "expectation": lambda f: t4a.expectation(f.psi, f.H),
    "dmrg": lambda f: t4a.dmrg(f.H, max_bond=4, sweeps=2),
    "excited_states": lambda f: t4a.excited_states(f.H, 2, max_bond=4, sweeps=2),
    "gap": lambda f: t4a.gap(f.H, max_bond=4, sweeps=2),
    "tebd": lambda f: t4a.tebd(f.H, f.psi, 0.1, 0.05, max_bond=4),
    "tdvp": lambda f: t4a.tdvp(f.H, f.psi, 0.1, 0.05, max_bond=4),
    "to_tenpy": lambda f: t4a.to_tenpy(f.psi),
    "mpo_to_tenpy": lambda f: t4a.mpo_to_tenpy(f.H),
    "measurements.density": lambda f: measurements.density(fresh(f.el)),
    "measurements.double_occupancy": lambda f: measurements.double_occupancy(fresh(f.el)),
    "measurements.spin_correlation": lambda f: measurements.spin_correlation(fresh(f.psi)),
    "measurements.charge_correlation": lambda f: measurements.charge_correlation(fresh(f.el)),
    "measurements.one_particle_density_matrix": lambda f: measurements.one_particle_density_matrix(fresh(f.el)),
    "measurements.entanglement_per_sector": lambda f: measurements.entanglement_per_sector(fresh(f.sym), 2),
    # ---- spectra
    "dynamical_correlation": lambda f: t4a.dynamical_correlation(f.Hs, f.ground, "Sz", "Sz", t_final=0.2, dt=0.1),
    "spectral_function": lambda f: t4a.spectral_function(f.G, extend=2),
    "spectral_function_chebyshev": lambda f: t4a.spectral_function_chebyshev(
        f.Hs, f.ground, "Sz", "Sz", n_moments=4, max_bond=8
    ),
    "linear_prediction": lambda f: t4a.linear_prediction(np.exp((1.3j - 0.05) * 0.1 * np.arange(40)), 8),
    # ---- thermal
    "thermal_state": lambda f: t4a.thermal_state(f.Hx, 0.2, dbeta=0.1, max_bond=8),
    "thermodynamics": lambda f: t4a.thermodynamics(f.Hx, 0.2, dbeta=0.1, max_bond=8),
    "evolve_thermal": lambda f: t4a.evolve_thermal(f.thermal, f.Hx, 0.1, 0.05, max_bond=8),
    "metts": lambda f: t4a.metts(f.Hx, 0.2, 1, dbeta=0.1, max_bond=8, warmup=0),
    "thermal.MettsChain": lambda f: thermal.MettsChain(f.Hx, 0.2, 1, 0, 0, dbeta=0.1, max_bond=8, warmup=0)(),
    "metts_tasks": lambda f: t4a.metts_tasks(f.Hx, 0.2, 1, dbeta=0.1, max_bond=8),
    "thermal.collapse": lambda f: thermal.collapse(f.psi, np.random.default_rng(0)),
    # ---- infinite
    "iMPS.from_tensors": lambda f: t4a.iMPS.from_tensors(f.ipsi.AL),
    "iMPS.random": lambda f: t4a.iMPS.random("spin-1/2", 1, 4, seed=2),
    "iMPS.AC": lambda f: f.ipsi.AC(0),
    "iMPS.schmidt_values": lambda f: f.ipsi.schmidt_values(),
    "iMPS.entanglement_entropy": lambda f: f.ipsi.entanglement_entropy(),
    "iMPS.entanglement_spectrum": lambda f: f.ipsi.entanglement_spectrum(),
    "vumps": lambda f: t4a.vumps(f.iH, max_bond=4, tol=1e-5, max_iter=5, seed=1),
    "idmrg": lambda f: t4a.idmrg(f.iH, max_bond=4, tol=1e-5, sweeps=3),
    "itebd": lambda f: t4a.itebd(f.iH, f.ipsi, 0.1, 0.05, max_bond=4, observables={"Sz": "Sz"}),
    "itdvp": lambda f: t4a.itdvp(f.iH, f.ipsi, 0.1, 0.05, max_bond=4, observables={"Sz": "Sz"}),
    "infinite.expect": lambda f: infinite.expect(f.ipsi, "Sz"),
    "infinite.correlation": lambda f: infinite.correlation(f.ipsi, "Sz", "Sz", 4),
    "infinite.string_order": lambda f: infinite.string_order(f.ipsi, "Sz", "Sz", "Sx", distance=4),
    "infinite.transfer_spectrum": lambda f: infinite.transfer_spectrum(f.ipsi, k=3),
    "infinite.is_injective": lambda f: infinite.is_injective(f.ipsi),
    "infinite.correlation_length": lambda f: infinite.correlation_length(f.ipsi, "Sz", k=4),
    "infinite.extrapolate_correlation_length": lambda f: infinite.extrapolate_correlation_length(
        [f.ipsi, t4a.iMPS.random("spin-1/2", 1, 6, seed=3)], k=6
    ),
    "infinite.structure_factor": lambda f: infinite.structure_factor(f.ipsi, "Sz", [0.0, 1.0], r_max=4),
    "infinite.energy_per_site": lambda f: infinite.energy_per_site(f.ipsi, f.iH),
    "infinite.product_energy": lambda f: infinite.product_energy(f.iH),
    "infinite.fixed_point_correlation_length": lambda f: infinite.fixed_point_correlation_length(f.ipsi, f.iH, k=4),
    "infinite.fit_correlation_length": lambda f: infinite.fit_correlation_length(f.ipsi, "Sz", range(2, 6), "exp"),
    "infinite.fit_decay": lambda f: infinite.fit_decay([1, 2, 3, 4], [1.0, 0.5, 0.25, 0.125], "exp"),
    # ---- trees
    "TreeTN.to_dense": lambda f: f.ttn.to_dense(),
    "TreeTN.evaluate": lambda f: f.ttn.evaluate([[0, 1, 0, 1]]),
    "TreeTN.canonicalize": lambda f: f.ttn.canonicalize(1),
    "TreeTN.truncate": lambda f: f.ttn.truncate(max_bond=2),
    "TreeTN.norm": lambda f: f.ttn.norm(),
    "TreeOperator.to_matrix": lambda f: f.tH.to_matrix(),
    "TreeOperator.apply": lambda f: f.tH.apply(f.ttn),
    "tree_dmrg": lambda f: trees.tree_dmrg(f.tH, max_bond=4, sweeps=2),
    "tree_crossinterpolate": lambda f: trees.tree_crossinterpolate(f.ttn.evaluate, f.tree, 2, batched=True),
    "trees.inner": lambda f: trees.inner(f.ttn, f.ttn),
    "trees.apply_fit": lambda f: trees.apply_fit(f.tH, f.ttn, max_bond=3, sweeps=1),
    "trees.tree_linsolve": lambda f: trees.tree_linsolve(f.tH, f.ttn, max_bond=3, sweeps=1),
    "trees.tree_quantics_interpolate": lambda f: trees.tree_quantics_interpolate(
        lambda idx: np.cos(0.3 * idx[:, 0]) * np.sin(0.2 * idx[:, 1] + 1.0), f.layout
    ),
    # ---- quantics and tensor trains
    "quantics.QuanticsTT.from_values": lambda f: quantics.QuanticsTT.from_values(np.sin(np.arange(32.0)), f.grid),
    "quantics.QuanticsTT.evaluate": lambda f: f.qtt.evaluate(0.3),
    "quantics.QuanticsTT.evaluate_index": lambda f: f.qtt.evaluate_index(3),
    "quantics.QuanticsTT.evaluate_quantics": lambda f: f.qtt.evaluate_quantics([0, 1, 0, 1, 1]),
    "quantics.QuanticsTT.sum": lambda f: f.qtt.sum(),
    "quantics.QuanticsTT.integral": lambda f: f.qtt.integral(),
    "quantics.QuanticsTT.to_values": lambda f: f.qtt.to_values(),
    "quantics.QuanticsTT.interpolant": lambda f: f.qtt.interpolant(lambda x: np.sin(3.1 * x)),
    "quantics.quantics_interpolate": lambda f: quantics.quantics_interpolate(lambda x: np.cos(2 * x), f.grid),
    "quantics.fourier_mpo": lambda f: quantics.fourier_mpo(f.grid),
    "quantics.shift_mpo": lambda f: quantics.shift_mpo(f.grid, 3),
    "quantics.flip_mpo": lambda f: quantics.flip_mpo(f.grid),
    "quantics.apply": lambda f: quantics.apply(quantics.shift_mpo(f.grid, 1), f.qtt),
    "tci.crossinterpolate2": lambda f: tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2] * 5, batched=True),
    "tci.interpolant": lambda f: tci.interpolant(f.tci, 1.0 + f.tci.points.sum(axis=1)),
    "tci.tt_evaluate": lambda f: tci.tt_evaluate(f.tci.tt, [0, 1, 0, 1, 0]),
    "tci.tt_sum": lambda f: tci.tt_sum(f.tci.tt),
    "tci.tt_multiply": lambda f: tci.tt_multiply(f.tci.tt, f.tci.tt),
    # structured contractions (sized by their largest block)
    "einsum": lambda f: t4a.einsum("ij,jk->ik", np.eye(40) + 0.5, np.eye(40) - 0.25),
    "matmul": lambda f: t4a.matmul(np.eye(40) + 0.5, np.eye(40) - 0.25),
    "tensordot": lambda f: t4a.tensordot(np.eye(40) + 0.5, np.eye(40) - 0.25, axes=1),
}

#: the exports that do no dense linear algebra (validation, bookkeeping, copies, files, records)
EXEMPT: dict[str, str] = {
    # constructors: validate and hold their tensors
    "MPS": "checks the site tensors",
    "MPO": "checks the site tensors",
    "iMPS": "holds its canonical forms",
    "TreeTN": "checks the node tensors",
    "TreeOperator": "checks the node tensors",
    "OpSum": "a list of terms",
    "Term": "a term",
    "LocalSpace": "a table of operator matrices",
    "ScanTask": "a task's parameters",
    "quantics.Grid": "grid arithmetic",
    "quantics.QuanticsTT": "checks its MPS",
    # product states, copies and re-labellings of the sites
    "MPS.product_state": "the sites of basis states or vectors",
    "MPS.dense": "the sectors' blocks written into dense sites",
    "iMPS.product_state": "the sites of basis states",
    "TreeTN.random": "Gaussian node tensors, no canonical form",
    "trees.add": "block-diagonal copies of the node tensors",
    "quantics.reverse_bits": "the sites in reverse order",
    # operators: automata written term by term
    "OpSum.add": "appends a term",
    "OpSum.check_sites": "index checks",
    "infinite_model": "the cell MPO written by its automaton",
    "InfiniteMPO": "checks the cell tensors",
    "InfiniteMPO.from_opsum": "the cell MPO written by its automaton",
    "infinite.cell_opsum": "an OpSum",
    "trees.tree_operator": "the TTNO automaton written node by node",
    "trees.tree_heisenberg": "the TTNO automaton written node by node",
    "thermal.purified_space": "a local space's operator matrices, Kronecker products of 2 x 2 matrices",
    "local_space": "a table lookup",
    "LocalSpace.operator_names": "a table lookup",
    "LocalSpace.factor": "a table lookup",
    "LocalSpace.matrix": "a table lookup",
    # files and other codes' formats: copies of the arrays
    "MPS.save": "writes the arrays",
    "MPS.load": "reads the arrays",
    "save_itensors_hdf5": "writes the arrays",
    "load_itensors_hdf5": "reads the arrays",
    "from_tenpy": "reads TeNPy's B tensors",
    "mpo_from_tenpy": "copies the MPO tensors",
    "to_quimb": "copies the site tensors",
    "from_quimb": "copies the site tensors",
    "mpo_to_quimb": "copies the MPO tensors",
    "mpo_from_quimb": "copies the MPO tensors",
    # scans: run their tasks (each a dmrg, under its threads=) on Dask workers
    "scan": "runs the tasks' dmrg, each under its own threads=",
    # windows of numbers: closed forms
    "window_resolution": "a closed form",
    "tci.tt_add": "the direct sum of the sites",
    # trees' topology and the quantics layouts
    "Tree": "graph bookkeeping",
    "Tree.from_parents": "graph bookkeeping",
    "Tree.from_prufer": "graph bookkeeping",
    "Tree.path": "graph bookkeeping",
    "Tree.leg": "graph bookkeeping",
    "Tree.parents": "graph bookkeeping",
    "Tree.toward": "graph bookkeeping",
    "Tree.path_between": "graph bookkeeping",
    "Tree.side": "graph bookkeeping",
    "Tree.schedule": "graph bookkeeping",
    "trees.quantics_tree": "graph bookkeeping",
    "trees.QuanticsLayout": "index arithmetic",
    "trees.QuanticsLayout.grid_indices": "index arithmetic",
    "quantics.Grid.sites_of": "index arithmetic",
    "quantics.Grid.grididx_to_quantics": "index arithmetic",
    "quantics.Grid.quantics_to_grididx": "index arithmetic",
    "quantics.Grid.grididx_to_origcoord": "index arithmetic",
    "quantics.Grid.origcoord_to_grididx": "index arithmetic",
    "quantics.Grid.quantics_to_origcoord": "index arithmetic",
    "quantics.Grid.origcoord_to_quantics": "index arithmetic",
    # structured tensors: their linear algebra is tensor4all.structured.linalg (test_thread_policy.py);
    # the classes hold blocks, the helpers combine shapes and count the fallbacks
    "StructuredTensor": "holds blocks",
    "DiagonalTensor": "holds a diagonal",
    "BlockDiagonal": "holds blocks",
    "SymmetricTensor": "holds blocks",
    "SectorDiagonal": "holds diagonals",
    "JaggedShape": "shape arithmetic",
    "TiledShape": "shape arithmetic",
    "Nested": "shape arithmetic",
    "combine": "shape arithmetic",
    "to_dense": "writes the blocks into a dense array",
    "fallback_stats": "counters",
    "reset_fallback_stats": "counters",
    "fallback_policy": "a setting",
    "set_fallback_policy": "a setting",
    "get_fallback_policy": "a setting",
    # records the library returns
    "ExcitedStates": "a record",
    "Gap": "a record",
    "DMRGResult": "a record",
    "SweepRecord": "a record",
    "SweepRecord.as_dict": "a record",
    "BondUpdate": "a record",
    "EvolutionResult": "a record",
    "EvolutionResult.as_dict": "a record",
    "EvolutionRecord": "a record",
    "EvolutionRecord.as_dict": "a record",
    "DynamicalCorrelation": "a record",
    "DynamicalCorrelation.as_dict": "a record",
    "DynamicalCorrelation.from_dict": "a record",
    "SpectralFunction": "a record",
    "SpectralFunction.weight": "a sum over the record's grid",
    "SpectralFunction.as_dict": "a record",
    "ThermalResult": "a record",
    "ThermalResult.as_dict": "a record",
    "Thermodynamics": "a record",
    "Thermodynamics.as_dict": "a record",
    "MettsResult": "a record",
    "MettsResult.as_dict": "a record",
    "thermal.MettsSample": "a record",
    "thermal.MettsSample.as_dict": "a record",
    "VUMPSResult": "a record",
    "IDMRGResult": "a record",
    "infinite.VUMPSRecord": "a record",
    "infinite.IDMRGRecord": "a record",
    "infinite.ITEBDResult": "a record",
    "infinite.ITDVPResult": "a record",
    "infinite.CorrelationFit": "a record",
    "trees.TreeDMRGResult": "a record",
    "trees.TreeTCIResult": "a record",
    "tci.TCIResult": "a record",
    "measurements.SectorEntanglement": "a record",
    "measurements.SectorEntanglement.as_dict": "a record",
}


def test_every_export_is_in_one_table():
    names = set(exported())
    listed = [set(CALLS), set(EXEMPT)]
    missing = sorted(names - set().union(*listed))
    assert not missing, f"add these exports to CALLS (with a call) or EXEMPT (with the reason): {missing}"
    gone = sorted(set().union(*listed) - names)
    assert not gone, f"no longer exported: {gone}"
    assert not (listed[0] & listed[1])


# ---- the probe ------------------------------------------------------------------------------
def _libraries() -> list[Any]:
    return ThreadpoolController().select(user_api="blas").lib_controllers


def _counts(libs: list[Any]) -> tuple[int, ...]:
    return tuple(sorted({lib.num_threads for lib in libs}))


def threads_seen(call: Callable[[], Any]) -> tuple[dict[tuple[int, ...], int], tuple[int, ...]]:
    """``call()`` under the caller's 3 threads: ``({thread counts: times seen on entry to dense
    linear algebra}, the counts after the call)``."""
    libs = _libraries()
    seen: dict[tuple[int, ...], int] = {}

    def profile(frame, event, arg):
        if event == "call":
            fn = frame.f_code.co_filename
            name = frame.f_code.co_name
            hit = (any(h in fn for h in HOT) and name not in NOT_LINEAR_ALGEBRA) or (
                name == "tensordot" and "numpy" in fn
            )
        elif event == "c_call":
            hit = getattr(arg, "__name__", "") in BUILTINS
        else:
            return
        if hit:
            c = _counts(libs)
            seen[c] = seen.get(c, 0) + 1

    with threadpool_limits(CALLER, user_api="blas"):
        previous = sys.getprofile()
        sys.setprofile(profile)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
        except OptionalDependencyError as e:
            pytest.skip(str(e))
        finally:
            sys.setprofile(previous)
        return seen, _counts(libs)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_dense_linear_algebra_runs_on_one_blas_thread(name):
    f = fx()
    seen, after = threads_seen(lambda: CALLS[name](f))
    assert seen, f"{name} did no dense linear algebra on its fixture: give it a call that does, or exempt it"
    assert set(seen) == {(1,)}, f"{name}: BLAS thread counts on entry to linear algebra {seen}"
    assert after == (CALLER,)


# ---- worker threads -------------------------------------------------------------------------
def _in_thread(call: Callable[[], Any]) -> Any:
    out: list[Any] = []
    errors: list[BaseException] = []

    def run():
        try:
            out.append(call())
        except BaseException as e:  # noqa: BLE001 (handed to the test's thread)
            errors.append(e)

    th = threading.Thread(target=run)
    th.start()
    th.join()
    if errors:
        raise errors[0]
    return out[0]


def test_the_policy_holds_in_a_worker_thread():
    """A covered call in a ``threading.Thread`` runs on one BLAS thread (OpenBLAS takes
    ``openblas_set_num_threads`` from one controlling thread only, which the caller's own limit
    makes the main thread: the policy sets the worker's own count) and restores the worker's count."""
    f = fx()
    seen: list[tuple[int, ...]] = []
    libs = _libraries()
    psi = fresh(f.psi)
    body = getattr(t4a.MPS.entanglement_entropy, "__wrapped__").__code__

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is body:
            seen.append(_counts(libs))

    def work():
        before = _counts(libs)
        sys.setprofile(profile)
        try:
            psi.entanglement_entropy()
        finally:
            sys.setprofile(None)
        return before, _counts(libs)

    with threadpool_limits(CALLER, user_api="blas"):  # the main thread controls OpenBLAS meanwhile
        before, after = _in_thread(work)
        assert _counts(libs) == (CALLER,)
    assert before == after == (CALLER,)
    assert seen == [(1,)], seen


class _FakeLibrary:
    """A BLAS library of ``count`` threads whose setters record what they are told."""

    internal_api = "openblas"

    def __init__(self, count: int, local: bool):
        self.count, self.local_count, self.calls = count, 0, []
        self.setter = self._set_local if local else None

    @property
    def num_threads(self) -> int:
        return self.local_count or self.count

    def set_num_threads(self, n: int) -> None:
        self.calls.append(("process", n))
        self.count = n

    def _set_local(self, n: int) -> int:
        self.calls.append(("local", n))
        before, self.local_count = self.num_threads, n
        return before


def _install(monkeypatch, lib: _FakeLibrary) -> None:
    monkeypatch.setattr(policy, "_blas_libraries", lambda: [lib])
    monkeypatch.setattr(policy._Libraries, "local", {id(lib): lib.setter})


def _limited(threads_: int | None) -> None:
    with policy.blas_threads(threads_, 8):
        pass


def test_a_worker_thread_sets_the_count_through_the_local_setter(monkeypatch):
    lib = _FakeLibrary(5, local=True)
    _install(monkeypatch, lib)
    _in_thread(lambda: _limited(None))
    assert lib.calls == [("local", 1), ("local", 5)]  # the count, then the one found before
    assert lib.num_threads == 5
    lib.calls.clear()
    lib.local_count = 2  # a worker with a count of its own gets it back
    _in_thread(lambda: _limited(None))
    assert lib.calls == [("local", 1), ("local", 2)] and lib.num_threads == 2


def test_the_main_thread_sets_the_process_count(monkeypatch):
    lib = _FakeLibrary(5, local=True)
    _install(monkeypatch, lib)
    _limited(None)
    assert lib.calls == [("process", 1), ("process", 5)]


def test_a_worker_without_a_local_setter_sets_the_process_count(monkeypatch):
    lib = _FakeLibrary(5, local=False)
    _install(monkeypatch, lib)
    _in_thread(lambda: _limited(2))
    assert lib.calls == [("process", 2), ("process", 5)]


def test_a_context_copied_into_a_worker_thread_does_not_carry_the_policy():
    """``asyncio.to_thread`` and ``contextvars.copy_context().run`` hand the caller's context to
    another thread: the policy active there is the caller's, so a call in the worker still sets
    the worker's own count."""
    with policy.blas_threads(None, 8):
        ctx = contextvars.copy_context()
        assert policy._active()
        assert _in_thread(lambda: ctx.run(policy._active)) is False
