"""The glued readings of the two HFU chapters: the grouped-GEMM roofline (Figure 3) and the HFU
ceiling of AFD's FFN side with its dead zone (Figure 4).

Each chapter reads its figure for one *focus* pair (the reference book: DeepSeek-V3 on H800; a
book built for a pair: that pair), and compares it with other pairs of the figure where they are
drawn. A sentence that needs a pair the figure does not draw is left out, never filled with "n/a";
labels are the data's own names (``Hardware.name`` without the vendor, ``Model.name``). Values
ending in ``_md`` are MyST blocks (glue them as Markdown, :func:`as_markdown`); the others are text.
"""
from __future__ import annotations

import numpy as np

from afdlib.analysis.hfu import failed_rules, min_slo_for_weight_read
from afdlib.evaluator.grouped_gemm import (expert_weight_bytes, grouped_gemm_hfu, ridge_tokens_per_expert,
                                           skewed_tokens)

PAPER_EP_DEVICE = "h800"
"""The device of the paper's measured EP HFU (its Figure 3) and of its printed Figure 4 numbers."""
PAPER_MODEL = "deepseek-v3"


def short(hw) -> str:
    """A device's name without its vendor (``NVIDIA H800 SXM`` -> ``H800 SXM``)."""
    return hw.name.replace("NVIDIA ", "")


def pct(x: float | None) -> str | None:
    return None if x is None else f"{100 * x:.1f}%"


def say(template: str, **values) -> str:
    """``template`` filled, or "" where a value is missing (a pair the figure does not draw)."""
    return "" if any(v is None for v in values.values()) else template.format(**values)


def join(parts) -> str:
    return " ".join(p for p in parts if p)


def as_markdown(readings: dict) -> dict:
    """The readings ready for ``glue``: ``_md`` values as Markdown blocks, the others as they are."""
    from IPython.display import Markdown
    return {k: Markdown(v) if k.endswith("_md") else v for k, v in readings.items()}


def node_words(hws, gpus_per_node: int | None) -> str:
    """How many GPUs a node has in the chapter: each device's own, or the parameter's override."""
    if gpus_per_node is not None:
        return f"{gpus_per_node} GPUs per node (the chapter's `gpus_per_node`, for every device)"
    sizes = sorted({h.gpus_per_node for h in hws})
    if len(sizes) == 1:
        return f"{sizes[0]} GPUs per node (each device's own)"
    return "each device's own GPUs per node (" + ", ".join(f"{short(h)} {h.gpus_per_node}" for h in hws) + ")"


# --- Figure 3: the grouped-GEMM roofline on the EP side ---------------------------------------------

def relation(value: float, span) -> str:
    lo, hi = sorted(float(x) for x in span)
    return "lies within that span" if lo <= value <= hi else ("lies below it" if value < lo else "lies above it")


