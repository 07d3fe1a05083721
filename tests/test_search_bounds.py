"""No search bound binds silently: where the best sits on a bound of the search, the search widens it
(up to a hard cap) or says so (afdlib.decode.search, the advice's ``on_bound``)."""
from dataclasses import replace

import numpy as np
import pytest

import afdlib.decode.batch as batch
import afdlib.decode.search as search
from afdlib.decision.advise import advise
from afdlib.decode.batch import best_batch
from afdlib.decode.deployment import decode_step
from afdlib.decode.search import best_afd, best_ep, compare, node_counts
from afdlib.decode.step import DECODE_T_GAP_S, ep_step
from afdlib.inputs.catalog import load_hardware
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)


@pytest.fixture(scope="module")
def coarse(ds):
    """DeepSeek-V3's shape with coarse experts (M = 16384, the sweet-spot maps' largest)."""
    return replace(ds, moe_intermediate_size=16384)


def test_node_counts_double_with_four_counts_each():
    assert node_counts(16).tolist() == list(range(1, 17))
    assert node_counts(64).tolist()[16:] == [20, 24, 28, 32, 40, 48, 56, 64]
    assert node_counts(search.AFD_NODE_CAP)[-1] == search.AFD_NODE_CAP


def test_a_best_on_the_old_bound_is_widened_to_a_better_interior_one(coarse, h800):
    old = best_afd(coarse, h800, h800, BUDGET, 4096, cap=16)        # the search before widening
    assert old.deployment.label == "14A16F" and bool(old.on_bound["n_ffn"])
    assert old.bound_words() == ["N_F = 16 nodes (the search's hard cap)"]
    new = best_afd(coarse, h800, h800, BUDGET, 4096)
    # 32 FFN nodes x 8 GPUs = 256 GPUs = E: one expert per FFN GPU instead of two at 16 nodes
    # (ceil(256 / 128) = 2), which frees the HBM the second expert's weights took
    assert new.deployment.label == "14A32F"
    assert float(new.tokens_per_s_per_gpu) > 1.2 * float(old.tokens_per_s_per_gpu)
    assert not new.bound.any() and new.searched["n_ffn"] > 32           # inside: the search went past it
    # the batch search of one deployment (decode_step) agrees with the vectorised one
    assert float(decode_step(coarse, replace(new.deployment, requests=None), 4096, BUDGET).tokens_per_s_per_gpu) \
        == pytest.approx(float(new.tokens_per_s_per_gpu))
    # against a plain search of every N_A, N_F in 1..32 (no widening): the same best
    full = best_afd(coarse, h800, h800, BUDGET, 4096, max_nodes=32, cap=32)
    assert float(full.tokens_per_s_per_gpu) == pytest.approx(float(new.tokens_per_s_per_gpu))


def test_nothing_binds_nothing_changes(ds, h800):
    ep, afd = compare(ds, h800, BUDGET, 4096)
    old = best_afd(ds, h800, h800, BUDGET, 4096, cap=16)
    # the deployments `afd advise --model deepseek-v3 --hardware h800` gave before the widening (AFD 6A3F
    # until its search took attention domains, issue 28: 9A5F in 2 domains of 2 micro-batches)
    assert (ep.deployment.label, afd.deployment.label) == ("EP32+0", "9A5F/2")
    assert float(afd.tokens_per_s_per_gpu) == float(old.tokens_per_s_per_gpu)
    assert afd.searched == {"n_attn": 16, "n_ffn": 16} and ep.searched["ep_size"] == 8 * 64
    assert not ep.bound.any() and not afd.bound.any()


def test_the_ep_grid_widens_where_larger_sizes_still_hold_an_expert(ds):
    tpu = load_hardware("tpu-v5p", profile="datasheet")                 # 4 chips per host: 4 x 64 = 256 < 256 + 32
    ep = best_ep(ds, tpu, BUDGET, 4096)
    assert ep.searched["ep_size"] == 4 * 128 and not ep.bound.any()
    # EP288 (256 + 32 redundant: one expert slot per GPU) was searched and is worse than the best
    _, st = best_batch(lambda r: ep_step(ds, tpu, 288, r, 4096, BUDGET, redundant=32), BUDGET.slo_s)
    assert float(st.tokens_per_s_per_gpu) < float(ep.tokens_per_s_per_gpu)


