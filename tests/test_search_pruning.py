"""The batch search's pruning (afdlib.decode.batch.Rivals): a candidate that cannot beat its cell's best
leaves the search early, and cells that differ only in their SLO share probes; each cell's best rate and
the candidate reaching it stay those of the search without either."""
from types import SimpleNamespace

import numpy as np

from afdlib.decode.batch import Rivals, largest


def _steps(cells: int, per_cell: int, seed: int = 0):
    """A synthetic step per point: TPOT = a + b x batch (grows with the batch), rate = batch / TPOT /
    gpus, a memory capacity of c requests; (step_at, counter of probes)."""
    rng = np.random.default_rng(seed)
    n = cells * per_cell
    a, b = rng.uniform(5e-3, 2e-2, n), rng.uniform(1e-5, 1e-3, n)
    gpus, cap = rng.integers(8, 129, n).astype(float), rng.integers(50, 5000, n).astype(float)
    probes = [0]

    def step_at(req, at):
        probes[0] += at.size
        t = a[at] + b[at] * req
        mem = SimpleNamespace(capacity_bytes=cap[at], weights_bytes=np.zeros(at.size))
        return SimpleNamespace(tpot_s=t, fits_memory=req <= cap[at], tokens_per_s_per_gpu=req / t / gpus[at],
                               memory_bytes=req, memory=[mem], requests=req,
                               afd=SimpleNamespace(attn_memory_bytes=req))
    return step_at, probes


def _best(rate, cells, per_cell):
    r = rate.reshape(cells, per_cell)
    return r.max(axis=1), r.argmax(axis=1)


def test_pruned_search_keeps_each_cells_best_and_where_it_is_with_fewer_probes():
    cells, k = 6, 200
    slo = np.repeat([0.03, 0.05, 0.1, 0.03, 0.05, 0.1], k)
    step_at, probes = _steps(cells, k)
    n0, r0, _ = largest(step_at, slo, cells * k, 2 ** 16, "ep")
    plain = probes[0]
    step_at, probes = _steps(cells, k)
    eligible = np.ones(cells * k, bool)
    n1, r1, _ = largest(step_at, slo, cells * k, 2 ** 16, "ep", Rivals(k, eligible, np.zeros(cells)))
    best0, at0 = _best(np.where(n0 > 0, r0, 0.0), cells, k)
    best1, at1 = _best(np.where(n1 > 0, r1, 0.0), cells, k)
    assert np.array_equal(best0, best1) and np.array_equal(at0, at1)
    assert probes[0] < plain                         # the pruning saves probes (a property, not a time)
    # a pruned candidate keeps a feasible batch below its own largest, never above it
    assert np.all(n1 <= n0)


def test_slo_twins_share_probes_and_change_no_best():
    """Cells 3..5 repeat cells 0..2's steps at other SLOs (twins 0, 1, 2): the same bests as searched
    apart, with fewer probes (round 0 at one request is the same step for twins)."""
    cells, k = 6, 100
    step_at, _ = _steps(3, k)

    def twin_at(req, at):                      # cells 3..5: cells 0..2's steps
        return step_at(req, at % (3 * k))
    slo = np.repeat([0.03, 0.05, 0.1, 0.1, 0.03, 0.05], k)
    counted = [0]

    def counting(req, at):
        counted[0] += at.size
        return twin_at(req, at)
    eligible = np.ones(cells * k, bool)
    n0, r0, _ = largest(counting, slo, cells * k, 2 ** 16, "ep", Rivals(k, eligible, np.zeros(cells)))
    apart = counted[0]
    counted[0] = 0
    n1, r1, _ = largest(counting, slo, cells * k, 2 ** 16, "ep",
                        Rivals(k, eligible, np.zeros(cells), np.array([0, 1, 2, 0, 1, 2])))
    assert counted[0] < apart
    b0, i0 = _best(np.where(n0 > 0, r0, 0.0), cells, k)
    b1, i1 = _best(np.where(n1 > 0, r1, 0.0), cells, k)
    assert np.array_equal(b0, b1) and np.array_equal(i0, i1)