def grouped_gemm_readings(hws, focus: str, afd: dict, afd_model, ep_model, ep_tokens: float, experts_per_gpu: int,
                          exponents, ofu: float, paper_ep_hfu: float, tokens_per_request_step: float,
                          ep_gpus: int, physical_experts: int, extra_marks: tuple = ()) -> dict[str, str]:
    """The Figure 3 chapter's glue. ``focus``: the device the text reads (a slug of ``hws``);
    ``afd``: each device's AFD ceiling for ``afd_model`` (None where no N_F is feasible);
    ``exponents``: 0 (balanced) then the Zipf exponents; ``ep_model``: the model of the published
    EP deployment whose load is marked; ``extra_marks``: more marks of the figure, in words."""
    by = {h.slug: h for h in hws}
    hw = by[focus]
    exponents = np.asarray(exponents, dtype=float)
    k1 = 1 + int(np.argmin(np.abs(exponents[1:] - 1.0))) if len(exponents) > 1 else 0
    ridge = {h.slug: float(ridge_tokens_per_expert(h.flops, h.hbm_bytes_per_s)) for h in hws}
    at_ep = grouped_gemm_hfu(skewed_tokens(ep_tokens, experts_per_gpu, exponents), hw, ofu=ofu)
    at_ridge = grouped_gemm_hfu(skewed_tokens(ridge[focus], experts_per_gpu, exponents), hw, ofu=ofu)
    # one grouped-GEMM call: the deployment decodes in two micro-batches, and an MTP step verifies two tokens
    per_call = np.array([ep_tokens / tokens_per_request_step / 2, ep_tokens / 2])
    at_call = grouped_gemm_hfu(skewed_tokens(per_call, experts_per_gpu, exponents[:, None]), hw, ofu=ofu)
    f = {"ep_tokens": f"{ep_tokens:.0f}", "experts_per_gpu": f"{experts_per_gpu}", "ofu_v": f"{ofu:.0%}",
         "hw_focus": short(hw), "ep_model": ep_model.name, "afd_model": afd_model.name,
         "ep_balanced": f"{at_ep[0]:.0%}", "ep_skewed": f"{at_ep[k1]:.0%}", "skew_s": f"{exponents[k1]:g}",
         "paper_ep": f"{paper_ep_hfu:.0%}", "ridge_skewed": f"{at_ridge[k1]:.0%}",
         "tokens_per_step": f"{tokens_per_request_step:g}", "ep_gpus": f"{ep_gpus}",
         "ep_k": f"{ep_model.experts_per_token}", "physical": f"{physical_experts}",
         "call_lo": f"{per_call[0]:.0f}", "call_hi": f"{per_call[1]:.0f}",
         "call_bal_lo": f"{at_call[0, 0]:.0%}", "call_bal_hi": f"{at_call[0, 1]:.0%}",
         "call_skew_lo": f"{at_call[k1, 0]:.0%}", "call_skew_hi": f"{at_call[k1, 1]:.0%}",
         "paper_vs_mtp": relation(paper_ep_hfu, at_call[[k1, 0], 1]),
         "paper_vs_nomtp": relation(paper_ep_hfu, at_call[[k1, 0], 0])}
    f["ridges"] = (f"{ridge[focus]:.0f} tokens per expert on {short(hw)}"
                   + "".join(f" and at {ridge[h.slug]:.0f} on {short(h)}" for h in hws if h.slug != focus))
    f["skew_cost"] = ("far enough above the ridge that skew costs little" if at_ep[0] - at_ep[k1] < 0.05
                      else f"near enough to the ridge that skew costs {100 * (at_ep[0] - at_ep[k1]):.0f} points")
    if experts_per_gpu == 1:     # one expert per GPU: no skew among a GPU's experts, every curve the balanced one
        f["allows"] = (f"{f['ep_balanced']} on {f['hw_focus']}: with one expert per GPU there is no skew among a "
                       "GPU's experts, so the skewed curves are the balanced one")
    else:
        f["allows"] = (f"{f['ep_balanced']} balanced and {f['ep_skewed']} with Zipf skew $s$ = {f['skew_s']} on "
                       f"{f['hw_focus']}: {f['skew_cost']}, while at the ridge itself the same skew drops HFU to "
                       f"{f['ridge_skewed']}")
    ceiling = afd.get(focus)
    paper_device = focus == PAPER_EP_DEVICE and ep_model.slug == PAPER_MODEL
    if ceiling is None:
        f["afd_words"] = (f"{afd_model.name}'s AFD FFN side has no feasible number of FFN nodes up to 64 on "
                          f"{short(hw)} (previous chapter), so no AFD ceiling is drawn")
    elif paper_device:
        whose = "" if afd_model.slug == ep_model.slug else f" ({ep_model.name}'s)"
        f["afd_words"] = (f"EP's measured HFU{whose} {'stands above' if paper_ep_hfu > ceiling else 'does not exceed'} "
                          f"the AFD ceiling of {pct(ceiling)} for {afd_model.name} on the same hardware")
    else:
        f["afd_words"] = f"the AFD ceiling of {afd_model.name} on {short(hw)} is {pct(ceiling)} (previous chapter)"
    marks = [f"{ep_model.name}'s published decode load per step"]
    marks += [f"the paper's measured EP HFU ({short(h)} panel)" for h in hws if h.slug == PAPER_EP_DEVICE]
    ceilings = [short(h) for h in hws if afd.get(h.slug) is not None]
    marks += ([f"the AFD ceiling of {afd_model.name} from the previous chapter"
               + ("" if len(ceilings) == len(hws) else f" ({', '.join(ceilings)})")] if ceilings else [])
    marks += list(extra_marks)
    f["marked"] = ", ".join(marks[:-1]) + (" and " if len(marks) > 1 else "") + marks[-1]
    f["result_md"] = _fig3_result(f, paper_device)
    f["measured_md"] = _fig3_measured(f, paper_device, ceiling, paper_ep_hfu, afd_model, hw,
                                      same_model=afd_model.slug == ep_model.slug)
    low = [h for h in hws if h.slug != focus and ridge[h.slug] < per_call[0]]
    f["low_ridge_md"] = join(f"On {short(h)} the ridge, {ridge[h.slug]:.0f} tokens per expert, is so low that "
                             "almost any EP load is compute bound." for h in low)
    return f


