"""The Deployment type: its checks, the one entry point (decode_step) against the low-level
evaluators, the searches' Best, and the typed step (pools' memory, AFD's pipeline and Eqs. 3-4)."""
from dataclasses import replace

import numpy as np
import pytest

from afdlib.analysis.budget import no_attention_bubble, no_ffn_bubble
from afdlib.decode.deployment import AFDDeployment, EPDeployment, Pool, decode_step, from_record
from afdlib.decode.search import best_afd, best_ep
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions, afd_step, ep_step
from afdlib.decode.batch import best_batch
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware
from afdlib.inputs.specs import Budget, Precision

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)
ARRAY_FIELDS = ("requests", "step_s", "tpot_s", "tokens_per_s_per_gpu", "t_attn", "t_ffn", "t_comm", "t_layer",
                "sigma", "memory_bytes", "fits_memory", "dense_layer_s", "lm_head_s", "mtp_s")


@pytest.fixture(scope="module")
def h20():
    return load_hardware("h20", profile="datasheet")


@pytest.mark.parametrize("make, message", [
    (lambda h: EPDeployment(h, 0), "EP size must be a positive integer, got 0"),
    (lambda h: EPDeployment(h, 8.5), "EP size must be a positive integer, got 8.5"),
    (lambda h: EPDeployment(h, np.array([8.0, 0.0])), "EP size must be a positive integer"),
    (lambda h: EPDeployment(h, 8, redundant=-1), "redundant experts must be a non-negative integer, got -1"),
    (lambda h: EPDeployment(h, 8, micro_batches=0), "micro-batches must be a positive integer, got 0"),
    (lambda h: EPDeployment(h, 8, kernels="fast"), "EP kernels must be one of low-latency, normal, got 'fast'"),
    (lambda h: EPDeployment(h, 8, kernels=np.array(["normal", "fast"])), "EP kernels must be one of"),
    (lambda h: EPDeployment(h, 8, requests=-1), "requests per GPU must be >= 0, got -1"),
    (lambda h: EPDeployment(h, 8, requests=float("nan")), "requests per GPU must be finite, got nan"),
    (lambda h: EPDeployment("h800", 8), "needs a Hardware"),
    (lambda h: Pool(h, 0), "nodes must be a positive integer, got 0"),
    (lambda h: Pool(h, "two"), "nodes must be a number, got 'two'"),
    (lambda h: AFDDeployment(h, Pool(h, 1)), "an attention Pool and an FFN Pool"),
    (lambda h: AFDDeployment.of(h, 2, 2, micro_batches=2.5), "micro-batches must be a positive integer, got 2.5"),
    (lambda h: AFDDeployment.of(h, 2, 2, superpod="yes"), "superpod must be True, False or None"),
    (lambda h: from_record({"design": "pd"}, h), "design ep or afd"),
])
def test_bad_deployments_are_refused_with_one_line(h800, make, message):
    with pytest.raises(AfdError, match=message) as e:
        make(h800)
    assert "\n" not in str(e.value)


def test_an_ep_size_beyond_the_experts_is_refused(ds, h800):
    # DeepSeek-V3 has 256 routed experts: EP288 leaves 32 GPUs without one, unless 32 are replicated
    with pytest.raises(AfdError, match="every GPU must hold an expert"):
        decode_step(ds, EPDeployment(h800, 288, requests=8), 4096, BUDGET)
    assert float(decode_step(ds, EPDeployment(h800, 288, 32, requests=8), 4096, BUDGET).tokens_per_s_per_gpu) > 0


def test_labels_gpus_and_records(h800, h20):
    ep = EPDeployment(h800, 144, 32)
    assert (ep.design, ep.label, ep.gpus) == ("ep", "EP144+32", 144)
    afd = AFDDeployment.of(h800, 6, 3, attn_hardware=h20)
    # 6 H20 nodes and 3 H800 nodes of 8 GPUs each: 48 + 24
    assert (afd.design, afd.label, afd.gpus, afd.attention.gpus) == ("afd", "6A3F", 72, 48)
    assert afd.attention.hardware is h20 and afd.ffn.hardware is h800
    for d in (replace(ep, requests=88, micro_batches=1, kernels="normal"), replace(afd, requests=40, micro_batches=4)):
        back = from_record(d.record(), h800, h20)
        assert back.record() == d.record() and back.label == d.label


