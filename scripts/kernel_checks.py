"""Checks (not fits) of the kernel profiles: prints each one before (datasheet) and after (calibrated).

    .venv/bin/python scripts/kernel_checks.py

(a) DeepSeek-V3 AFD 1A1F on H200, 3 micro-batches, 128 requests per attention GPU, context 4096, FP8
    KV cache: t_a and t_f per micro-batch against aiconfigurator's silicon-table estimate (209 us,
    524-590 us; data/aiconfigurator.csv rows grid-afd-deepseek-v3-h200-b128);
(b) StepFun's attention-layer times (Step-3 report Table 9, shared/reference/kernels.md section 3);
(c) the validation table (data/deployments.yaml);
(d) the aiconfigurator comparison: TPOT ratio medians per design.
"""
from __future__ import annotations

import pandas as pd

from afdlib.decode.deployment import AFDDeployment, decode_step
from afdlib.decode.step import Assumptions
from afdlib.decode.validation import attention_layer_rows, load_deployments, validation_rows
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision
from afdlib.peers.aiconfigurator import comparison_rows, load_results

PROFILES = ("datasheet", "calibrated", "roofline")


def h200_case(profile):
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h200", profile="datasheet")
    d = AFDDeployment.of(hw, 1, 1, micro_batches=3, requests=128)
    st = decode_step(model, d, 4096, Budget(l_accept=1.0, t_gap_s=0.0), Precision(kv_cache="fp8"),
                     Assumptions(kernel_profile=profile))
    return float(st.t_attn) * 1e6, float(st.t_ffn) * 1e6


def stepfun(profile):
    cols = ["model", "hardware", "context", "layer_us", "model_us", "error"]
    return pd.DataFrame(attention_layer_rows(Assumptions(kernel_profile=profile)))[cols].round(3)


def main():
    pd.set_option("display.width", 200)
    for p in PROFILES:
        print(f"(a) {p}: t_a {h200_case(p)[0]:.0f} us (aiconfigurator 209), t_f {h200_case(p)[1]:.0f} us (524-590)")
    for p in PROFILES:
        df = stepfun(p)
        print(f"(b) {p}: median |error| {df.error.abs().median():.3f}\n{df.to_string(index=False)}")
    cases = load_deployments()
    val = {p: pd.DataFrame(validation_rows(cases, Assumptions(kernel_profile=p))) for p in PROFILES}
    table = val["datasheet"][["case", "design", "published"]].copy()
    for p in PROFILES:
        table[f"err_{p}"] = val[p].error.round(3)
    print("(c)\n" + table.to_string(index=False))
    for p in PROFILES:
        e = val[p].error.abs()
        print(f"    {p}: median |error| {e.median():.3f}, max {e.max():.3f}; "
              + ", ".join(f"{d} median {val[p][val[p].design == d].error.abs().median():.3f}" for d in ("ep", "afd")))
    rows = load_results()
    for p in PROFILES:
        comp = pd.DataFrame(comparison_rows(rows, Assumptions(kernel_profile=p)))
        med = {d: comp[comp.design == d].ratio_tpot_ms.median() for d in ("ep", "afd")}
        print(f"(d) {p}: TPOT ratio median EP {med['ep']:.3f}, AFD {med['afd']:.3f}, "
              f"apart {abs(med['ep'] / med['afd'] - 1):.1%}; stage medians t_a "
              f"{comp.ratio_t_attn_us.median():.2f}, t_f {comp.ratio_t_ffn_us.median():.2f}")


if __name__ == "__main__":
    main()