def _fig3_result(f: dict, paper_device: bool) -> str:
    one = f["experts_per_gpu"] == "1"         # no skew to read: the balanced numbers alone
    head = ("One grouped-GEMM call sees half of that load, {call_hi} tokens per expert (two micro-batches; the "
            "deployment runs MTP), where the roofline gives "
            + ("{call_bal_hi}" if one else "{call_skew_hi} with Zipf skew $s$ = {skew_s} and {call_bal_hi} balanced")).format(**f)
    if not paper_device:        # the paper measured on another device: this device's numbers alone
        return head + ((", and {call_bal_lo} without MTP ({call_lo} tokens per call). " if one else
                        ", and {call_skew_lo} to {call_bal_lo} without MTP ({call_lo} tokens per call). ")
                       + "{afd_cap}.").format(**f, afd_cap=f["afd_words"][:1].upper() + f["afd_words"][1:])
    gap = ", so most of the gap is kernel efficiency, not the roofline" if f["paper_vs_mtp"] == "lies below it" else ""
    return head + (": the paper's measured ~{paper_ep} {paper_vs_mtp}{gap}. Without MTP ({call_lo} tokens per call: "
                   "{call_skew_lo} to {call_bal_lo}) the measured value {paper_vs_nomtp}. Either way "
                   "{afd_words}.").format(**f, gap=gap)


def _fig3_measured(f: dict, paper_device: bool, ceiling, paper_ep_hfu: float, afd_model, hw, same_model: bool) -> str:
    if not paper_device:
        return ("At {ep_tokens} tokens per expert the roofline leaves any gap to a measured HFU to kernel efficiency "
                "(tile quantisation, launch and synchronisation), which a roofline does not model (set `ofu` to a "
                "measured matmul efficiency to see a practical ceiling). But {ep_tokens} is the load of a whole "
                "step: the deployment decodes in two micro-batches, and with MTP a step verifies two tokens per "
                "request, so one grouped-GEMM call sees {call_lo} to {call_hi} tokens per expert (without and with "
                "MTP), where the roofline gives {call_skew_lo} to {call_bal_hi} on {hw_focus}. The paper's measured "
                "EP HFU is for another device and is not compared here. {afd_cap}.").format(
                    **f, afd_cap=f["afd_words"][:1].upper() + f["afd_words"][1:])
    text = ("The paper measures about {paper_ep} with real imbalance. At {ep_tokens} tokens per expert the roofline "
            "leaves that gap to kernel efficiency (tile quantisation, launch and synchronisation), which a roofline "
            "does not model (set `ofu` to a measured matmul efficiency to see a practical ceiling). But {ep_tokens} "
            "is the load of a whole step: the deployment decodes in two micro-batches, and with MTP a step verifies "
            "two tokens per request, so one grouped-GEMM call sees {call_lo} to {call_hi} tokens per expert (without "
            "and with MTP). With MTP, as the deployment runs, the roofline gives {call_skew_hi} to {call_bal_hi} per "
            "call (Zipf skew $s$ = {skew_s} to balanced): the measured {paper_ep} {paper_vs_mtp}. Without MTP the "
            "call would be near the ridge, {call_skew_lo} to {call_bal_lo}, and the measured value {paper_vs_nomtp}. "
            "The paper does not say at what load per call it measured.").format(**f)
    whose = "" if same_model else f" ({f['ep_model']}'s)"
    if ceiling is not None and paper_ep_hfu > ceiling:
        text += (f" Even so, EP's measured {f['paper_ep']}{whose} stands well above the **AFD ceiling of "
                 f"{pct(ceiling)}** for {afd_model.name} on the same {short(hw)} (red line, previous chapter)"
                 + (": that is the paper's first argument for keeping large-scale EP on ordinary clusters."
                    if same_model else "."))
    elif ceiling is not None:
        text += (f" EP's measured {f['paper_ep']}{whose} does not exceed the **AFD ceiling of {pct(ceiling)}** for "
                 f"{afd_model.name} on the same {short(hw)} (red line, previous chapter).")
    return text