def test_decode_step_is_ep_step_and_afd_step(ds, h800, h20):
    """A property over drawn deployments: the one entry point gives what the low-level evaluators
    give for the same arguments, every field to the last bit."""
    rng = np.random.default_rng(7)
    prec = Precision(kv_cache="fp8")
    for _ in range(12):
        reqs = rng.integers(1, 300, size=5).astype(float)
        context = float(rng.choice([512, 4096, 32768]))
        budget = replace(BUDGET, l_accept=float(rng.choice([1.0, 1.7])))
        a = (Assumptions() if rng.uniform() < 0.5   # from the schedule, or what-if overrides
             else Assumptions(ep_overlap=float(rng.uniform()), afd_overlap=float(rng.uniform())))
        size = int(rng.choice([8, 16, 64, 144, 256]))
        red, mb, kernels = int(rng.choice([0, 32])), int(rng.choice([1, 2])), str(rng.choice(["low-latency", "normal"]))
        ep = decode_step(ds, EPDeployment(h800, size, red, mb, kernels, reqs), context, budget, prec, a)
        low = ep_step(ds, h800, size, reqs, context, budget, prec, a, red, micro_batches=mb, kernels=kernels)
        na, nf, m = int(rng.integers(1, 9)), int(rng.integers(1, 5)), int(rng.choice([2, 3, 4]))
        attn = h20 if rng.uniform() < 0.5 else h800
        afd = decode_step(ds, AFDDeployment.of(h800, na, nf, attn, micro_batches=m, requests=reqs), context,
                          budget, prec, a)
        low_afd = afd_step(ds, attn, h800, na, nf, reqs, context, replace(budget, micro_batches=m), prec, a)
        for new, old in ((ep, low), (afd, low_afd)):
            for f in ARRAY_FIELDS:
                assert np.array_equal(getattr(new, f), getattr(old, f)), f
            assert new.micro_batches == old.micro_batches and new.design == old.design


def test_no_requests_means_the_largest_batch_meeting_the_slo(ds, h800):
    d = EPDeployment(h800, 144, 32)
    st = decode_step(ds, d, 4096, BUDGET)
    n, ref = best_batch(lambda r: ep_step(ds, h800, 144, r, 4096, BUDGET, redundant=32), BUDGET.slo_s)
    assert float(st.requests) == n and float(st.tokens_per_s_per_gpu) == float(ref.tokens_per_s_per_gpu)
    nxt = decode_step(ds, replace(d, requests=n + 1), 4096, BUDGET)
    assert float(nxt.tpot_s) > BUDGET.slo_s or not bool(nxt.fits_memory)


def test_the_searches_best_is_a_deployment_that_gives_its_throughput(ds, h800):
    for best in (best_ep(ds, h800, BUDGET, 4096), best_afd(ds, h800, h800, BUDGET, 4096)):
        d = best.deployment
        assert isinstance(d.micro_batches, int) and d.requests >= 1
        st = decode_step(ds, d, 4096, BUDGET)
        assert float(st.tokens_per_s_per_gpu) == float(best.tokens_per_s_per_gpu)
        assert float(st.tpot_s) <= BUDGET.slo_s and bool(st.fits_memory)


