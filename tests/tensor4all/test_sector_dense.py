"""The small sides on whole arrays (:mod:`tensor4all.algorithms.sector_dense`) against the blocked
kernels they replace: the absorption of an MPO tensor (rows and columns, from a blocked and from a
:class:`Dense` environment), the move of an absorbed environment between orthonormal factors, and
the held matrix of a local problem, on random charge-conserving tensors (U(1) and Z_n)."""

import numpy as np
import tensor4all as t4a
from hypothesis import given, settings, strategies as st

from tensor4all.algorithms import sector_absorb, sector_dense, sector_operator
from tensor4all.algorithms.sector_absorb import absorb_groups, sandwich
from tensor4all.algorithms.sector_dense import Dense, WholeProduct, absorb_dense, gathered_matrix
from tensor4all.algorithms.sector_operator import SectorOperator
from tensor4all.structured.site_matrices import Pieces


def _problem(rng, modulus, cplx, d, n_env, n_out, rowwise=True):
    """A charge-conserving MPO tensor (grouped; ``c_w = c_x + q_s - q_t`` for rows, ``c_x - q_s +
    q_t`` for columns), an environment of ``n_env`` states on a random bond, the site charges and
    what the rest needs."""
    norm = (lambda c: c % modulus) if modulus else (lambda c: c)
    q_site = [int(q) for q in rng.integers(-1, 2, d)]
    c_env = [int(c) for c in rng.integers(-1, 2, n_env)]
    c_out = [int(c) for c in rng.integers(-1, 2, n_out)]
    bond = {norm(q): int(rng.integers(1, 4)) for q in range(-2, 3)}
    dtype = np.complex128 if cplx else np.float64

    def rand(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if cplx else x

    entries: dict[int, list] = {}
    for x in range(n_env):
        for s in range(d):
            for t in range(d):
                for w in range(n_out):
                    flow = q_site[s] - q_site[t] if rowwise else q_site[t] - q_site[s]
                    if norm(c_out[w]) == norm(c_env[x] + flow) and rng.random() < 0.6:
                        entries.setdefault(w, []).append((x, s, t, rand()))
    env = [
        {q: rand(bond[q], bond[norm(q - c_env[x])]) for q in bond if norm(q - c_env[x]) in bond} for x in range(n_env)
    ]
    return norm, q_site, c_env, c_out, bond, dtype, absorb_groups(entries, c_env, norm), env, rand


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * max(1.0, float(np.abs(b).max(initial=0.0))))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    modulus=st.sampled_from([0, 2, 3]),
    cplx=st.booleans(),
    d=st.integers(1, 3),
    n_env=st.integers(1, 4),
    n_out=st.integers(1, 4),
    rowwise=st.booleans(),
)
def test_dense_absorb_and_move_equal_the_blocked_ones(seed, modulus, cplx, d, n_env, n_out, rowwise):
    rng = np.random.default_rng(seed)
    norm, q_site, c_env, c_out, bond, dtype, groups, env, rand = _problem(rng, modulus, cplx, d, n_env, n_out, rowwise)
    side = Pieces.rows(bond, q_site, norm) if rowwise else Pieces.cols(q_site, bond, norm)
    key = (lambda q, s: (q, s)) if rowwise else (lambda q, s: (s, q))
    ref, _ = sector_absorb._absorb(env, groups, c_out, side, key, norm, np, dtype)
    plans: dict = {}
    out, regions = absorb_dense(env, groups, c_out, side, rowwise, norm, dtype, plans)
    assert isinstance(out, Dense) and regions == [{} for _ in c_out] and out.dense.dtype == dtype
    for w in range(n_out):
        assert set(ref[w]) <= set(out[w])  # every block charge allows; those no entry reaches are zero
        for m, blk in out[w].items():
            _close(blk, ref[w][m]) if m in ref[w] else np.testing.assert_array_equal(blk, 0)
    # the move: an orthonormal factor per sector of the side (some sectors dropped), the new bond in its order
    basis = {}
    for m, n in side.size.items():
        if rng.random() < 0.8:
            basis[m] = np.linalg.qr(rand(n, n))[0][:, : int(rng.integers(1, n + 1))]
    bra = {m: u.conj().T for m, u in basis.items()}
    moved, blocked = sandwich(out, bra, basis, c_out, norm), sandwich(ref, bra, basis, c_out, norm)
    assert isinstance(moved, Dense) or not basis
    for w in range(n_out):
        for m, blk in moved[w].items():
            _close(blk, blocked[w][m]) if m in blocked[w] else np.testing.assert_array_equal(blk, 0)
        assert set(blocked[w]) <= set(moved[w])
    if not basis:
        return
    # absorbing again from the moved (Dense) environment equals absorbing from its blocks
    new_bond = {m: u.shape[1] for m, u in basis.items()}
    side2 = Pieces.rows(new_bond, q_site, norm) if rowwise else Pieces.cols(q_site, new_bond, norm)
    groups2 = absorb_groups(
        {w: [(x, s, s, 1.0 + x) for x in range(n_out) for s in range(d) if norm(c_out[x]) == 0] for w in range(1)},
        c_out,
        norm,
    )
    if not groups2:
        return
    a, _ = absorb_dense(moved, groups2, [0], side2, rowwise, norm, dtype, plans)
    b, _ = sector_absorb._absorb(
        [dict(moved[w].items()) for w in range(n_out)], groups2, [0], side2, key, norm, np, dtype
    )
    for m, blk in b[0].items():
        _close(a[0][m], blk)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), modulus=st.sampled_from([0, 2]), cplx=st.booleans(), d=st.integers(1, 3))