# --- Figure 4: the HFU ceiling of AFD's FFN side and the dead zone ----------------------------------

class Panels:
    """Lookups into a :func:`afdlib.analysis.hfu.hfu_grid` result by slug; None where the figure
    does not draw the pair (so that :func:`say` leaves the sentence out). ``catalogue``: the names
    the chapter was given (slugs or paths); a catalogue pair's sentence needs the catalogue entry,
    not a user file that happens to share its stem (None: every drawn slug counts)."""

    def __init__(self, hws, ms, n_ffn, grid: dict, summ: dict, summ_alt: dict, catalogue=None):
        self.hws, self.ms, self.n, self.grid, self.summ, self.summ_alt = list(hws), list(ms), n_ffn, grid, summ, summ_alt
        self.hi = {h.slug: i for i, h in enumerate(self.hws)}
        self.mi = {m.slug: j for j, m in enumerate(self.ms)}
        known = set(catalogue) if catalogue is not None else set(self.hi) | set(self.mi)
        self.hi_catalogue = {s: i for s, i in self.hi.items() if s in known}
        self.mi_catalogue = {s: j for s, j in self.mi.items() if s in known}

    def has(self, hw: str, model: str) -> bool:
        return hw in self.hi_catalogue and model in self.mi_catalogue

    def hw(self, slug: str) -> str | None:
        return short(self.hws[self.hi[slug]]) if slug in self.hi_catalogue else None

    def model(self, slug: str) -> str | None:
        return self.ms[self.mi[slug]].name if slug in self.mi_catalogue else None

    def peak(self, hw: str, model: str, alt: bool = False) -> str | None:
        s = (self.summ_alt if alt else self.summ).get((hw, model))
        return None if s is None else pct(s.max_hfu)

    def floor(self, hw: str, model: str) -> str | None:
        s = self.summ.get((hw, model))
        return None if s is None else pct(s.dead_zone_floor)

    def curve(self, hw: str, model: str) -> np.ndarray | None:
        return self.grid["hfu"][self.hi[hw], self.mi[model]] if hw in self.hi and model in self.mi else None

    def at(self, hw: str, model: str, n: int) -> str | None:
        c = self.curve(hw, model)
        return None if c is None or n > len(c) else pct(float(c[n - 1]))

    def full_until(self, hw: str, model: str) -> str | None:
        """The last N_F of the leading run of points at 100%."""
        c = self.curve(hw, model)
        if c is None or c[0] < 1 - 1e-9:
            return None
        return str(int(np.argmax(c < 1 - 1e-9))) if (c < 1 - 1e-9).any() else str(len(c))