def test_the_pools_memory(ds, h800, h20):
    # DeepSeek-V3, FP8 weights: one expert is 3 x 7168 x 2048 bytes = 44,040,192 B; 58 MoE layers
    expert = 3 * 7168 * 2048
    ep = decode_step(ds, EPDeployment(h800, 144, 32, requests=np.array([0.0, 64.0])), 4096, BUDGET)
    (gpu,) = ep.memory
    # without requests there is no KV cache: the memory is the weights
    assert gpu.pool == "GPU" and float(gpu.weights_bytes) == ep.memory_bytes[0]
    # EP144 + 32 holds (256 + 32) / 144 = 2 routed experts per GPU, EP256 one: one expert in each of 58 layers
    one = decode_step(ds, EPDeployment(h800, 256, requests=0.0), 4096, BUDGET).memory[0]
    assert float(gpu.weights_bytes - one.weights_bytes) == 58 * expert
    assert gpu.capacity_bytes == pytest.approx(0.9 * h800.hbm_bytes)
    assert np.array_equal(ep.fits_memory, ep.memory_bytes <= gpu.capacity_bytes)
    afd = decode_step(ds, AFDDeployment.of(h800, 2, 2, h20, requests=np.array([16.0, 4000.0])), 4096, BUDGET)
    attn, ffn = afd.memory
    # 2 FFN nodes = 16 GPUs: 256 / 16 = 16 routed experts and the shared one, 58 layers
    assert (attn.pool, ffn.pool) == ("attention GPU", "FFN GPU")
    assert float(ffn.weights_bytes) == 58 * 17 * expert == float(afd.afd.ffn_memory_bytes)
    assert attn.capacity_bytes == pytest.approx(0.9 * h20.hbm_bytes)
    assert np.array_equal(afd.fits_memory, (afd.afd.attn_memory_bytes <= attn.capacity_bytes)
                          & (afd.afd.ffn_memory_bytes <= ffn.capacity_bytes))
    assert list(afd.fits_memory) == [True, False]   # 4000 requests' KV cache does not fit an H20
    assert ep.afd is None


def test_afd_pipeline_fields_follow_the_stage_times(ds, h800):
    reqs = np.geomspace(1, 2000, 40)
    for na, nf, m in ((1, 4, 3), (4, 1, 3), (8, 2, 2), (2, 2, 4)):
        st = decode_step(ds, AFDDeployment.of(h800, na, nf, micro_batches=m, requests=reqs), 4096, BUDGET)
        p = st.afd
        for bubble in (p.bubble_attn, p.bubble_ffn):
            assert np.all((bubble >= -1e-12) & (bubble < 1))
        # Eqs. 3-4 of the step's own stage times, from their one home
        assert np.array_equal(p.no_attention_bubble, no_attention_bubble(st.t_attn, st.t_ffn, st.t_comm))
        assert np.array_equal(p.no_ffn_bubble, no_ffn_bubble(st.t_attn, st.t_ffn, st.t_comm))
        assert np.array_equal(p.stage_max_s, np.maximum(np.maximum(st.t_attn, st.t_ffn), st.t_comm))
        # each pool is busy m t per layer: the idle share is what is left of the steady-state layer,
        # max(m t_a, m t_f, m t_c, t_a + t_f + t_c); the step's layers average that plus the pipeline's
        # fill and drain, (S - t_B) (m - 1) / L at most, S the stages' sum (schedule.makespan)
        s, tb = st.t_attn + st.t_ffn + st.t_comm, p.stage_max_s
        cycle = np.maximum(m * tb, s)
        assert np.allclose(p.bubble_ffn, 1 - m * st.t_ffn / cycle)
        assert np.all(st.t_layer >= cycle * (1 - 1e-12))
        assert np.all(st.t_layer <= cycle + (s - tb) * (m - 1) / ds.moe_layers * (1 + 1e-9) + tb / ds.moe_layers)
        assert st.micro_batches == m and st.tokens_per_request == 1
        # neither condition holds only where communication sets the pace: adding the negations of
        # Eqs. 3-4 gives t_a + t_f < 2 t_c, and with t_a <= t_f, 2 t_f < t_a + t_c gives t_f < t_c
        neither = ~p.no_attention_bubble & ~p.no_ffn_bubble
        assert np.all(st.t_comm[neither] > np.maximum(st.t_attn, st.t_ffn)[neither])


def test_the_rest_of_the_step_adds_up(ds, h800):
    st = decode_step(ds, EPDeployment(h800, 64, requests=32.0), 4096, replace(BUDGET, l_accept=1.8))
    # 1.8 accepted tokens: one draft, two tokens per request verified per step
    assert st.tokens_per_request == 2 and float(st.mtp_s) > 0 and st.t_gap_s == DECODE_T_GAP_S
    total = ds.moe_layers * st.t_layer + ds.dense_layers * st.dense_layer_s + st.lm_head_s + st.mtp_s + st.t_gap_s
    assert float(st.step_s) == pytest.approx(float(total), rel=1e-12)


