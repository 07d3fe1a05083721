"""Kernel times from NVIDIA aiconfigurator's measured ("silicon") tables, with the fractions of the
datasheet peaks they achieve: a measurement for issue 18 item 2 (kernel efficiency by shape).

    /tmp/aicvenv/bin/python scripts/aiconfigurator_kernels.py     # writes data/aiconfigurator_kernels.csv

Run it with a Python that has ``aiconfigurator==0.12.0`` installed (an optional extra, about
850 MB; not the project's venv). It imports no part of afdlib: it reads the tables the package ships
(``aiconfigurator_core/systems/data/<system>/<op>/trtllm/1.3.0rc20/*.parquet``, TensorRT-LLM
1.3.0rc20, latency in milliseconds per kernel call) and the datasheet peaks of ``data/hardware.yaml``.

Families (rows of the CSV; ``measured_us`` is the table's latency in microseconds):

* ``moe``: ``moe_perf.parquet``, one GPU's routed experts of one MoE layer (``op_name`` moe), FP8
  block-scaled weights (``fp8_block``), tensor parallel 1, EP 8, the DeepSeek-V3 shape (H 7168, M
  2048, 256 experts, top 8) and the Qwen3-235B-A22B shape (H 4096, M 1536, 128 experts, top 8).
  ``tokens`` is the token count of the whole EP group (aiconfigurator's MoE op: the all-to-all
  "globalizes tokens across all ep ranks"), so the mean tokens per expert is tokens * topk /
  experts. ``balanced`` spreads them evenly, ``power_law_1.01`` is aiconfigurator's default skew.
  Bytes and FLOPs are those of the balanced assignment: the weights of the local experts that get a
  token (min(experts / ep, tokens * topk / ep): the tables' own routing, whose times are flat once
  every local expert has a pair), 3 H M bytes each, plus the activations (FP8 in, BF16 out); FLOPs
  6 H M per token-expert pair. ``scripts/fit_kernels.py`` recomputes these bytes with the library's
  count (``afdlib.evaluator.grouped_gemm.balanced_active_experts``) and checks them against this column. For the power-law rows the fractions use the same
  balanced work (the table does not say which rank's load it timed): read them as "time against
  the balanced work".
  The same family from SGLang 0.5.10's wide-EP table (``wideep_generation_moe_perf.parquet``,
  ``kernel`` deepepmoe: DeepEP's low-latency layout and DeepGEMM's masked grouped GEMM, the kernel
  of the SGLang EP deployments), DeepSeek-V3 shape, ``uniform`` routing, EP 8, 16 and 32 where
  present; ``tokens`` is again the EP group's (its time is flat once every local expert has a token).
* ``mla``: ``generation_mla_perf.parquet``, the core MLA decode kernel (scores and values against
  the cache; BF16 compute, ``mla_dtype`` bfloat16), 128 heads (one GPU, TP 1), BF16 or FP8 cache.
  The cache holds ``isl + step`` tokens per request (``isl`` 1): that is ``context``. Bytes: batch *
  context * 576 elements * the cache's bytes; FLOPs: 2 * heads * (576 + 512) * context * batch,
  fractions of the BF16 peak.
* ``gemm``: ``gemm_perf.parquet``, dense FP8 block-scaled GEMMs (``fp8_block``) of DeepSeek-V3's
  shapes present in the table (N x K: 4096 x 7168 shared experts' gate-up, 7168 x 2048 their
  down projection, 7168 x 16384 the attention output projection; the table has no N 24576 for the
  query up projection), by M (tokens); on H100 and H200 also DeepGEMM's FP8 GEMM as SGLang 0.5.14 calls it
  (``gemm/sglang/0.5.14``, kernel sglang_deepgemm_gemm_nt_f8f8bf16: the kernel of the DeepGEMM README
  that data/kernel_efficiency.yaml is fitted to). Bytes: N K (FP8 weights) + M K (FP8 in) + 2 M N (BF16 out); FLOPs 2 M N K.

Peaks (``data/hardware.yaml``, the datasheet block of each device, whose sources it cites):
HBM in TB/s, FP8 and BF16 dense TFLOPS. Fractions: bytes / (time * HBM peak) and FLOPs / (time *
the dtype's peak): FP8 for ``moe`` and ``gemm``, BF16 for ``mla`` (on B200 and GB200 the FP8-cache
rows exceed 1 at large batch and context: that kernel computes faster than BF16 allows).
"""
from __future__ import annotations

