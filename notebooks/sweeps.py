# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Design-space sweeps: where AFD overtakes EP
#
# The sweet-spot maps ({doc}`sweet_spots`) vary one property at a time. A hardware or model
# architect asks about a whole design space at once: scale-out and scale-up bandwidth, HBM, FLOP/s,
# expert width and count, top-K, SLO, context. `afd sweep` evaluates such a space: a spec names a
# model, a device, a design (`ep`, `afd` or `both`), what is fixed and the axes to vary (any hardware,
# model or deployment field and any setting of the decode model, each a list or a range), and the
# command evaluates the grid in chunks on [Dask](https://www.dask.org) (a local cluster of worker
# processes by default, or an existing Dask scheduler with `--scheduler`) through the same vectorised
# functions as `afd throughput` (a given deployment) and `afd advise` (the best EP and the best AFD
# deployment searched per point). The result is an [xarray](https://xarray.dev) Dataset with one
# dimension per axis, units on every coordinate, written as Zarr:
#
# ```bash
# # this chapter's sweep, on 2 local worker processes
# afd sweep figures/sweeps_spec.yaml --out surface.zarr
# # on an existing Dask cluster
# afd sweep spec.yaml --out big.zarr --scheduler tcp://host:8786
# ```
#
# This chapter runs one such sweep, small enough for the book ({glue:text}`points` points, each the
# best EP and the best AFD deployment of a member of {glue:text}`ref_name`'s family on
# {glue:text}`hw_name`), and reads from it the **break-even surface**: the {glue:text}`bw_words` per
# GPU at which AFD overtakes EP, as a function of expert width and sparsity ({glue:text}`bw_why`).
#
# **Result.** AFD leads EP somewhere in the bandwidth range ({glue:text}`bw_range` GB/s per GPU) in
# {glue:text}`n_ahead` of the {glue:text}`n_cells` (M, E / K) cells, and never in
# {glue:text}`n_never` ({numref}`sweeps-break-even`). {glue:text}`band` Along expert width (M, at the same
# total parameters) {glue:text}`axis_m`. The paper's condition is about the ratio on a given
# network, and that moves differently at different bandwidths: at {glue:text}`rt_low_bw` GB/s it
# {glue:text}`rt_low` along M, from {glue:text}`rt_low_from` to {glue:text}`rt_low_to` (medians over
# sparsity), at {glue:text}`rt_high_bw` GB/s it {glue:text}`rt_high`, from {glue:text}`rt_high_from` to
# {glue:text}`rt_high_to`. Along sparsity (E / K) {glue:text}`axis_s`. {glue:text}`placed_cap` as they are
# differ from the family's reading at their (M, E / K) in {glue:text}`n_differ` of
# {glue:text}`n_models` cases ({numref}`tab-sweeps-models`): expert width and sparsity do not decide
# alone, the rest of a model (attention, layers, hidden size) moves the crossing too.

# %% tags=["parameters"]
model = "deepseek-v3"            # the family the surface is drawn for (same total routed parameters)
hardware = "h800"                # the swept bandwidth: its NIC's (a Superpod's: its scale-up fabric)
hw_profile = "datasheet"
slo_ms = 50.0
context = 4096
bandwidth = None                 # GB/s per GPU (datasheet figure); None: the device's own / 4 .. x 16, 25 points 2^(1/4) apart
expert_widths = None             # M (E and K scale with 1 / M); None: the model's own M x 1/4 .. 4
sparsities = None                # E / K; None: the model's own x 1/4 .. 2
models = ["deepseek-v3", "kimi-k2", "step3", "qwen3-coder", "ernie-4.5", "glm-4.7"]   # placed on the surface
output_dir = "figures"

# %% tags=["hide-input"]
import afdlib.report.params as _p


def _bandwidth(v):
    if not isinstance(v, dict) or set(v) - {"from", "to", "num", "log"}:
        raise _p.checks.Refused("a mapping of from, to, num (and log)", v)
    return v


