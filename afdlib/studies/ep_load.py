"""The pair's own EP load: tokens per expert per step of the decode model's best EP deployment, where
the grouped-GEMM chapter reads the roofline for the model and device it is built for (issue 31: an
own-pair book marked DeepSeek-V3's published 740 tokens per expert, not its own pair's load).

The load is the deployment's routed tokens per step spread over its physical experts,
n = B q R K / (E + r) (B requests per GPU, q tokens per request per step, R GPUs, K experts per
token, E routed and r redundant experts), the same count as the published deployment's
(:func:`afdlib.evaluator.grouped_gemm.ep_tokens_per_expert`), and its local experts per GPU
ceil((E + r) / R) are the grouped GEMM's.
"""
from __future__ import annotations

import numpy as np

from afdlib.decode.search import best_ep
from afdlib.decode.step import draft_tokens
from afdlib.evaluator.grouped_gemm import grouped_gemm_hfu, ridge_tokens_per_expert, skewed_tokens
from afdlib.inputs.specs import Budget, Hardware, Model


def own_ep_load(model: Model, hardware: Hardware, budget: Budget, context: float, exponent: float = 1.0,
                ofu: float = 1.0) -> dict:
    """The decode model's best EP deployment for ``model`` on ``hardware`` under ``budget`` at
    ``context``: ``own_tokens`` (tokens per expert per step, a float; None where no EP deployment is
    feasible), ``own_local`` its local experts per GPU, ``own_balanced`` the roofline HFU there
    (balanced), ``own_label`` the deployment, and ``own_md``, the sentence that reads it against the
    device's ridge and the roofline there, balanced and with Zipf skew ``exponent`` over the
    deployment's own local experts."""
    best = best_ep(model, hardware, budget, context)
    if float(np.asarray(best.tokens_per_s_per_gpu)) <= 0:
        return {"own_tokens": None, "own_local": None, "own_balanced": None, "own_label": None, "own_mark": None, "own_md": (f"No EP deployment of {model.name} on {hardware.name} meets the "
                                               f"{budget.slo_s * 1e3:g} ms SLO and fits in memory, so it has no own "
                                               "EP load to read here.")}
    d = best.deployment
    q = 1 + draft_tokens(budget.l_accept)
    physical = float(model.routed_experts + d.redundant)
    n = float(d.requests) * q * float(d.ep_size) * model.experts_per_token / physical
    local = int(np.ceil(physical / float(d.ep_size) - 1e-9))
    hfu = grouped_gemm_hfu(skewed_tokens(n, local, np.array([0.0, exponent])), hardware, ofu=ofu)
    ridge = float(ridge_tokens_per_expert(hardware.flops, hardware.hbm_bytes_per_s)) * ofu
    side = "above" if n > ridge else "below"
    return {"own_tokens": n, "own_local": local, "own_balanced": float(hfu[0]), "own_label": d.label,
            "own_mark": f"{model.name}'s own best EP deployment in the decode model (dash-dotted)",
            "own_md": (
        f"For {model.name} on {hardware.name} itself{_profile_words(hardware)}, the decode model's best EP deployment ({d.label}, "
        f"{int(d.requests)} requests per GPU at the {budget.slo_s * 1e3:g} ms SLO and context {context:g}) gives "
        f"about {n:.0f} tokens per expert per step over its {local} local expert{'s' if local != 1 else ''}, {side} the ridge of "
        f"{ridge:.0f}: the roofline allows {hfu[0]:.0%} balanced and {hfu[1]:.0%} with Zipf skew $s$ = "
        f"{exponent:g} there.")}


def fig3_lead(readings: dict, own: dict, model: Model, published: Model) -> str:
    """The grouped-GEMM chapter's first sentence: the pair's own EP load first where the chapter is built
    for another model than the published deployment's (``own``: :func:`own_ep_load`; ``readings``: the
    chapter's glue, :func:`afdlib.report.hfu_readings.grouped_gemm_readings`), else the published load."""
    at_published = (f"{published.name}'s published decode load, {readings['ep_tokens']} tokens per expert per step")
    if model.slug == published.slug or own["own_tokens"] is None:
        return (f"At {at_published}, the roofline of EP's grouped GEMMs allows {readings['ep_balanced']} on "
                f"{readings['hw_focus']}")
    return (f"At {model.name}'s own best EP deployment on {readings['hw_focus']} ({own['own_label']}), about "
            f"{own['own_tokens']:.0f} tokens per expert per step over {own['own_local']} local "
            f"expert{'s' if own['own_local'] != 1 else ''}, the roofline of EP's grouped GEMMs allows "
            f"{own['own_balanced']:.0%} (balanced); at {at_published}, it allows {readings['ep_balanced']}")


def _profile_words(hardware: Hardware) -> str:
    """" (the paper's figures for it)" for a catalogue profile other than the datasheet's, which the book's
    end-to-end chapters use: the same pair's best deployment differs between the two."""
    return {"paper": " (on the paper's figures for it, as the previous chapter; the end-to-end chapters take its "
                     "datasheet's)"}.get(hardware.profile, "")