def test_the_command_builds_its_deployment_in_one_place(ds, h800):
    from afdlib.cli import build_parser
    from afdlib.cli.options import deployment_of
    parse = build_parser().parse_args
    common = ["--model", "deepseek-v3", "--hardware", "h800"]
    ep = deployment_of(parse(["throughput", *common, "--design", "ep", "--ep-size", "144", "--redundant", "32",
                              "--all-to-all", "normal", "--ep-micro-batches", "1"]), ds, h800)
    assert (ep.label, ep.micro_batches, ep.kernels, ep.requests) == ("EP144+32", 1, "normal", None)
    # afd simulate has no --ep-micro-batches nor --all-to-all: --micro-batches (default 2) and DeepEP's low-latency
    sim = deployment_of(parse(["simulate", *common, "--design", "ep", "--ep-size", "64", "--batch-per-gpu", "32"]),
                        ds, h800)
    assert (sim.label, sim.micro_batches, sim.kernels, sim.requests) == ("EP64+0", 2, "low-latency", 32)
    for cmd, m in (("throughput", 3), ("simulate", 3)):
        afd = deployment_of(parse([cmd, *common, "--design", "afd", "--n-attn", "6", "--n-ffn", "3",
                                   "--attn-hardware", "h20"]), ds, h800)
        assert (afd.label, afd.micro_batches, afd.attention.hardware.slug, afd.ffn.hardware.slug) == ("6A3F", m, "h20",
                                                                                                      "h800")


def test_attention_domains_split_what_reaches_the_ffn(ds, h800):
    # D domains: the FFN stage of one micro-batch sees 1/D of the pool's tokens; attention per
    # micro-batch is the same (each attention GPU runs its own m micro-batches); one domain is plain AFD
    plain = AFDDeployment.of(h800, 6, 4, micro_batches=2, requests=96)
    three = replace(plain, domains=3)
    assert three.label == "6A4F/3" and three.record()["domains"] == 3 and "domains" not in plain.record()
    assert from_record(three.record(), h800).domains == 3
    a, b = (decode_step(ds, d, 4096, BUDGET) for d in (plain, three))
    assert float(b.t_attn) == pytest.approx(float(a.t_attn))
    assert float(b.t_ffn) < float(a.t_ffn) and float(b.t_comm) <= float(a.t_comm)
    direct = afd_step(ds, h800, h800, 2, 4, 96, 4096, BUDGET, micro_batches=2)   # 2 nodes: one domain's share
    assert float(b.t_ffn) == pytest.approx(float(direct.t_ffn), rel=1e-12)
    with pytest.raises(AfdError, match="attention domains must be a positive integer"):
        replace(plain, domains=0)
    with pytest.raises(AfdError, match="equal domains"):
        AFDDeployment.of(h800, 1, 1, domains=3)     # 8 attention GPUs in 3 domains


def test_a_die_of_a_two_die_package():
    # Ascend 910C: 752 TFLOPS BF16, INT8 at twice that (data/hardware.yaml), 3.2 TB/s, 128 GB, 8 per node:
    # one die is half of each, 16 dies a node; 8-bit weights run INT8 at its rate, BF16 at the BF16 one
    from afdlib.inputs.catalog import per_die
    chip = load_hardware("ascend-910c", profile="datasheet")
    die = per_die(chip, 2)
    assert die.peak("bf16") == pytest.approx(chip.peak("bf16") / 2) and die.peak("int8") == pytest.approx(2 * die.peak("bf16"))
    assert die.hbm_bytes == pytest.approx(chip.hbm_bytes / 2) and die.scale_up_bytes_per_s == pytest.approx(chip.scale_up_bytes_per_s / 2)
    assert (die.gpus_per_node, die.scale_up_domain) == (16, 768) and per_die(chip, 1) is chip
    assert load_hardware("h800", profile="datasheet").peak("int8") == load_hardware("h800", profile="datasheet").peak("fp8")


def test_the_bubble_flags_follow_the_domains(ds, h800):
    # helper-5's finding: with 3 domains the paper's Eq. 3 (2 t_a >= t_f + t_c) said "no attention
    # bubble" while the attention pool idled 59% of the layer; with domains the flags are the idle shares
    st = decode_step(ds, AFDDeployment.of(h800, 6, 4, micro_batches=2, requests=96, domains=3), 4096, BUDGET)
    assert float(st.afd.bubble_attn) > 0.5 and not bool(st.afd.no_attention_bubble)
    assert bool(st.afd.no_ffn_bubble) == (float(st.afd.bubble_ffn) <= 1e-9)