def test_a_cap_that_binds_is_reported(coarse, h800, monkeypatch):
    monkeypatch.setattr(search, "AFD_NODE_CAP", 16)
    adv = advise(coarse, h800, BUDGET, 4096, explain=False)
    assert adv.on_bound == ["AFD: N_F = 16 nodes (the search's hard cap)"]
    doc = adv.to_json()
    assert doc["on_bound"] == adv.on_bound and doc["afd"]["searched"] == {"n_attn": 16, "n_ffn": 16}
    monkeypatch.undo()
    assert advise(coarse, h800, BUDGET, 4096, explain=False).on_bound == []


def test_widened_cells_match_one_at_a_time(ds, h800):
    m = replace(ds, moe_intermediate_size=np.array([2048.0, 16384.0, 8192.0]))
    whole = compare(m, h800, BUDGET, 4096, cell_shape=(3,))
    chunked = compare(m, h800, BUDGET, 4096, cell_shape=(3,), chunk=1)
    for i, size in enumerate((2048, 16384, 8192)):
        one = compare(replace(ds, moe_intermediate_size=size), h800, BUDGET, 4096)
        for b_one, b_all, b_chunk in zip(one, whole, chunked):
            for b in (b_all.at(i), b_chunk.at(i)):
                assert b.deployment.label == b_one.deployment.label
                assert float(b.tokens_per_s_per_gpu) == pytest.approx(float(b_one.tokens_per_s_per_gpu))
                assert {k: float(v) for k, v in b.searched.items()} == {k: float(v) for k, v in b_one.searched.items()}
    assert whole[1].searched["n_ffn"].tolist() != [16.0] * 3      # a cell was widened, others not


def test_overrides_over_cells_are_taken_with_the_cells(ds, h800):
    """An assumption with a value per cell (the overlap what-ifs' shares) follows the cells a widening searches."""
    from afdlib.decode.step import Assumptions
    coarse = replace(ds, moe_intermediate_size=16384)
    shares = np.array([0.0, 1.0])
    both = best_afd(coarse, h800, h800, BUDGET, 4096, assumptions=Assumptions(afd_overlap=shares[:, None]),
                    cell_shape=(2,))
    assert both.searched["n_ffn"].min() > 16                      # both cells widened, to different bests
    assert both.at(0).deployment.label != both.at(1).deployment.label
    for i, s in enumerate(shares):
        one = best_afd(coarse, h800, h800, BUDGET, 4096, assumptions=Assumptions(afd_overlap=float(s)))
        assert both.at(i).deployment.label == one.deployment.label
        assert float(both.tokens_per_s_per_gpu[i]) == pytest.approx(float(one.tokens_per_s_per_gpu))


def test_the_reasons_say_where_the_search_widened_and_where_a_bound_binds():
    from afdlib.decode.bounds import search_reasons
    inside = {"n_attn": 56, "n_ffn": 8, "searched": {"n_attn": 64, "n_ffn": 64}, "on_bound": []}
    assert search_reasons("AFD", inside, {"n_attn": 16, "n_ffn": 16}) == [
        "AFD: the first grid's best sat on its bound (N_A, N_F <= 16 nodes); the search widened it to "
        "N_A, N_F <= 64 nodes and the best (56A8F) is inside"]
    capped = {"n_attn": 128, "n_ffn": 20, "searched": {"n_attn": 128, "n_ffn": 128},
              "on_bound": ["N_A = 128 nodes (the search's hard cap)"]}
    lines = search_reasons("AFD", capped, {"n_attn": 16, "n_ffn": 16})
    assert len(lines) == 2 and "is inside" not in lines[0] and "N_A = 128 nodes" in lines[1]
    untouched = {"ep_size": 32, "searched": {"ep_size": 512, "redundant": 32}, "on_bound": []}
    assert search_reasons("EP", untouched, {"ep_size": 512}) == []


