"""The landing page of a book built for your own pair (``afd book --hardware H --model M --out DIR``).

It opens with the answer for the pair, computed by :func:`afdlib.decision.advise.advise` at the
sweet-spot chapter's settings (its parameters cell: SLO, context, MTP, hardware profile; the decode
model's gap per step): EP or AFD, P(AFD better) and the one-line verdict, AFD / EP at the model's
defaults and its 10th-90th percentile, each design's best deployment, the two assumptions that move
the ratio most and any search bound the best sits on. A table follows with one computed line per
chapter of the book, each at that chapter's own settings (its parameters cell, with the values the
book passes it). With only ``--hardware`` (``--model``) the pair takes the sweet-spot chapter's
reference model (device) for the other, and the page says so.

Labels are the files' own names (``Hardware.name``, ``Model.name``); the arguments given appear only
as code, where they say how the book was called.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from afdlib.decision.advise import Advice, advise
from afdlib.decision.threshold import break_even_scale_out
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.decision.uncertainty import DECIDED
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SWEET = "sweet_spots"


def chapter_defaults(name: str, folder: Path | None = None) -> dict:
    """The literal values of a chapter's parameters cell (``notebooks/NAME.py``, the cell tagged
    ``parameters``); a value that is an expression (``14800 / 8``) is left out."""
    text = ((folder or NOTEBOOKS) / f"{name}.py").read_text(encoding="utf-8")
    cell = text.split('# %% tags=["parameters"]', 1)[1].split("\n# %%", 1)[0]
    out = {}
    for node in ast.parse(cell).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def chapter_settings(name: str, params: dict[str, dict], folder: Path | None = None) -> dict:
    """A chapter's parameters as the book runs it: its defaults with the book's values for it."""
    return {**chapter_defaults(name, folder), **params.get(name, {})}


def _pct(x: float) -> str:
    return f"{x:.1%}" if x < 0.995 else f"{x:.0%}"


def _gb(x: float) -> str:
    return f"{x / 1e9:,.0f}" if x >= 10e9 else f"{x / 1e9:.1f}"


class Pair:
    """The pair the landing page answers for, at the sweet-spot chapter's settings."""

    def __init__(self, hardware: str | None, model: str | None, params: dict[str, dict], folder: Path | None = None):
        s = chapter_settings(SWEET, params, folder)
        self.hardware_arg, self.model_arg = hardware or s["ordinary"], model or s["reference_model"]
        self.given = {"hardware": hardware is not None, "model": model is not None}
        self.hw = load_hardware(self.hardware_arg, profile=s["hw_profile"])
        self.model = load_model(self.model_arg, profile="reference")
        self.slo_ms, self.context, self.mtp = float(s["slo_ms"]), float(s["context"]), float(s["mtp"])
        self.budget = Budget(slo_s=self.slo_ms / 1e3, l_accept=self.mtp, t_gap_s=DECODE_T_GAP_S)
        self.folder, self.params, self.settings = folder, params, s
        try:
            self.advice: Advice | None = advise(self.model, self.hw, self.budget, self.context)
            self.refused = ""
        except AfdError as e:      # neither design is feasible, or the model has no attention block
            self.advice, self.refused = None, str(e)

    @property
    def label(self) -> str:
        return f"{self.model.name} on {self.hw.name}"

    def settings_words(self) -> str:
        profile = {"datasheet": "the device's datasheet figures times the named efficiencies",
                   "paper": "the paper's Table 5 figures",
                   "user": "the device file's own figures, taken as sustained"}.get(self.hw.profile, self.hw.profile)
        mtp = "no MTP" if self.mtp == 1 else f"MTP accepting {self.mtp:g} tokens per step"
        return (f"SLO {self.slo_ms:g} ms per output token, context {self.context:,.0f} tokens, {mtp}, "
                f"{profile}, gap per step {DECODE_T_GAP_S * 1e3:g} ms")


# --- the answer ----------------------------------------------------------------------------------

