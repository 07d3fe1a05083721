"""The pair's own EP load (afdlib.studies.ep_load) against its deployment's own numbers."""

from afdlib.decode.search import best_ep
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.studies.ep_load import own_ep_load


def test_the_own_load_is_the_best_deployments_tokens_over_its_physical_experts():
    ds, h800 = load_model("deepseek-v3"), load_hardware("h800", profile="paper")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)   # no MTP, as afd advise by default
    got = own_ep_load(ds, h800, budget, 4096)
    d = best_ep(ds, h800, budget, 4096).deployment
    # n = B q R K / (E + r): q = 1 token per request per step (no MTP), K = 8, E = 256
    expected = float(d.requests) * 1 * float(d.ep_size) * 8 / (256 + float(d.redundant))
    assert got["own_tokens"] == expected
    # H800's ridge: 1979e12 / (2 x 3.35e12) = 295 tokens per expert
    side = "above" if expected > 295.4 else "below"
    assert f"{side} the ridge of 295" in got["own_md"] and d.label in got["own_md"]


def test_no_feasible_ep_deployment_is_said_not_hidden():
    ds, h800 = load_model("deepseek-v3"), load_hardware("h800", profile="paper")
    got = own_ep_load(ds, h800, Budget(slo_s=1e-4), 4096)      # 0.1 ms per token: nothing meets it
    assert got["own_tokens"] is None and "No EP deployment" in got["own_md"]