def dead_zone_readings(p: Panels, focus_hw: str, focus_model: str, budget, slo_ms: float, slo_alt_ms: float,
                       gpus_per_node: int | None, paper_ep_hfu: float = 0.60, arguments=None) -> dict[str, str]:
    """The Figure 4 chapter's glue: the focus pair (``focus_hw``, ``focus_model``: slugs the figure
    draws) read in full, the paper's other panels compared where drawn. ``arguments``: the pair as
    given (model, hardware: slugs or paths) for the re-run command (default: the slugs)."""
    model_arg, hw_arg = arguments or (focus_model, focus_hw)
    node = f" --gpus-per-node {gpus_per_node}" if gpus_per_node else ""
    h, m = p.hws[p.hi[focus_hw]], p.ms[p.mi[focus_model]]
    s = p.summ[focus_hw, focus_model]
    f = {"slo": f"{slo_ms:g} ms", "slo_alt": f"{slo_alt_ms:g} ms", "l_acc": f"{budget.l_accept:g}",
         "t_g": f"{budget.t_gap_s * 1e3:g} ms", "g_node": node_words(p.hws, gpus_per_node), "ceiling_name": m.name,
         "n_maxima": f"{len(p.hws) * len(p.ms)}", "focus_model": m.name,
         "t_b_us": f"{1e6 * float(p.grid['t_b'][p.hi[focus_hw], p.mi[focus_model], 0]):.0f}",
         "rerun_md": f"`afd hfu --model {model_arg} --hardware {hw_arg} --slo-ms {slo_alt_ms:g}{node}`"}
    fails = failed_rules(p.grid["fails"][p.hi[focus_hw], p.mi[focus_model], 0])
    rules = {"hbm-capacity": f"the HBM capacity ({h.hbm_bytes / 1e9:g} GB)",
             "hbm-time": "the weight read within the stage budget"}
    fails_words = f" (at one node the point fails {' and '.join(rules[x] for x in fails)})" if fails else ""
    k = m.experts_per_token
    nic = f"{h.scale_out_bytes_per_s * 8 / 1e9:g} Gb/s"
    f["k"] = f"{k}"
    if s.max_hfu is None:
        f["focus_lead"] = f"No number of FFN nodes up to {len(p.n)} is feasible for {m.name} on {short(h)}{fails_words}"
        f["focus_tail"] = f"the dead-zone floor would be {pct(s.dead_zone_floor)}"
        bullet = f"- **{m.name} on {short(h)}** has no feasible point up to $N_F$ = {len(p.n)}{fails_words}."
    elif s.dead_zone_floor < s.max_hfu - 5e-4:
        f["focus_lead"] = (f"With {h.gpus_per_node}-GPU nodes and a {nic} NIC per GPU, the network caps AFD's FFN "
                           f"side: {m.name} on {short(h)} peaks at {pct(s.max_hfu)}")
        f["focus_tail"] = f"adding FFN nodes no longer helps: the bound sits on the dead-zone floor {pct(s.dead_zone_floor)}"
        paper = (" The paper prints 33.1% and 10.3%." if (focus_hw, focus_model) == (PAPER_EP_DEVICE, PAPER_MODEL)
                 and h.gpus_per_node == 8 else "")
        bullet = (f"- **{m.name} on {short(h)}** cannot pass {pct(s.max_hfu)}, reached at $N_F$ = {s.best_n_ffn}"
                  f"{fails_words}. From $N_F = K = {k}$ the bound is pinned to the dead-zone floor "
                  f"{pct(s.dead_zone_floor)}: adding FFN nodes never helps.{paper}")
    else:
        f["focus_lead"] = f"{m.name} on {short(h)} peaks at {pct(s.max_hfu)}"
        f["focus_tail"] = f"the bound stays at {pct(s.dead_zone_floor)}: no dead zone"
        bullet = (f"- **{m.name} on {short(h)}** reaches {pct(s.max_hfu)} at $N_F$ = {s.best_n_ffn}{fails_words}; "
                  f"from $N_F = K = {k}$ the bound stays at {pct(s.dead_zone_floor)}: no dead zone.")
    f["result_md"] = join([_fig4_others(p, focus_hw, focus_model), _slo_min(p, budget)])
    f["reading_md"] = "\n".join(x for x in [bullet, *_fig4_bullets(p, focus_hw, paper_ep_hfu, budget),
                                            _slo_bullet(p, slo_ms, slo_alt_ms, budget)] if x)
    f["panels_md"] = _paper_panels(p)
    f["h800_memory_md"] = h800_memory(p)
    f["capacities"] = capacities(p.hws)
    unchecked = [p.hw(x) for x in PAPER_UNCHECKED if p.hw(x)]
    f["unchecked"] = (f"; the {', '.join(unchecked[:-1])}{' and ' if len(unchecked) > 1 else ''}{unchecked[-1]} "
                      f"panel{'s' if len(unchecked) > 1 else ''} cannot be checked against the paper's text"
                      if unchecked else "")
    return f


def _slo_min(p: Panels, budget) -> str:
    """The one-H200-node sentence of the opening (DeepSeek-V3's weight read decides the SLO)."""
    if not p.has("h200", "deepseek-v3"):
        return ""
    slo = _slo_min_ms(p, budget)
    return say("One {h200} node reaches {v} for {dsv3}, if the SLO is at least {slo} ms; the maxima move with "
               "the SLO only where the weight read decides feasibility.",
               h200=p.hw("h200"), v=p.peak("h200", "deepseek-v3"), dsv3=p.model("deepseek-v3"), slo=slo)


def _slo_min_ms(p: Panels, budget) -> str:
    model, hw = p.ms[p.mi["deepseek-v3"]], p.hws[p.hi["h200"]]
    return f"{1e3 * float(min_slo_for_weight_read(model, hw, 1, budget)):.0f}"