import csv
import sys
from importlib import metadata, resources
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "aiconfigurator_kernels.csv"

SYSTEMS = {"h100": "h100_sxm", "h200": "h200_sxm", "b200": "b200_sxm", "gb200": "gb200"}
"""Our hardware slug -> aiconfigurator's system folder."""

BACKEND, VERSION = "trtllm", "1.3.0rc20"

MOE_SHAPES = (("deepseek-v3", 7168, 2048, 256, 8), ("qwen3-235b-a22b", 4096, 1536, 128, 8))
MOE_EP = 8
MOE_TOKENS = (8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192, 16384)
MOE_DISTRIBUTIONS = {"deepseek-v3": ("balanced", "power_law_1.01"), "qwen3-235b-a22b": ("balanced",)}

MLA_HEADS, MLA_KV_ELEMENTS, MLA_QK, MLA_V = 128, 576, 576, 512
MLA_BATCHES = (1, 8, 32, 64, 128, 256, 512)
MLA_CONTEXTS = (1024, 4096, 16384)
KV_BYTES = {"bfloat16": 2, "fp8": 1}

GEMM_SHAPES = ((4096, 7168), (7168, 2048), (7168, 16384))
GEMM_M = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
DEEPGEMM_SYSTEMS, DEEPGEMM_VERSION, DEEPGEMM_KERNEL = ("h100", "h200"), "0.5.14", "sglang_deepgemm_gemm_nt_f8f8bf16"

COLUMNS = ["system", "family", "model", "kernel", "dtype", "kv_dtype", "distribution", "hidden", "inter",
           "experts", "topk", "ep", "tokens", "tokens_per_expert", "heads", "batch", "context", "m", "n", "k",
           "measured_us", "bytes", "flops", "peak_hbm_tb_s", "peak_tflops", "hbm_fraction", "flop_fraction"]


WIDEEP_VERSION, WIDEEP_EP = "0.5.10", (8, 16, 32)


def table(system: str, op: str, name: str, backend: str = BACKEND, version: str = VERSION) -> pd.DataFrame:
    base = resources.files("aiconfigurator_core") / "systems" / "data" / system / op / backend / version
    return pd.read_parquet(str(base / f"{name}.parquet"))


def peaks() -> dict:
    hw = yaml.safe_load((ROOT / "data" / "hardware.yaml").read_text())["hardware"]
    return {slug: hw[slug]["datasheet"] for slug in SYSTEMS}


def _row(system, family, us, nbytes, flops, hbm_tb, tflops, **shape) -> dict:
    r = dict.fromkeys(COLUMNS, "")
    r.update(shape, system=system, family=family, measured_us=round(us, 3), bytes=int(nbytes), flops=int(flops),
             peak_hbm_tb_s=hbm_tb, peak_tflops=tflops,
             hbm_fraction=round(nbytes / (us * 1e-6 * hbm_tb * 1e12), 4),
             flop_fraction=round(flops / (us * 1e-6 * tflops * 1e12), 4))
    return r


def _moe_row(slug, peak, q, model, h, m, e, topk, ep, t, dist) -> dict:
    pairs = t * topk / ep                      # token-expert pairs on one GPU
    active = min(e / ep, pairs)
    nbytes = active * 3 * h * m + pairs * h * (1 + 2)
    return _row(slug, "moe", float(q.latency.median()) * 1e3, nbytes, 6 * pairs * h * m, peak["hbm_tb_per_s"],
                peak["fp8_tflops"], model=model, kernel=q.kernel_source.iloc[0], dtype="fp8_block",
                distribution=dist, hidden=h, inter=m, experts=e, topk=topk, ep=ep, tokens=t,
                tokens_per_expert=round(t * topk / e, 3))