def _deployment_rows(a: Advice) -> list[str]:
    rows = ["| design | best deployment | form | GPUs | output tokens/s per GPU | TPOT |", "|:--|:--|:--|--:|--:|--:|"]
    for design, doc in (("EP", a.ep), ("AFD", a.afd)):
        if not doc.get("feasible"):
            rows.append(f"| {design} | none meets the SLO and fits in memory | - | - | - | - |")
            continue
        what = (f"EP{doc['ep_size']}, {doc['redundant']} redundant experts, {doc['batch_per_gpu']} requests per GPU"
                if design == "EP" else
                f"{doc['n_attn']}A{doc['n_ffn']}F, {doc['batch_per_gpu']} requests per attention GPU")
        rows.append(f"| {design} | {what} | {doc['form']} | {doc['gpus']:,} | {doc['tokens_per_s_per_gpu']:,.0f} | "
                    f"{doc['tpot_ms']:.1f} ms |")
    return rows


def answer_markdown(pair: Pair, note: str = "") -> str:
    """The opening: the answer for the pair, its probability and spread, the best deployments, what
    moves the ratio most and any search bound the best sits on."""
    a = pair.advice
    if a is None:
        return f"**No answer for {pair.label}** at these settings: {pair.refused}.{note}\n"
    v = a.verdict
    if v is not None:
        more = "" if a.decisive else (f": {v.recommendation} is the more likely design, but a verdict is decided "
                                      f"only at P(AFD better) <= {DECIDED:g} or >= {1 - DECIDED:g} under both the free "
                                      "search and the one held to validated forms, and never on a search bound"
                                      + (f" ({a.decision})" if v.decided else ""))
        head = f"**The answer for {pair.label}: {a.words()}**{more}."
        lo, hi = v.ratio_interval
        ratio = (f"AFD gives **{a.ratio:.2f}x** EP's output tokens per second per GPU at the model's defaults, "
                 f"and {lo:.2f}x to {hi:.2f}x between the 10th and 90th percentile of the model's uncertain "
                 "assumptions (kernel and network speeds, the gap per step, the model's error in AFD / EP "
                 "against published head-to-heads). Each design's best deployment is in {numref}`custom-landing-best`.")
        top = [f"{t['assumption']} ({t['low']:.2f}x to {t['high']:.2f}x at its {t['at']} percentile)"
               for t in v.tornado[:2]]
        moves = f"The ratio moves most with {' and '.join(top)}." if top else ""
    else:
        only = "AFD" if a.ratio is None else "EP"
        other = "EP" if only == "AFD" else "AFD"
        head = (f"**The answer for {pair.label}: {only}**: {other} has no deployment that meets the SLO and fits "
                "in memory.")
        ratio, moves = "", ""
    bound = ""
    if a.on_bound:
        bound = ("The search's best sits on a bound (" + "; ".join(a.on_bound)
                 + "): that design may do better than found.")
    table = "\n".join(_deployment_rows(a))
    return f"""{head}{note}

{ratio}

```{{table}} The best deployment of each design for {pair.label}
:name: custom-landing-best

{table}
```

{moves} {bound}
""".replace("\n\n\n", "\n\n")


# --- one computed line per chapter, at the chapter's own settings ------------------------------------

def _fig2(pair: Pair, p: dict) -> str:
    """The intensity chapter's own Result (:func:`afdlib.report.intensity_words.result_words`) at its settings."""
    import pandas as pd

    from afdlib.analysis.intensity import intensity_sweep
    from afdlib.report.intensity_words import result_words
    m, hw = load_model(p["model"], profile=p["model_profile"]), load_hardware(p["hardware"], profile=p["hw_profile"])
    sweep = pd.DataFrame(intensity_sweep(m, hw, np.arange(1, int(p["n_ffn_max"]) + 1)))
    return result_words(sweep, m.name, hw.name, m.experts_per_token, hw.bandwidth_ratio)


def _fig3(pair: Pair, p: dict) -> str:
    from afdlib.analysis.hfu import hfu_sweep
    from afdlib.evaluator.grouped_gemm import ridge_tokens_per_expert
    hw, m = load_hardware(p["hardware"][0], profile=p["hw_profile"]), load_model(p["afd_model"])
    ridge = float(ridge_tokens_per_expert(hw.flops, hw.hbm_bytes_per_s))
    best = hfu_sweep(m, hw, np.arange(1, 65))[1].max_hfu
    afd = (f"the AFD FFN side of {m.name} peaks at {_pct(best)} of peak there" if best is not None
           else f"the AFD FFN side of {m.name} has no feasible N_F up to 64 there")
    return f"a grouped GEMM on {hw.name} reaches its compute roof from {ridge:,.0f} tokens per expert; {afd}"