def test_gathered_matrix_equals_the_kronecker_blocks(seed, modulus, cplx, d):
    """The held matrix of a two-site problem between two :class:`Dense` sides equals the one built
    term by term from their blocks, and both equal the products by blocks."""
    norm, q_site, c_env, c_out, bond, dtype, groups, env, rand = _problem(
        np.random.default_rng(seed), modulus, cplx, d, 3, 3
    )
    *_, groups_r, env_r, _ = _problem(np.random.default_rng(seed), modulus, cplx, d, 3, 3, rowwise=False)
    rows = Pieces.rows(bond, q_site, norm)
    cols = Pieces.cols(q_site, bond, norm)
    lw, _ = absorb_dense(env, groups, c_out, rows, True, norm, dtype, {})
    wr, _ = absorb_dense(env_r, groups_r, c_out, cols, False, norm, dtype, {})
    sectors = [m for m in rows.size if m in cols.size]
    if not sectors:
        return
    op = SectorOperator(lw, wr, c_out, sectors, rows, cols, dtype, norm)
    n = op.shape[0]
    h = gathered_matrix(lw, wr, sectors, rows, cols, n)
    blocked_lw = [dict(lw[w].items()) for w in range(len(c_out))]
    blocked_wr = [dict(wr[w].items()) for w in range(len(c_out))]
    by_blocks = SectorOperator(blocked_lw, blocked_wr, c_out, sectors, rows, cols, dtype, norm)
    _close(h, by_blocks.dense())
    x = rand(n)
    _close(op.matvec(x), h @ x)
    by_blocks.matrix = None  # the products by blocks
    if by_blocks.terms:
        _close(by_blocks.matvec(x), h @ x)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), modulus=st.sampled_from([0, 2]), cplx=st.booleans(), d=st.integers(1, 3))
def test_whole_array_products_equal_the_kronecker_blocks(seed, modulus, cplx, d):
    """The product of a two-site problem on the whole arrays of its :class:`Dense` sides
    (:class:`WholeProduct`: one batched GEMM and one GEMM, zeros outside the sectors) equals the
    matrix built term by term from their blocks (Kronecker blocks) times the vector, real and
    complex vectors alike."""
    norm, q_site, c_env, c_out, bond, dtype, groups, env, rand = _problem(
        np.random.default_rng(seed), modulus, cplx, d, 3, 3
    )
    *_, groups_r, env_r, _ = _problem(np.random.default_rng(seed), modulus, cplx, d, 3, 3, rowwise=False)
    rows, cols = Pieces.rows(bond, q_site, norm), Pieces.cols(q_site, bond, norm)
    lw, _ = absorb_dense(env, groups, c_out, rows, True, norm, dtype, {})
    wr, _ = absorb_dense(env_r, groups_r, c_out, cols, False, norm, dtype, {})
    sectors = [m for m in rows.size if m in cols.size]
    if not sectors:
        return
    blocked = [[dict(x[w].items()) for w in range(len(c_out))] for x in (lw, wr)]
    h = SectorOperator(*blocked, c_out, sectors, rows, cols, dtype, norm).dense()
    whole = WholeProduct(lw, wr, sectors, rows, cols)
    x = rand(h.shape[0])
    _close(whole(x), h @ x)
    z = x + 1j * np.random.default_rng(seed + 1).standard_normal(h.shape[0])
    _close(whole(z), h @ z)