def moe_rows(slug: str, peak: dict) -> list[dict]:
    d = table(SYSTEMS[slug], "moe", "moe_perf")
    d = d[(d.op_name == "moe") & (d.moe_dtype == "fp8_block") & (d.moe_tp_size == 1) & (d.moe_ep_size == MOE_EP)]
    rows = []
    for model, h, m, e, topk in MOE_SHAPES:
        s = d[(d.hidden_size == h) & (d.inter_size == m) & (d.num_experts == e) & (d.topk == topk)]
        for dist in MOE_DISTRIBUTIONS[model]:
            for t in MOE_TOKENS:
                q = s[(s.distribution == dist) & (s.num_tokens == t)]
                if not q.empty:
                    rows.append(_moe_row(slug, peak, q, model, h, m, e, topk, MOE_EP, t, dist))
    model, h, m, e, topk = MOE_SHAPES[0]
    w = table(SYSTEMS[slug], "moe", "wideep_generation_moe_perf", "sglang", WIDEEP_VERSION)
    w = w[(w.moe_dtype == "fp8_block") & (w.distribution == "uniform") & (w.hidden_size == h) & (w.inter_size == m)
          & (w.num_experts == e) & (w.topk == topk) & (w.moe_tp_size == 1)]
    for ep in WIDEEP_EP:
        for t in sorted(w[w.moe_ep_size == ep].num_tokens.unique()):
            q = w[(w.moe_ep_size == ep) & (w.num_tokens == t)]
            rows.append(_moe_row(slug, peak, q, model, h, m, e, topk, ep, int(t), "uniform"))
    return rows


def mla_rows(slug: str, peak: dict) -> list[dict]:
    d = table(SYSTEMS[slug], "mla", "generation_mla_perf")
    d = d[(d.num_heads == MLA_HEADS) & (d.tp_size == 1) & (d.mla_dtype == "bfloat16")]
    rows = []
    for kv, kv_bytes in KV_BYTES.items():
        for b in MLA_BATCHES:
            for ctx in MLA_CONTEXTS:
                q = d[(d.kv_cache_dtype == kv) & (d.batch_size == b) & (d.isl + d.step == ctx)]
                if q.empty:
                    continue
                rows.append(_row(slug, "mla", float(q.latency.median()) * 1e3, b * ctx * MLA_KV_ELEMENTS * kv_bytes,
                                 2 * MLA_HEADS * (MLA_QK + MLA_V) * ctx * b, peak["hbm_tb_per_s"],
                                 peak["bf16_tflops"], model="deepseek-v3", kernel=q.kernel_source.iloc[0],
                                 dtype="bfloat16", kv_dtype=kv, heads=MLA_HEADS, batch=b, context=ctx))
    return rows


def gemm_rows(slug: str, peak: dict) -> list[dict]:
    d = table(SYSTEMS[slug], "gemm", "gemm_perf")
    d = d[d.gemm_dtype == "fp8_block"]
    if slug in DEEPGEMM_SYSTEMS:
        g = table(SYSTEMS[slug], "gemm", "gemm_perf", "sglang", DEEPGEMM_VERSION)
        d = pd.concat([d, g[(g.gemm_dtype == "fp8_block") & (g.kernel_source == DEEPGEMM_KERNEL)]])
    rows = []
    for n, k in GEMM_SHAPES:
        for m in GEMM_M:
            for kernel, q in d[(d.m == m) & (d.n == n) & (d.k == k)].groupby("kernel_source"):
                rows.append(_row(slug, "gemm", float(q.latency.median()) * 1e3, n * k + m * k + 2 * m * n,
                                 2 * m * n * k, peak["hbm_tb_per_s"], peak["fp8_tflops"], model="deepseek-v3",
                                 kernel=kernel, dtype="fp8_block", m=m, n=n, k=k))
    return rows


def main() -> int:
    pk = peaks()
    rows = [r for slug in SYSTEMS for f in (moe_rows, mla_rows, gemm_rows) for r in f(slug, pk[slug])]
    version = metadata.version("aiconfigurator")
    with OUT.open("w", newline="") as fh:
        fh.write(f"# Written by scripts/aiconfigurator_kernels.py from aiconfigurator {version}'s measured tables "
                 f"(aiconfigurator_core/systems/data/<system>/{{moe,mla,gemm}}/{BACKEND}/{VERSION}/: moe_perf, "
                 f"generation_mla_perf, gemm_perf; moe/sglang/{WIDEEP_VERSION}/wideep_generation_moe_perf, "
                 f"gemm/sglang/{DEEPGEMM_VERSION}/gemm_perf). Peaks: data/hardware.yaml datasheet. See the script's docstring "
                 "for the columns, bytes and FLOPs.\n")
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{OUT.relative_to(ROOT)}: {len(rows)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