def _fig4(pair: Pair, p: dict) -> str:
    from afdlib.analysis.hfu import grid_summaries, hfu_grid
    hw = load_hardware(pair.hardware_arg, profile=p["hw_profile"])
    g = int(p["gpus_per_node"] or hw.gpus_per_node)        # None: the device's own node
    hw_g = hw.with_overrides(gpus_per_node=g)
    m = load_model(pair.model_arg, profile=p["model_profile"])
    n = np.arange(1, int(p["n_ffn_max"]) + 1)
    budget = Budget(slo_s=p["slo_ms"] / 1e3, l_accept=p["mtp"], t_gap_s=p["t_gap_ms"] / 1e3)
    s = grid_summaries([m], [hw_g], n, hfu_grid([m], [hw_g], n, budget,
                                               hbm_usable_fraction=p["hbm_usable_fraction"]))[hw_g.slug, m.slug]
    nodes = "" if g == hw.gpus_per_node else f" (taken as {g}-GPU nodes, the chapter's `gpus_per_node`)"
    peak = (f"peaks at {_pct(s.max_hfu)} (first at N_F = {s.best_n_ffn})" if s.max_hfu is not None
            else f"has no feasible N_F up to {n[-1]}")
    floor = ("on its one fabric there is no dead zone" if np.all(hw.superpod) else
             f"its dead-zone floor is {_pct(s.dead_zone_floor)}")
    return (f"the HFU bound of {m.name}'s FFN side on {hw.name}{nodes} {peak}; {floor} (SLO {p['slo_ms']:g} ms, "
            f"{p['mtp']:g} tokens accepted per step, gap {p['t_gap_ms']:g} ms)")


def _appendix_a(pair: Pair, p: dict) -> str:
    from afdlib.analysis.hfu import comm_ceiling, dead_zone_floor, intermediate_size_for_full_hfu
    hw, m = load_hardware(p["ordinary"], profile=p["hw_profile"]), load_model(pair.model_arg)
    pod = load_hardware(p["superpod"], profile=p["hw_profile"])
    if pair.given["hardware"] and pair.hw.superpod:       # the device is the appendix's Superpod: no dead zone
        bw = pod.scale_up_bytes_per_s                     # its fabric feeds every FFN rank (BW_eff)
        need = float(intermediate_size_for_full_hfu(bw, pod.flops))
        at = float(min(1.0, comm_ceiling(1, m.experts_per_token, bw, bw, m.moe_intermediate_size, pod.flops)))
        return (f"on {pod.name}'s fabric an expert needs M >= {need:,.0f} for 100% HFU (no dead zone: one fabric); "
                f"{m.name}'s M = {m.moe_intermediate_size:,} sits at {_pct(at)}")
    need = float(intermediate_size_for_full_hfu(hw.scale_out_bytes_per_s, hw.flops))
    floor = float(dead_zone_floor(hw.scale_out_bytes_per_s, m.moe_intermediate_size, hw.flops))
    return (f"in the dead zone of {hw.name} an expert needs M >= {need:,.0f} for 100% HFU; {m.name}'s M = "
            f"{m.moe_intermediate_size:,} sits at {_pct(floor)}")


def _sigma(pair: Pair, p: dict) -> str:
    a = pair.advice
    hw = load_hardware(p["hardware"], profile=p["hw_profile"]).name
    where = f"the chapter derives the balancedness sigma from DeepSeek-V3's routing statistics on {hw}"
    if a is None or not (a.ep.get("feasible") and a.afd.get("feasible")):
        return where
    return (f"{where}; for {pair.model.name}'s own best deployments (`afd advise`, not in the chapter) the "
            f"decode model's sigma keeps {a.ep['imbalance_alpha']:.1%} of EP's balanced throughput (sigma "
            f"{a.ep['sigma']:.3f}) and {a.afd['imbalance_alpha']:.1%} of AFD's (sigma {a.afd['sigma']:.3f})")