def test_the_book_counts_pairs_and_cells_on_a_bound():
    from types import SimpleNamespace

    from afdlib.decode.bounds import bounds_reading
    rows = [{"on_bound": ""}, {"on_bound": "AFD: N_A = 128 nodes (the search's hard cap)"}, {"on_bound": ""}]
    maps = [SimpleNamespace(on_bound=2, ratio=np.zeros((3, 4))), SimpleNamespace(on_bound=0, ratio=np.zeros((3, 4)))]
    assert bounds_reading(rows, maps).endswith("a best sits on a bound in 1 of the 3 pairs and 2 of the maps' 24 cells")
    other = [{"model": "m", "hardware": "h", "on_bound": "AFD: N_A = 128 nodes (the search's hard cap)"}]
    assert bounds_reading(rows, (), {"held": other, "none": rows[:1]}).endswith(
        "in 1 of the 3 pairs (held: m on h, AFD: N_A = 128 nodes (the search's hard cap))")


def test_a_map_counts_its_cells_on_a_bound(ds, h800, monkeypatch):
    from afdlib.decision.sweetspot import ratio_map
    args = (ds, h800, BUDGET, 4096, [h800.scale_out_bytes_per_s], [2048, 16384], "moe_intermediate_size")
    assert ratio_map(*args).on_bound == 0
    monkeypatch.setattr(search, "AFD_NODE_CAP", 16)                     # the search before widening
    from afdlib.decision.sweetspot import family
    # the map counts a cell where either design's best, searched on its own, sits on the cap
    expect = 0
    for m in family(ds, "moe_intermediate_size", [2048, 16384]):
        ep, afd = compare(m, h800, BUDGET, 4096)
        expect += int(bool(np.any(ep.bound | afd.bound)))
    assert ratio_map(*args).on_bound == expect   # (0 here: the family members sit inside 16 nodes)


def test_a_catalogue_pair_on_the_cap_says_so():
    """GLM-4.7 on TPU v5p (4 chips per host): the AFD ratio keeps rising with the attention pool up to the
    cap. An independent brute force over afd_step (N_A 96..200 in steps of 8, N_F 1..40, every batch to
    1024) found 168A27F at 591 tokens/s per chip, 0.4% above the capped best: the cap does bind."""
    from afdlib.inputs.catalog import load_model
    tpu = load_hardware("tpu-v5p", profile="datasheet")
    best = best_afd(load_model("glm-4.7", profile="reference"), tpu, tpu, BUDGET, 4096)
    assert best.deployment.attention.nodes == search.AFD_NODE_CAP
    assert best.bound_words() == [f"N_A = {search.AFD_NODE_CAP} nodes (the search's hard cap)"]


def test_a_map_s_searches_find_the_same_bests_with_the_narrowed_batch_search(monkeypatch, ds):
    """A map's candidate-cells (thousands) find their batches with afdlib.decode.batch.largest; a pair's
    (hundreds) with bisection. A map searched each way gives the same best rate, batch and micro-batches
    in every cell (H800's scale-out and HBM varied over 3 x 2 cells)."""
    hw = load_hardware("h800", "datasheet")
    cells = replace(hw, scale_out_bytes_per_s=np.array([[10e9], [40e9], [160e9]]) * np.ones((1, 2)),
                    hbm_bytes_per_s=np.array([[2e12, 4e12]]) * np.ones((3, 1)))
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
    runs = []
    for narrowed_from in (1, 10 ** 12):                      # every search narrowed; none
        monkeypatch.setattr(batch, "NARROWED_FROM", narrowed_from)
        runs.append(compare(ds, cells, budget, 4096.0, cell_shape=(3, 2)))
    for fast, slow in zip(*runs):
        assert np.array_equal(fast.tokens_per_s_per_gpu, slow.tokens_per_s_per_gpu)
        for name in ("requests", "micro_batches"):
            assert np.array_equal(getattr(fast.deployment, name), getattr(slow.deployment, name))
        assert len(set(np.ravel(fast.deployment.requests))) > 1      # the cells differ
        assert np.all(fast.tokens_per_s_per_gpu > 0)