def _fig4_others(p: Panels, hw: str, model: str) -> str:
    """The opening's comparisons with the paper's other panels, each where the figure draws it."""
    m = p.ms[p.mi[model]]
    parts = [say("coarse experts lift it ({step3} {v} on {h})", step3=p.model("step3"), v=p.peak(hw, "step3"),
                 h=p.hw(hw)) if model != "step3" and _higher(p, hw, "step3", model) else "",
             say("{h20}'s low FLOPS keep {m} at 100% up to $N_F$ = {n} and at {k} on its floor", h20=p.hw("h20"),
                 m=m.name, n=p.full_until("h20", model), k=p.at("h20", model, m.experts_per_token))
             if hw != "h20" else ""]
    parts = [x for x in parts if x]
    text = ("How low the cap is depends on the model and on the FLOPS behind the NIC: " + ", and ".join(parts) + "."
            if parts else "")
    pods = [x for x in p.hws if x.superpod and x.slug != hw]
    if pods and model in p.mi and np.ptp(p.curve(pods[0].slug, model)) < 5e-4:
        names = "/".join(short(x) for x in pods)
        text = join([text, f"Superpods ({names}) have no dead zone ({p.peak(pods[0].slug, model)} for "
                           f"{m.name} at every $N_F$ on {short(pods[0])})."])
    return text


def _higher(p: Panels, hw: str, a: str, b: str) -> bool:
    """Whether model ``a`` peaks above model ``b`` on ``hw`` (both feasible somewhere)."""
    sa, sb = p.summ.get((hw, a)), p.summ.get((hw, b))
    return bool(sa and sb and sa.max_hfu is not None and sb.max_hfu is not None and sa.max_hfu > sb.max_hfu)


def _fig4_bullets(p: Panels, hw: str, paper_ep_hfu: float, budget) -> list[str]:
    """The reading's bullets on the paper's other panels (DeepSeek-V3 and its neighbours), where drawn."""
    above = [short(x) for x in p.hws if p.has(x.slug, "deepseek-v3")
             and (p.summ[x.slug, "deepseek-v3"].max_hfu or 0) > paper_ep_hfu]
    slo = _slo_min_ms(p, budget) if p.has("h200", "deepseek-v3") else None
    return [
        say("- **{b200}** raises scale-up but keeps {nic} per GPU: {dsv3} peaks at {v} at one node and falls to "
            "{fl}: more FLOPS behind the same NIC lowers the floor.", b200=p.hw("b200"), dsv3=p.model("deepseek-v3"),
            v=p.peak("b200", "deepseek-v3"), fl=p.floor("b200", "deepseek-v3"),
            nic=f"{p.hws[p.hi['b200']].scale_out_bytes_per_s * 8 / 1e9:g} Gb/s" if "b200" in p.hi else None)
        if hw != "b200" else "",
        say("- **Superpod** systems ({gb200}/{gb300}: scale-out = scale-up = {bw:g} GB/s) have no dead zone: {v1} "
            "for {dsv3}, {v2} for {kimi}, and {v3} for {glm}, whose finer experts ($M$ = {mg:,}) carry fewer "
            "FLOPs per byte on the wire. The paper prints 65.5%, 65.5% and 49.2%.", gb200=p.hw("gb200"),
            gb300=p.hw("gb300"), bw=p.hws[p.hi["gb200"]].scale_out_bytes_per_s / 1e9 if "gb200" in p.hi else None,
            v1=p.peak("gb200", "deepseek-v3"), dsv3=p.model("deepseek-v3"), v2=p.peak("gb300", "kimi-k2"),
            kimi=p.model("kimi-k2"), v3=p.peak("gb200", "glm-4.7"), glm=p.model("glm-4.7"),
            mg=p.ms[p.mi["glm-4.7"]].moe_intermediate_size if "glm-4.7" in p.mi else None),
        say("- **Coarse experts lift the ceiling where the same bandwidth feeds them**: {step3} ($M$ = {ms:,}, "
            "$K$ = {ks}) reaches {v} on {h800}. Not everywhere: with $K$ = {ks} a token brings fewer expert copies "
            "per node to share one crossing of scale-out, so on {b200}, whose NIC binds from one node on, {step3} "
            "reaches {vb} against {dsv3}'s {vd} (Appendix A).", step3=p.model("step3"),
            ms=p.ms[p.mi["step3"]].moe_intermediate_size if "step3" in p.mi else None,
            ks=p.ms[p.mi["step3"]].experts_per_token if "step3" in p.mi else None, v=p.peak("h800", "step3"),
            h800=p.hw("h800"), b200=p.hw("b200"), vb=p.peak("b200", "step3"), dsv3=p.model("deepseek-v3"),
            vd=p.peak("b200", "deepseek-v3")),
        say("- **{h20} is compute-bound only while the fan-out lasts**: {dsv3} stays at 100% up to $N_F$ = {n}; "
            "from $N_F = K = {k}$ its bound is the dead-zone floor, {vk} ({glm}: {vg}). {h20}'s low FLOPS make that "
            "floor high, not absent.", h20=p.hw("h20"), dsv3=p.model("deepseek-v3"), n=p.full_until("h20", "deepseek-v3"),
            k=p.ms[p.mi["deepseek-v3"]].experts_per_token if "deepseek-v3" in p.mi else None,
            vk=p.at("h20", "deepseek-v3", 8), glm=p.model("glm-4.7"), vg=p.at("h20", "glm-4.7", 8)),
        say("- **One {h200} node**: its {gb:g} GB hold all of {dsv3}'s routed experts at $N_F$ = 1, where the FFN "
            "pool is fed over NVLink, so the bound reaches {v}, above the ~{ep:.0%} EP measures on H800 (the "
            "grouped-GEMM chapter; {dsv3}'s bound passes {ep:.0%} on {above} in this figure). That point needs the "
            "weight read to fit in $t_B$, an SLO of at least {slo} ms; from $N_F$ = 2 the low ceiling of ordinary "
            "clusters applies as on H800. A one-node FFN pool also limits the attention side it can serve, which "
            "this bound does not see (the end-to-end chapters do).", h200=p.hw("h200"),
            gb=p.hws[p.hi["h200"]].hbm_bytes / 1e9 if "h200" in p.hi else None, dsv3=p.model("deepseek-v3"),
            v=p.peak("h200", "deepseek-v3"), ep=paper_ep_hfu, above=", ".join(above) or "no device", slo=slo)
        if p.has("h800", "deepseek-v3") else ""]