def test_an_operator_between_whole_arrays_applies_them_and_gives_its_matrix(monkeypatch):
    """Where the flop model picks the whole arrays (:func:`sector_operator._whole_products`), the
    operator's product is theirs and ``dense()`` its gathered matrix; in a conserved DMRG of the
    Heisenberg chain (L = 12, bond dimension up to 26) the model picks them for the problems of
    300 to 700 states between sides of 30 to 60 rows, and gathered matrices for the smallest."""
    rng = np.random.default_rng(4)
    norm, q_site, c_env, c_out, bond, dtype, groups, env, rand = _problem(rng, 0, False, 3, 3, 3)
    *_, groups_r, env_r, _ = _problem(np.random.default_rng(4), 0, False, 3, 3, 3, rowwise=False)
    rows, cols = Pieces.rows(bond, q_site, norm), Pieces.cols(q_site, bond, norm)
    lw, _ = absorb_dense(env, groups, c_out, rows, True, norm, dtype, {})
    wr, _ = absorb_dense(env_r, groups_r, c_out, cols, False, norm, dtype, {})
    sectors = [m for m in rows.size if m in cols.size]
    monkeypatch.setattr(sector_operator, "_gathers", lambda *a: False)
    monkeypatch.setattr(sector_operator, "_whole_products", lambda *a: True)
    op = SectorOperator(lw, wr, c_out, sectors, rows, cols, dtype, norm)
    h = gathered_matrix(lw, wr, sectors, rows, cols, op.shape[0])
    x = rand(op.shape[0])
    assert op.matrix is None and not op.terms
    _close(op.matvec(x), h @ x)
    _close(op.dense(), h)
    monkeypatch.undo()
    paths = []
    init = SectorOperator.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        whole = self._whole is not None
        paths.append((self.shape[0], "whole" if whole else "matrix" if self.matrix is not None else "blocks"))

    monkeypatch.setattr(SectorOperator, "__init__", spy)
    H = t4a.models.heisenberg(12, conserve="Sz")
    psi0 = t4a.MPS.random(12, 2, bond_dim=8, seed=1, conserve="Sz", charge=0)
    t4a.dmrg(H, psi0, max_bond=32, sweeps=2, tol=0.0, noise=0.0, cutoff=1e-10)
    assert any(kind == "whole" and 300 < n < 700 for n, kind in paths), sorted(set(paths))
    assert any(kind == "matrix" and n <= 20 for n, kind in paths), sorted(set(paths))


def test_small_sides_take_the_dense_path_and_large_ones_the_blocks():
    """``absorb_mpo`` with a plan cache: sides of at most ``DENSE_ABSORB_ROWS`` rows on whole
    arrays, larger ones by blocks."""
    rng = np.random.default_rng(0)
    norm, q_site, c_env, c_out, bond, dtype, groups, env, _ = _problem(rng, 0, False, 2, 2, 2)
    rows = Pieces.rows(bond, q_site, norm)
    out, _ = sector_absorb.absorb_mpo(env, groups, c_out, rows, lambda q, s: (q, s), norm, np, dtype, {})
    assert isinstance(out, Dense) and sum(rows.size.values()) <= sector_dense.DENSE_ABSORB_ROWS
    out, _ = sector_absorb.absorb_mpo(env, groups, c_out, rows, lambda q, s: (q, s), norm, np, dtype, None)
    assert not isinstance(out, Dense)  # no plan cache: by blocks