def _pipeline(pair: Pair, p: dict) -> str:
    a = pair.advice
    if a is None or not a.afd.get("feasible"):
        return f"AFD has no feasible deployment for {pair.label} to simulate at these settings"
    d = a.afd
    domains = int(d.get("domains", 1))
    form = (f"the attention pool in {domains} domains of {d['micro_batches']} micro-batches" if domains > 1
            else f"{d['micro_batches']} micro-batches")
    simulated = ("the chapter simulates what jitter costs it" if domains == 1 else
                 "the chapter simulates what jitter costs the best one-domain deployments (2, 3 and 4 micro-batches), "
                 "not this form")
    return (f"the best AFD deployment (`afd advise`), {d['n_attn']}A{d['n_ffn']}F with {form}, runs "
            f"at the pace of its {PACE.get(d['pace'], d['pace'])} stage, the FFN pool idle {d['bubble_ffn']:.0%} and the attention pool "
            f"{d['bubble_attn']:.0%} of the time without jitter; {simulated}")


PACE = {"attention": "attention", "ffn": "FFN", "comm": "communication"}


def _sweet(pair: Pair, p: dict) -> str:
    a = pair.advice
    if a is None or a.verdict is None:
        return f"{pair.label}: {a.words() if a is not None else pair.refused}"
    bw, _ = break_even_scale_out(pair.model, pair.hw, pair.budget, pair.context, Precision(), Assumptions())
    now = pair.hw.scale_out_bytes_per_s
    what = "fabric" if pair.hw.superpod else "scale-out"
    flip = (f"AFD and EP break even at a {what} bandwidth of {_gb(bw)} GB/s per GPU, sustained (now {_gb(now)} GB/s)"
            if bw is not None else f"no {what} bandwidth from 1/16 to 64 times today's {_gb(now)} GB/s per GPU "
                                   "flips the answer")
    return f"{a.words()}; {flip}{_pools(pair)}"


def _pools(pair: Pair) -> str:
    """The sweet-spot chapter's heterogeneous pools for the pair (its ``attention_pool`` device's attention
    nodes with the pair's device's FFN nodes, and the reverse), in words: when they cost less per output
    token than EP on either device alone (one AFD-favourable result the answer above does not hold)."""
    from afdlib.decision.sweetspot import pools_table
    from afdlib.report.computed import shared
    from afdlib.studies.sweetspot_study import design_named, heterogeneous_design, heterogeneous_price_reading, pools_rows
    other = load_hardware(pair.settings["attention_pool"], profile=pair.settings["hw_profile"])
    if other.slug == pair.hw.slug:
        return ""
    try:
        pools = shared(pools_table, pair.model, [(other, pair.hw), (pair.hw, other), (pair.hw, pair.hw), (other, other)],
                       pair.budget, pair.context, prices=pair.settings.get("prices"))   # the chapter's call: shared
    except AfdError:
        return ""
    rows = pools_rows(pools, [other.slug, pair.hw.slug], priced=False)
    words = []
    for attn, ffn in ((other, pair.hw), (pair.hw, other)):
        design = heterogeneous_design(rows, attn.slug, ffn.slug)
        if design != "none":
            words.append(f"{design_named(design, [other, pair.hw])} is {heterogeneous_price_reading(rows, attn, ffn)}")
    return ("; heterogeneous pools: " + "; ".join(words)) if words else ""


