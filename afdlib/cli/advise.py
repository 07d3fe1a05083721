"""afd advise: AFD or EP? the best deployment of each, and the computed reasons."""
from __future__ import annotations

import argparse

from afdlib.cli.options import (add_decode_options, check_sigma, decode_setup, device, dumps, mtp_module, precision_of,
                                print_table)


def search_ranks(model, hardware) -> int:
    """The most GPUs the FFN side of a deployment of each design may spread over, the smaller of the two
    (EP's largest group, AFD's largest FFN pool, at the caps their widening stops at): ``--sigma`` applies
    to every candidate, none can be less balanced than 1 / its ranks, so below 1 / this one design would
    have no deployment the given sigma can describe and the comparison would rest on none."""
    from afdlib.decode.search import most_ffn_gpus
    return min(most_ffn_gpus(model, hardware, "ep"), most_ffn_gpus(model, hardware, "afd"))


def answer_line(doc: dict) -> str:
    """The one line a person can act on, first in ``afd advise``'s answer: the design (or undecided and
    which is the more likely), AFD / EP at the defaults with its 10th-90th percentile range, P(AFD
    better), the SLOs at which that verdict holds (where computed) and each design's best form with the
    published deployments that validate it (or that none does)."""
    from afdlib.decode.validation import case_labels
    if doc["ratio"] is None:
        return ("AFD: EP has no feasible deployment" if doc["afd"].get("feasible")
                else "neither design is feasible: no deployment meets the SLO and fits in memory")
    lead = doc["recommendation"] if doc["decisive"] else f"undecided ({doc['recommendation']} more likely)"
    spread = "" if doc["ratio_interval"] is None else " ({:.2f}-{:.2f})".format(*doc["ratio_interval"])
    p = "" if doc.get("p_afd") is None else f", P(AFD better) {doc['p_afd']:.2f}"

    def form(name):
        d = doc[name]
        if not d.get("feasible"):
            return f"{name.upper()} none feasible"
        backed = (f"validated by {', '.join(case_labels(d['validated_by']))}" if d.get("validated_by")
                  else "no published deployment validates it")
        return f"{d['form']} ({backed})"
    holds = f", {doc['holds']}" if doc.get("holds") else ""
    return f"{lead}: AFD / EP {doc['ratio']:.2f}{spread}{p}{holds}; forms: {form('ep')}; {form('afd')}"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("advise", help="AFD or EP? the best deployment of each, and the computed reasons")
    p.add_argument("--model", default=None, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", default=None, help="catalogue slug or .yaml (AFD: the FFN pool)")
    p.add_argument("--all", action="store_true", help="every catalogue model x hardware pair")
    p.add_argument("--counts", default=None, help='measured expert loads {"logical_count": [[...E...] x layers]}: '
                   "imbalance from an EPLB-style placement of them (a few seconds more)")
    p.add_argument("--validated-only", action="store_true",
                   help="a what-if: search only the EP and AFD forms (micro-batches, kernels) that a published "
                        "deployment in data/deployments.yaml validates")
    p.add_argument("--price-per-gpu-hour", nargs="+", default=None, metavar="SLUG=USD",
                   help="prices per GPU-hour, e.g. h800=2.0 h20=1.1: compare cost per token")
    add_decode_options(p)
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    import sys
    import time

    from afdlib.decision.advise import advices, advise, parse_prices
    from afdlib.errors import AfdError
    from afdlib.inputs import checks
    from afdlib.inputs.catalog import hardware_names, load_hardware, load_model, model_names
    prices = parse_prices(args.price_per_gpu_hour)
    if args.all:
        if args.model or args.hardware:
            raise AfdError("give --all or --model and --hardware, not both")
        pairs = [(m, h) for m in model_names() for h in hardware_names()]
    else:
        if not args.model or not args.hardware:
            raise AfdError("give --model and --hardware, or --all")
        pairs = [(args.model, args.hardware)]
    results = []
    started = time.perf_counter()
    together: dict = {}     # --all: a model's advice on every device, searched together (advices)
    for m_name, h_name in pairs:
        t0 = time.perf_counter()
        model = load_model(m_name, profile=args.model_profile)
        hw = device(args, h_name)
        attn = None if args.attn_hardware is None else device(args, args.attn_hardware)
        if prices and not args.all:
            unused = sorted(set(prices) - {hw.slug, (attn or hw).slug})
            if unused:
                raise AfdError(f"--price-per-gpu-hour names {', '.join(unused)}, which is no pool here "
                               f"({', '.join(sorted({hw.slug, (attn or hw).slug}))})")
        precision, weights_from = precision_of(args, model)
        try:   # with --all, a pair the checks refuse is a row with its error, like one with no feasible answer
            check_sigma(args, search_ranks(model, hw), f"{model.slug} on {hw.slug}")
            precision, a, budget = decode_setup(args, model)   # --counts checked against the model's experts
            if args.all and attn is None:
                if model.slug not in together:
                    together.clear()                              # one model's devices at a time
                    devices = [load_hardware(h, profile=args.hw_profile) for h in hardware_names()]
                    t1 = time.perf_counter()
                    found = advices(model, devices, budget, args.context, precision, a, prices,
                                    validated_only=args.validated_only)
                    together[model.slug] = (dict(zip((d.slug for d in devices), found)),
                                            (time.perf_counter() - t1) / len(devices))
                    if args.json:     # the table's lines are the progress without --json; with it, stderr
                        done = len(results) + len(devices)
                        print(f"afd advise --all: {model.slug} done, {done} of {len(pairs)} pairs, "
                              f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
                found, share = together[model.slug]
                adv, t0 = found[hw.slug], t0 - share                # each pair's share of the model's time
                if isinstance(adv, AfdError):
                    raise adv
            else:
                adv = advise(model, hw, budget, args.context, precision, a, attn, prices, explain=not args.all,
                             validated_only=args.validated_only)
        except AfdError as e:
            if not args.all:
                raise
            results.append({"model": model.slug, "hardware": hw.slug,
                            "weights": {"dtype": precision.weights, "from": weights_from}, "error": str(e)})
            if not args.json:
                print(f"{model.slug:18s} {hw.slug:12s} -   {e}", flush=True)
            continue
        doc = checks.finite({"model": model.slug, "hardware": hw.slug, "hw_profile": hw.profile,
                             "weights": {"dtype": precision.weights, "from": weights_from}, **adv.to_json(),
                             "seconds": round(time.perf_counter() - t0, 3)})   # every number printed is finite,
        doc = {"answer": answer_line(doc), **doc}
        mtp = mtp_module(model, args.mtp)
        if mtp is not None:
            doc["mtp_module"] = mtp
        for reason in doc["reasons"]:                                           # in the reasons' text too
            checks.finite_text(reason, f"a reason for {model.slug} on {hw.slug}")
        results.append(doc)
        if args.all and not args.json:
            ratio = "  EP -" if adv.ratio is None else f"{adv.ratio:5.2f}"
            print(f"{model.slug:18s} {hw.slug:12s} {adv.recommendation:3s}{' ' if adv.decisive else '?'} "
                  f"P(AFD better) {adv.p_afd:4.2f}  ratio {ratio}  "
                  f"EP {adv.ep.get('tokens_per_s_per_gpu', 0):8,.0f}  AFD {adv.afd.get('tokens_per_s_per_gpu', 0):8,.0f}"
                  " tokens/s per GPU" + (f"  (on a search bound: {'; '.join(adv.on_bound)})" if adv.on_bound else ""),
                  flush=True)
    if args.json:
        print(dumps(results if args.all else results[0]))
        return 0
    if args.all:
        return 0
    doc = results[0]
    print(doc["answer"])
    print(f"{doc['model']} on {doc['hardware']} ({doc['hw_profile']}), weights {doc['weights']['dtype']} "
          f"({doc['weights']['from']}), SLO {args.slo_ms:g} ms, context {args.context:g}, "
          f"MTP {args.mtp:g}" + ("" if doc.get("mtp_module", {"declared": True})["declared"] else
                                 f" ({doc['mtp_module']['words']})") + f": {doc['verdict']} ("
          + ("EP has no feasible deployment" if doc["ratio"] is None else
             f"AFD / EP tokens/s per GPU = {doc['ratio']:.2f} at the model's defaults"
             + ("" if doc["ratio_interval"] is None else
                ", {:.2f} to {:.2f} from the 10th to the 90th percentile".format(*doc["ratio_interval"])))
          + ")")
    rows = []
    for name in ("ep", "afd"):
        d = doc[name]
        if not d.get("feasible"):
            rows.append({"design": name.upper(), "config": "none feasible", "tokens/s/GPU": None, "TPOT ms": None,
                         "batch": None, "GPUs": None})
            continue
        cfg = (f"EP{d['ep_size']}+{d['redundant']} ({d['kernels']})" if name == "ep"
               else f"{d['n_attn']}A{d['n_ffn']}F, " + (f"{d['domains']} domains x " if d.get("domains", 1) > 1 else "")
               + f"{d['micro_batches']} micro-batches")
        rows.append({"design": name.upper(), "config": cfg, "tokens/s/GPU": d["tokens_per_s_per_gpu"],
                     "TPOT ms": d["tpot_ms"], "batch": float(d["batch_per_gpu"]), "GPUs": float(d["gpus"])})
    print_table(rows, ["design", "config", "tokens/s/GPU", "TPOT ms", "batch", "GPUs"],
                 {"tokens/s/GPU": ",.0f", "TPOT ms": ".1f", "batch": ".0f", "GPUs": ".0f"})
    print("\nwhy:")
    for r in doc["reasons"]:
        print(f"- {r}")
    return 0
