"""Lanczos keeps its Krylov basis in a per-thread buffer between calls
(tensor4all.linalg.eigensolver._krylov_basis): the results are those of exact diagonalization
whatever came before, the returned vector never aliases the buffer, and two threads solving
at once (their products interleaved) do not share it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tensor4all.linalg import eigensolver


class _Matrix:
    def __init__(self, h: np.ndarray, pause: float = 0.0):
        self.h, self.shape, self.dtype, self.pause = h, h.shape, h.dtype, pause

    def matvec(self, x: np.ndarray) -> np.ndarray:
        if self.pause:
            time.sleep(self.pause)  # lets the other thread run between products
        return self.h @ x


def _hermitian(n: int, complex_: bool, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if complex_ else 0)
    return (a + a.conj().T) / 2


@pytest.mark.parametrize("complex_", [False, True])
def test_results_do_not_depend_on_earlier_calls(complex_):
    for n, seed in [(60, 1), (25, 2), (90, 3), (60, 1)]:  # the buffer grows, shrinks, is reused
        h = _hermitian(n, complex_, seed)
        v0 = np.ones(n, dtype=h.dtype)
        e, v, _ = eigensolver.lanczos(_Matrix(h), v0, tol=1e-14, max_iter=n)
        w = np.linalg.eigvalsh(h)
        assert abs(e - w[0]) < 1e-10
        assert np.linalg.norm(h @ v - e * v) < 1e-6
        held = getattr(eigensolver._WORKSPACE, h.dtype.char)
        assert not np.shares_memory(v, held)


def test_threads_do_not_share_the_basis():
    problems = [_hermitian(40, False, 10), _hermitian(40, False, 11)]
    results: dict[int, float] = {}

    def solve(i: int) -> None:
        e, v, _ = eigensolver.lanczos(_Matrix(problems[i], pause=1e-4), np.ones(40), tol=1e-14, max_iter=40)
        results[i] = e

    threads = [threading.Thread(target=solve, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, h in enumerate(problems):
        assert abs(results[i] - np.linalg.eigvalsh(h)[0]) < 1e-10


class _Nested(_Matrix):
    """An operator whose product solves another eigenproblem of the same dtype first."""

    def __init__(self, h: np.ndarray, inner: np.ndarray):
        super().__init__(h)
        self.inner = inner

    def matvec(self, x: np.ndarray) -> np.ndarray:
        e, _, _ = eigensolver.lanczos(_Matrix(self.inner), np.ones(len(self.inner)), tol=1e-14, max_iter=30)
        assert abs(e - np.linalg.eigvalsh(self.inner)[0]) < 1e-10
        return self.h @ x


def test_a_solve_within_a_product_gets_its_own_basis():
    h, inner = _hermitian(50, False, 20), _hermitian(30, False, 21)
    e, v, _ = eigensolver.lanczos(_Nested(h, inner), np.ones(50), tol=1e-14, max_iter=50)
    assert abs(e - np.linalg.eigvalsh(h)[0]) < 1e-10
    assert np.linalg.norm(h @ v - e * v) < 1e-6
    assert not eigensolver._WORKSPACE.busy