def _slo_bullet(p: Panels, slo_ms: float, slo_alt_ms: float, budget) -> str:
    """What the second SLO changes, counted over every panel of the figure."""
    def r(v):
        return None if v is None else round(100 * v, 1)
    changed = [(x, y) for x in p.hws for y in p.ms
               if r(p.summ[x.slug, y.slug].max_hfu) != r(p.summ_alt[x.slug, y.slug].max_hfu)]
    where = ", ".join(dict.fromkeys(short(x) for x, _ in changed)) or "no device"
    moves = [f"{y.name} on {short(x)} goes from {p.peak(x.slug, y.slug) or 'infeasible'} to "
             f"{p.peak(x.slug, y.slug, alt=True) or 'infeasible'}" for x, y in changed[:3]]
    panels = len(p.hws) * len(p.ms)
    if not changed:
        text = (f"- **The SLO does not move these maxima**: at {slo_ms:g} ms and {slo_alt_ms:g} ms "
                + ("the one panel's maximum is" if panels == 1 else f"every one of the {panels} panels' maxima is")
                + " the same to 0.1% (the SLO matters only where the weight read decides feasibility)")
    else:
        text = (f"- **The SLO matters where the weight read decides feasibility**: at {slo_ms:g} ms and {slo_alt_ms:g} "
                f"ms the maxima that change (to 0.1%) are {len(changed)} of {panels}, on {where}")
    text += ("; " + ", ".join(moves)) if moves else ""
    text += say(", and {dsv3}'s {v} on {h200} holds only above the {slo} ms found above", dsv3=p.model("deepseek-v3"),
                v=p.peak("h200", "deepseek-v3"), h200=p.hw("h200"),
                slo=_slo_min_ms(p, budget) if p.has("h200", "deepseek-v3") else None)
    return text + "."


PAPER_CHECKED = ("h800", "b200", "gb200", "gb300")
PAPER_UNCHECKED = ("h20", "h100", "h200")


