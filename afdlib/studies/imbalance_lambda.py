"""The attention:FFN ratio lambda of a deployment, from the decode model (the imbalance penalty's lambda).

The imbalance penalty (:mod:`afdlib.analysis.imbalance`, the paper's Section 3.3) takes lambda as given:
for EP ``t_a / t_f``, the time a GPU spends on attention against on its experts in a MoE layer; for
AFD ``N_A / N_F``, attention nodes per FFN node. Both are one quantity, the attention work of a step
against its FFN work in GPU-seconds: AFD sizes its pools so that t_a = t_f, so N_A / N_F is
(N_A t_a) / (N_F t_f); EP's GPUs do both, so the ratio is t_a / t_f on each. The paper takes 4.

Here lambda is the decode model's (:func:`afdlib.decode.deployment.decode_step`) for a deployment at the
batch it gives it (its own, or the largest within the SLO), with the stage times at sigma = 1: the
penalty stretches the FFN time by 1 / sigma itself, so lambda is the balanced ratio. For AFD the
paper's N_A / N_F is the deployment's lambda (:attr:`DeploymentLambda.lam`, what the whole-node form
takes); the decode model's work ratio (N_A g_A t_a) / (N_F g_F t_f) is beside it
(:attr:`DeploymentLambda.work_ratio`), equal where the pools are balanced.

:func:`model_lambdas` gives the pair the imbalance chapter compares: the AFD deployment the search picks
(:func:`afdlib.decode.search.best_afd`) and EP on the same number of GPUs in DeepSeek's decode form.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from afdlib.analysis.imbalance_cost import LikeWithLikeStudy, break_even_text, like_with_like_study
from afdlib.decode.deployment import AFDDeployment, EPDeployment, decode_step
from afdlib.decode.result import Step
from afdlib.decode.search import best_afd
from afdlib.decode.step import Assumptions
from afdlib.decode.validation import Case, deployment_of, load_deployments, predict, with_facts
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

EP_FORM = (2, "low-latency")
"""EP's form for :func:`model_lambdas`: two micro-batches and DeepEP's low-latency kernels, DeepSeek's
decode (data/deployments.yaml, deepseek-v3-h800-ep144-online), the EP form published deployments validate."""


@dataclass(frozen=True)
class DeploymentLambda:
    """A deployment's lambda from the decode model: ``lam`` the paper's (EP t_a / t_f, AFD N_A / N_F);
    ``work_ratio`` attention GPU-seconds over FFN GPU-seconds of a MoE layer (EP: ``lam``);
    ``t_attn_s``, ``t_ffn_s`` the balanced stage times of one MoE layer (EP: a GPU's, all micro-batches;
    AFD: one micro-batch on each pool's GPU); ``requests`` per (attention) GPU; ``tokens`` the tokens
    of one micro-batch that reach the FFN side in a layer (EP: over all its GPUs); ``deployment`` at that batch."""

    deployment: EPDeployment | AFDDeployment = field(repr=False)
    label: str
    gpus: int
    lam: float
    work_ratio: float
    t_attn_s: float
    t_ffn_s: float
    requests: int
    tokens: int


def _balanced_step(model, deployment, context, budget, precision, assumptions):
    """The deployment at its batch (the largest within the SLO where it has none) and its step at sigma 1."""
    if np.ndim(deployment.gpus) or np.ndim(deployment.micro_batches):
        raise AfdError("lambda of one deployment at a time (Best.at(cell))")
    if deployment.requests is None:
        deployment = replace(deployment, requests=float(decode_step(model, deployment, context, budget, precision,
                                                                    assumptions).requests))
    return deployment, decode_step(model, deployment, context, budget, precision, replace(assumptions, sigma=1.0))


def deployment_lambda(model: Model, deployment: EPDeployment | AFDDeployment, context: float, budget: Budget,
                      precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> DeploymentLambda:
    """The decode model's lambda of one deployment (module docstring)."""
    return _lambda_of(*_balanced_step(model, deployment, context, budget, precision, assumptions))


def case_lambda(case: Case, assumptions: Assumptions = Assumptions()) -> DeploymentLambda:
    """The decode model's lambda of a published deployment (``data/deployments.yaml``) at its batch
    (:func:`afdlib.decode.validation.predict`; where the case has none, the largest within its SLO)."""
    if case.facts.get("batch_per_gpu") is None:
        case = with_facts(case, batch_per_gpu=int(predict(case, assumptions).requests))
    return _lambda_of(deployment_of(case), predict(case, replace(assumptions, sigma=1.0)))


def _lambda_of(d: EPDeployment | AFDDeployment, st: Step) -> DeploymentLambda:
    """lambda of deployment ``d`` (its batch set) from its balanced step ``st``."""
    t_a, t_f, _ = (float(t) for t in st.per_micro_batch())
    per_mb = float(d.requests) / st.micro_batches * st.tokens_per_request
    if d.design == "ep":
        m = st.micro_batches
        return DeploymentLambda(d, d.label, int(d.gpus), t_a / t_f, t_a / t_f, m * t_a, m * t_f, int(d.requests),
                                int(round(per_mb * float(d.ep_size))))
    g_a, g_f = d.attention.hardware.gpus_per_node, d.ffn.hardware.gpus_per_node
    n_a, n_f = float(d.attention.nodes), float(d.ffn.nodes)
    return DeploymentLambda(d, d.label, int(d.gpus), n_a / n_f, n_a * g_a * t_a / (n_f * g_f * t_f), t_a, t_f,
                            int(d.requests), int(round(per_mb * n_a * g_a)))


def model_lambdas(model: Model, hardware: Hardware, budget: Budget, context: float, redundant: int,
                  precision: Precision = Precision(), assumptions: Assumptions = Assumptions()
                  ) -> tuple[DeploymentLambda, DeploymentLambda]:
    """(AFD, EP) lambdas: AFD the deployment the search picks on ``hardware`` (both pools), EP on as
    many GPUs in :data:`EP_FORM` with ``redundant`` replicas, each at the largest batch within the SLO.
    AFD in the paper's form (one attention pool, no data-parallel domains: lambda is its pools' balance)."""
    best = best_afd(model, hardware, hardware, budget, context, precision=precision, assumptions=assumptions,
                    domain_forms=())
    if float(best.tokens_per_s_per_gpu) <= 0:
        raise AfdError(f"no AFD deployment of {model.name} on {hardware.name} meets the "
                       f"{budget.slo_s * 1e3:g} ms SLO and fits in memory")
    afd = deployment_lambda(model, best.deployment, context, budget, precision, assumptions)
    ep = EPDeployment(hardware, afd.gpus, redundant, *EP_FORM)
    return afd, deployment_lambda(model, ep, context, budget, precision, assumptions)


def published_lambdas(slugs: list[str], assumptions: Assumptions = Assumptions()) -> list[DeploymentLambda]:
    """:func:`case_lambda` of each named published deployment (AfdError naming an unknown one)."""
    cases = load_deployments()
    unknown = [s for s in slugs if s not in cases]
    if unknown:
        raise AfdError(f"unknown published deployment(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    return [case_lambda(cases[s], assumptions) for s in slugs]


@dataclass(frozen=True)
class OwnLambda:
    """The imbalance comparison at the decode model's lambda (:func:`own_lambda_study`): the AFD
    deployment the search picks and EP on as many GPUs (``afd``, ``ep``), the lambdas of DeepSeek's
    published deployments (``published``), and the like-with-like study of the two
    (:func:`afdlib.analysis.imbalance_cost.like_with_like_study`, EP at ``ep.lam``)."""

    afd: DeploymentLambda
    ep: DeploymentLambda
    published: list
    study: LikeWithLikeStudy
    settings: str

    def rows(self, reference: LikeWithLikeStudy) -> list[dict]:
        """One row per lambda (:meth:`LikeWithLikeStudy.lambda_row`): the ``reference`` study (the
        paper's lambda), the same with EP at :attr:`ep`'s lambda (the change of lambda alone), this
        study, and this one with EP at each published deployment's lambda."""
        alone = reference.at_lambda(self.ep.lam).lambda_row(f"EP's λ only ({self.ep.lam:.2f})")
        return ([reference.lambda_row(f"the paper ({reference.lambda_ep:g})"), alone,
                 self.study.lambda_row("the decode model")] + self.spread()[1:])

    def spread(self) -> list[dict]:
        """This study's row with EP at the lambda of :attr:`ep` and of each of :attr:`published` (AFD unchanged)."""
        return [self.study.at_lambda(x.lam).lambda_row(f"EP's λ as {x.label}'s ({x.lam:.2f})")
                for x in [self.ep] + list(self.published)]

    def readings(self, reference: LikeWithLikeStudy) -> dict[str, object]:
        """The numbers as the chapter prints them (glue keys ``own_*``); ``reference``: the study at the
        paper's lambda, whose AFD is kept for the change of EP's lambda alone."""
        row, alone, spread = self.study.lambda_row(""), reference.at_lambda(self.ep.lam).lambda_row(""), self.spread()
        lams = [x.lam for x in [self.ep] + list(self.published)]
        lead, even = [r["AFD lead (points)"] for r in spread], [r["DP break-even"] for r in spread]
        return {"own_settings": self.settings, "own_afd": self.afd.label, "own_lambda_afd": f"{self.afd.lam:.3g}",
                "own_work_ratio": f"{self.afd.work_ratio:.2f}", "own_gpus": self.afd.gpus,
                "own_lambda_ep": f"{self.ep.lam:.2f}", "own_tokens": f"{self.afd.tokens:,}",
                "own_published": "; ".join(f"{x.label} {x.lam:.2f}" for x in self.published) or "none given",
                "own_ep": f"EP{self.study.equal}", "own_lead": f"{row['AFD lead (points)']:+.1f}",
                "own_sigma_afd": f"{row['AFD sigma']:.3f}", "own_alpha_afd": f"{row['AFD alpha']:.3f}",
                "own_alpha_ep": f"{row['EP alpha']:.3f}", "own_break_even": break_even_text(row["DP break-even"]),
                "alone_lead": f"{alone['AFD lead (points)']:+.1f}",
                "alone_break_even": break_even_text(alone["DP break-even"]),
                "own_ffn_gpus": self.study.n_ffn * self.study.gpus_per_node,
                "own_max_gap": f"{max(abs(r['AFD lead (points)']) for r in self.rows(reference)):.1f}",
                "own_lam_range": f"{min(lams):.2f}-{max(lams):.2f}",
                "own_lead_range": f"{min(lead):+.1f} to {max(lead):+.1f}", "own_be_range": _range_text(even),
                "own_sign": ("which design keeps more follows the deployment compared (its nodes, GPUs and tokens per "
                             "step) more than λ" if (row["AFD lead (points)"] > 0) != (alone["AFD lead (points)"] > 0)
                             else "the same design keeps more with either AFD deployment"),
                "own_verdict": _verdict(row["AFD lead (points)"], self.study.equal)}


def _verdict(lead: float, ep_size: int) -> str:
    """What AFD's lead (points) at the decode model's deployment says of the paper's conclusion."""
    if lead < 0:
        return (f"for the AFD deployment the decode model picks, the paper's conclusion that imbalance penalises "
                f"AFD more holds (EP{ep_size} keeps {-lead:.1f} points more)")
    if lead > 0:
        return (f"even for the AFD deployment the decode model picks, AFD keeps {lead:.1f} points more, against the "
                f"paper's conclusion that imbalance penalises AFD more")
    return "for the AFD deployment the decode model picks, the two designs tie"


def _range_text(even: list[float]) -> str:
    """DP break-evens over EP's lambdas as printed (they rise with lambda: none, if any, at the higher)."""
    lo, hi = min(even), max(even)
    if lo == hi or lo >= 1:
        return break_even_text(lo)
    return f"{lo:.3f}-{hi:.3f}" if hi < 1 else f"{lo:.3f} to none at the higher λ"


def own_lambda_study(counts: ArrayLike, model: Model, hardware: Hardware, budget: Budget, context: float,
                     redundant: int, published: list[str], trials: int, seed: int, layers: ArrayLike,
                     precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> OwnLambda:
    """:func:`model_lambdas` of ``model`` on ``hardware`` and the like-with-like study of measured expert
    loads ``counts`` (layers x E) at them: AFD's nodes and its decode-model micro-batch of tokens, EP on
    as many GPUs at its own lambda, ``redundant`` replicas, ``trials`` batches per layer of ``layers``;
    with the lambdas of the ``published`` deployments (:func:`published_lambdas`)."""
    afd, ep = model_lambdas(model, hardware, budget, context, redundant, precision, assumptions)
    d = afd.deployment
    study = like_with_like_study(counts, model.experts_per_token, int(d.attention.nodes), int(d.ffn.nodes),
                                 d.ffn.hardware.gpus_per_node, [afd.gpus], redundant, ep.lam, afd.tokens, trials,
                                 seed, layers)
    settings = (f"{hardware.profile} hardware, {budget.slo_s * 1e3:g} ms per token, context {context:g}, "
                + ("no MTP" if budget.l_accept <= 1 else f"{budget.l_accept:g} tokens accepted per step (MTP)"))
    return OwnLambda(afd, ep, published_lambdas(published, assumptions), study, settings)