def _sweeps(pair: Pair, p: dict) -> str:
    """The model's own crossing along the chapter's bandwidth axis (its table's "own" columns)."""
    from afdlib.sweep.grid import dataset
    from afdlib.sweep.readings import FROM_BOTTOM, NEVER, crossing
    from afdlib.sweep.spec import parse
    from afdlib.sweep.study import bandwidth_axis, bandwidth_range
    hw = load_hardware(p["hardware"], profile=p["hw_profile"])
    axis = bandwidth_axis(hw)
    bw = p["bandwidth"] or bandwidth_range(hw, axis)
    spec = parse({"model": p["model"], "hardware": p["hardware"], "design": "both", "hw_profile": p["hw_profile"],
                  "vary": {axis: bw}, "fixed": {"slo_ms": p["slo_ms"], "context": p["context"]}})
    c = crossing(dataset(spec).compute(scheduler="synchronous").afd_over_ep, axis)
    over, back, where = float(c.overtake), float(c.retake), str(c.where)
    x = spec.axes[axis]
    what = (f"GB/s per GPU of {'scale-up fabric' if axis == 'scale_up_gb_per_s' else 'scale-out'}, as the "
            "datasheet gives it")       # the sweet-spot row's break-even is sustained: each row says which
    name = load_model(p["model"], profile="reference").name
    if where == NEVER:
        return f"{name} itself: AFD does not overtake EP from {_bw(x[0])} to {_bw(x[-1])} {what}"
    start = (f"AFD leads EP from the bottom of the range ({_bw(x[0])} {what})" if where == FROM_BOTTOM
             else f"AFD overtakes EP at {_bw(over)} {what}")
    end = (f"EP leads again above {_bw(back)} GB/s (datasheet)" if np.isfinite(back)
           else f"AFD still leads at {_bw(x[-1])} GB/s (datasheet)")
    return f"{name} itself: {start}; {end}"


def _bw(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


LINES = {"fig2_intensity": _fig2, "fig3_grouped_gemm": _fig3, "fig4_dead_zone": _fig4,
         "appendix_a_ceiling": _appendix_a, "sigma_from_routing": _sigma, "pipeline_jitter": _pipeline,
         "sweet_spots": _sweet, "sweeps": _sweeps}
"""One computed line per chapter a custom book runs (a new chapter that takes a pair adds its own)."""


def chapter_rows(pair: Pair, names: list[str]) -> list[str]:
    """The table of what each chapter of the book finds for the pair, in the book's order."""
    rows = ["| chapter | for this pair |", "|:--|:--|"]
    for name in names:
        line = LINES[name](pair, chapter_settings(name, pair.params, pair.folder)) if name in LINES else ""
        rows.append(f"| {{doc}}`generated/{name}` | {line[:1].upper() + line[1:] if line else 'computed in the chapter'} |")
    return rows


def landing_markdown(what: str, built_for: str, hardware: str | None, model: str | None,
                     params: dict[str, dict], names: list[str], folder: Path | None = None) -> str:
    """The custom book's ``intro.md``: the answer for the pair, then what each chapter finds for it,
    then what the book is. ``hardware``/``model``: the arguments (slugs or absolute paths);
    ``params``: the notebooks' parameters (:func:`afdlib.report.own_book.custom_parameters`); ``names``:
    the chapters run, in order."""
    pair = Pair(hardware, model, params, folder)
    filled = "".join(
        f"\n\nBuilt with only `--{given}`: the {kind} is the sweet-spot chapter's reference {kind}, {obj.name}; "
        f"give `--{missing}` as well for a pair of your own."
        for given, missing, kind, obj in (("hardware", "model", "model", pair.model), ("model", "hardware", "device", pair.hw))
        if pair.given[given] and not pair.given[missing])
    table = "\n".join(chapter_rows(pair, names))
    return f"""# AFD vs EP for {what}

{answer_markdown(pair, filled).rstrip()}

These are `afd advise`'s numbers for this pair at the sweet-spot chapter's settings ({pair.settings_words()});
`afd advise --hardware {pair.hardware_arg} --model {pair.model_arg}` gives its reasons.

## What each chapter finds for {pair.label}

{{numref}}`custom-landing-chapters` gives one line per chapter, computed for this pair at the chapter's
own settings (its parameters, with the values this book passes it).

```{{table}} What each chapter of this book finds for {pair.label}
:name: custom-landing-chapters

{table}
```

## This book

This book was built by `afd book --out` for:

{built_for}

It runs the chapters of the reference book whose parameters take a hardware and/or a model, with
these values instead of the reference selection. The chapters' figures and tables are computed for
this selection; their prose was written for the reference settings, so a sentence that names a
reference device or model speaks of that one, and its number is missing where that device or model
is not in this selection. The sweet-spot chapter adds this selection to the paper's devices and
models and takes it as the reference pair of its maps. Chapters that do not take a hardware or a
model (among them the penalty figures, the published deployments, the comparison with aiconfigurator) are in
the reference book only, each listed after these on a page that says why it is not here.
"""