def _paper_panels(p: Panels) -> str:
    """Which of the figure's panels the paper's text checks (only where the paper's panels are drawn)."""
    checked = [p.hw(x) for x in PAPER_CHECKED if p.hw(x)]
    unchecked = [p.hw(x) for x in PAPER_UNCHECKED if p.hw(x)]
    if not checked and not unchecked:
        return ""
    text = (f"That rule reproduces every number the text prints for the **{', '.join(checked)}** panels. "
            if checked else "")
    if unchecked:
        text += (f"The **{', '.join(unchecked)}** panel{'s' if len(unchecked) > 1 else ''} cannot be checked from "
                 "the text: the paper only says "
                 "DeepSeek-V3 and Kimi-K2 are \"HBM-limited\" on Hopper at 1-2 nodes.")
    if all(p.hw(x) for x in PAPER_CHECKED + PAPER_UNCHECKED) and all(p.model(x) for x in ("deepseek-v3", "kimi-k2")):
        h20, h100 = p.hws[p.hi["h20"]], p.hws[p.hi["h100"]]
        text += (f" Under our rule they are at one node on H100 and H800 ({p.hws[p.hi['h800']].hbm_bytes / 1e9:g} GB), "
                 "and Kimi-K2 also on H20 (capacity) and H200 (read time); the H20 panel is compute-bound at small "
                 f"$N_F$ ({h20.flops / 1e12:.0f} TFLOP/s against {h20.scale_out_bytes_per_s / 1e9:g} GB/s per GPU) "
                 "and floored from $N_F = K$, and the H100/H200 panels use the paper's "
                 f"{h100.scale_up_bytes_per_s / 1e9:g} GB/s scale-up.")
    if unchecked:
        text += f" Read {'those panels' if len(unchecked) > 1 else 'that panel'} as this book's reading, not the paper's."
    return text


def capacities(hws) -> str:
    """Where the figure's HBM capacities come from, per device drawn: the paper's Table 5 as printed (its
    ``paper`` profile), the datasheet, or the device's own file; with each capacity."""
    words = {"paper": "the paper's Table 5 as printed", "datasheet": "the datasheet profile",
             "user": "the device's own file"}
    parts = []
    for profile, source in words.items():
        drawn = [h for h in hws if h.profile == profile]
        if drawn:
            parts.append(f"from {source} ({', '.join(f'{short(h)}: {h.hbm_bytes / 1e9:g} GB' for h in drawn)})")
    return "this figure takes its HBM capacities " + "; ".join(parts)


def h800_memory(p: Panels) -> str:
    """DeepSeek-V3 at one H800 node under the physical 80 GiB (only where the figure draws that pair)."""
    if not p.has("h800", "deepseek-v3"):
        return ""
    from afdlib.inputs.catalog import load_hardware
    m = p.ms[p.mi["deepseek-v3"]]
    physical = load_hardware("h800", profile="datasheet").hbm_bytes
    routed = (m.moe_layers * expert_weight_bytes(m.routed_experts, m.hidden_size, m.moe_intermediate_size)
              / p.hws[p.hi["h800"]].gpus_per_node)                  # per GPU of one node
    return (f"The physical 80 GiB of an H800 ({physical / 1e9:.1f} GB, the datasheet profile's figure) would hold "
            f"{m.name}'s {routed / 1e9:.1f} GB of routed weights at $N_F$ = 1, but that point still fails the weight "
            "read within $t_B$, so no maximum here changes.")



def full_hfu_words(names: list[str], best: list[str], dead: list[str]) -> tuple[str, str]:
    """Appendix A's "which models reach 100%" for the chapter's models ``names``: the sentence's subject and
    verb at one FFN node (``best``: the names that reach it there) and what follows "and" for the dead zone
    (``dead``); for one model about that model ("Kimi-K2 does not reach 100%", "does not reach it")."""
    if len(names) == 1:
        return (f"{names[0]} {'reaches' if best else 'does not reach'} 100%",
                "reaches it" if dead else "does not reach it")

    def listed(xs):
        return xs[0] if len(xs) == 1 else f"{', '.join(xs[:-1])} and {xs[-1]}"
    head = (f"Of the models above, {listed(best)} {'reaches' if len(best) == 1 else 'reach'} 100%" if best
            else "None of the models above reaches 100%")
    return head, listed(dead) if dead else "none of them"