_p.check_parameters(
    globals(), model=_p.text, hardware=_p.text, hw_profile=_p.PROFILE_HW, slo_ms=_p.positive, context=_p.nonnegative,
    bandwidth=_p.optional(_bandwidth), expert_widths=_p.optional(_p.list_of(_p.positive, 2)),
    sparsities=_p.optional(_p.list_of(_p.positive, 2)),
    models=_p.list_of(_p.text), output_dir=_p.text)
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from afdlib.inputs.catalog import load_hardware, load_model, model_names
from afdlib.report.figures import break_even_figure
from afdlib.report.style import glue_all, glue_figure, glue_table, save_data, setup_style
from afdlib.sweep.study import bandwidth_axis, bandwidth_range, break_even_surface, family_axes, surface_spec

setup_style()
hw, ref = load_hardware(hardware, profile=hw_profile), load_model(model, profile="reference")
axis = bandwidth_axis(hw)
expert_widths, sparsities = family_axes(ref, expert_widths, sparsities)
spec = surface_spec(model, hardware, bandwidth or bandwidth_range(hw, axis), expert_widths, sparsities,
                    {"slo_ms": slo_ms, "context": context}, hw_profile, axis)
Path(output_dir).mkdir(parents=True, exist_ok=True)
(Path(output_dir) / "sweeps_spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
surface = break_even_surface(spec, models)
ds, c = surface.ds, surface.crossing
save_data(ds[["afd_over_ep"]].to_dataframe().reset_index(), "sweeps_surface", output_dir)
superpod = axis == "scale_up_gb_per_s"
own = [m for m in models if m not in model_names()]      # a book's own model, not the catalogue's
placed_words = "the catalogue's models" + "".join(f" and {load_model(m, profile='reference').name}" for m in own)
glue_all({"ref_name": ref.name, "hw_name": hw.name, "slo": f"{slo_ms:g}", "ctx": f"{context:g}",
          "nic": f"{surface.own_gb_per_s(hw):g}",
          "bw_words": "scale-up fabric's bandwidth" if superpod else "scale-out bandwidth",
          "bw_why": (f"{hw.name} is a Superpod: its nodes share one scale-up fabric, so both designs' "
                     "expert traffic crosses that fabric and it is the bandwidth swept") if superpod
          else "both designs' expert traffic between nodes crosses the NICs, so theirs is the bandwidth swept",
          "bw_other": "the fabric's latency" if superpod else "a Superpod's fabric",
          "placed": placed_words, "placed_cap": placed_words[0].upper() + placed_words[1:], **surface.readings(),
          **surface.reference_readings(), **surface.ratio_readings(surface.own_gb_per_s(hw), 8 * surface.own_gb_per_s(hw)),
          "bw_step": f"{(step := (spec['vary'][axis]['to'] / spec['vary'][axis]['from']) ** (1 / (spec['vary'][axis]['num'] - 1))):.2f}",
          "bw_step_note": " (the spacing of afd advise's break-even grid)" if abs(step - 2 ** 0.25) < 0.005 else "",
          "so_eff": (f"in sustained bandwidth: the datasheet figures here times {eff:g}"
                     if (eff := getattr(hw.efficiency, 'scale_up' if superpod else 'scale_out') if hw.efficiency else 1.0) < 1
                     else "in the same figures: this device's data gives no efficiency")})
placed = {n: (m, s) for n, (m, s, _) in surface.models.items()}
fig = break_even_figure(expert_widths, sparsities, {"AFD overtakes EP at": (c.overtake, c.where),
                                                     "EP leads again above": (c.retake, np.where(c.where == "never", "never", ""))}, placed,
                        what="scale-up fabric bandwidth" if superpod else "scale-out bandwidth")
glue_figure(fig, "sweeps_break_even", output_dir);

# %% [markdown]
# ```{glue:figure} fig_sweeps_break_even
# :name: sweeps-break-even
#
# The break-even surface of {glue:text}`ref_name`'s family on {glue:text}`hw_name` (SLO
# {glue:text}`slo` ms, context {glue:text}`ctx`, no MTP, the best deployment of each design per
# point; M and E / K of members at the same total routed parameters). Left: the {glue:text}`bw_words` per GPU (the datasheet figure the spec sweeps; {glue:text}`hw_name`'s is
# {glue:text}`nic` GB/s) at which AFD first gives more output tokens/s per GPU than EP
# ("<=": already at the bottom of the range; "never": not in the range). Right: the bandwidth above
# which EP leads again ("-": AFD still leads at the top, or never led). Both are interpolated in log
# bandwidth between swept points. Orange: {glue:text}`placed` at their own M and E / K
# ({glue:text}`model_numbers`); their other dimensions differ from the family's, so a dot reads the
# surface, not the model (the table below gives each model's own crossing). Data:
# {download}`sweeps_surface.csv <figures/sweeps_surface.csv>`, the spec:
# {download}`sweeps_spec.yaml <figures/sweeps_spec.yaml>`.
# ```
#
# AFD leads from the bottom of the range in {glue:text}`n_bottom_cells` and still leads at its top in
# {glue:text}`n_to_top`. At {glue:text}`ref_name`'s own cell (M = {glue:text}`ref_m`, E / K =
# {glue:text}`ref_s`) the ratio peaks at {glue:text}`ref_peak` at {glue:text}`ref_peak_bw` GB/s;
# from there to the top of the range EP's tokens/s per GPU grow by {glue:text}`ref_ep_gain` and
# AFD's by {glue:text}`ref_afd_gain`: past the peak more network helps {glue:text}`ref_helps` (the
# sweet-spot chapter reads the same ratio along bandwidth for the model itself,
# {glue:text}`so_eff`). {glue:text}`ref_peak_words` under the model's uncertain
# assumptions ({doc}`sweet_spots`), so read the surface for where AFD can lead, not where it will.

# %% tags=["hide-input"]
table = pd.DataFrame(surface.rows())
save_data(table, "sweeps_models", output_dir)
glue_table("tab_sweeps_models", table.style.hide(axis="index").format({"M": "{:.0f}", "E/K": "{:.0f}"}))

# %% [markdown]
# :::{table} The placed models on the surface: its reading at each model's nearest (M, E / K) cell, and the model's own crossing along the same bandwidth axis (GB/s per GPU)
# :name: tab-sweeps-models
#
# ```{glue:md} tab_sweeps_models
# :format: myst
# ```
# :::
#
# ## Running larger sweeps
#
# The chapter's sweep runs in this process (Dask's synchronous scheduler); the same spec runs on
# worker processes with `afd sweep`, chunk by chunk so memory is bounded per chunk (`--chunk`
# points per task). `scripts/benchmark.py` measures the points per second per worker, the speed-up
# from one to two workers and the memory per worker, and projects a 10^10-point sweep onto N
# workers (times are measured there, not here, so the book rebuilds identically). A point whose
# deployment is searched costs the searches of `afd advise` (hundreds of candidates, each with its
# batch search); a point with a given deployment (`ep_size`, or `n_attn` and `n_ffn`, in the spec)
# costs one batch search, orders of magnitude less than a searched point (the benchmark measures both).
#
# ## Limitations
#
# - The surface is one family (members of {glue:text}`ref_name` at the same total routed parameters)
#   on one device; another model's attention, layers and hidden size move its crossing
#   ({numref}`tab-sweeps-models`), so read a model from its own sweep, not from its dot.
# - The bandwidth axis has {glue:text}`bw_num` points a factor {glue:text}`bw_step` apart{glue:text}`bw_step_note`;
#   crossings are interpolated between them, so a lead narrower than one step would be missed. A band
#   is read from its ends: in {glue:text}`n_gapped` of the {glue:text}`n_ahead` cells where AFD leads,
#   EP leads again at a swept point inside the band (the ratio dips below 1 and rises again).
# - Each design's best deployment is searched within the bounds of `afd advise`; in
#   {glue:text}`n_on_bound` of the {glue:text}`points` points a best sits on a bound of its search
#   (there a wider search could move the ratio).
# - Only the {glue:text}`bw_words` is swept here; {glue:text}`bw_other`, HBM, FLOP/s and the SLO are axes
#   `afd sweep` takes too, left to the reader's spec.

# %% tags=["remove-cell"]
# the chapter as the book prints it, values and figures in place, for a reader of this executed notebook
from afdlib.report.readable import show_chapter
show_chapter("sweeps")
