"""A property of throughput, advise and simulate over random option sets (seeded), text and JSON:
each run exits 0 or 2, an error is one line, every number printed is finite, and no run takes
a minute of CPU (a guard against a hang or unbounded work, counted in CPU time so that a loaded
machine does not trip it; speed itself is measured in scripts/benchmark.py). The draws mix valid values with the edges of each option's range and beyond it, and now and
then an option of the other design; the commands run in-process through afdlib.cli.main."""
import json
import math
import re
import signal
import time

import numpy as np
import pytest

from afdlib.cli import main

SEED = 22
DRAWS = {"throughput": 60, "simulate": 60, "advise": 20}
"""Draws per command (half text, half JSON); the file runs in well under a minute on one core."""
LIMIT_CPU_S = 60
"""CPU seconds one run may take (SIGPROF: this process's CPU time, not the wall clock)."""
EDGE = 0.2
"""Chance that a drawn option takes a value at or beyond the edge of its range (else a usual one)."""

MODELS = ["deepseek-v3", "qwen3-30b-a3b", "mixtral-8x7b", "step3", "kimi-k2", "gpt-oss-120b"]
HARDWARE = ["h800", "h20", "gb200", "b200", "mi300x", "tpu-v5p", "ascend-910c"]

# option: (usual values, values at or beyond the edges of its range)
DECODE = {   # options every command takes (afdlib.cli.options.add_decode_options)
    "--context": (["1", "1024", "4096", "32768"], ["0", "1e7", "-1", "nan", "1e300"]),
    "--slo-ms": (["20", "50", "100"], ["0.01", "1e6", "0", "inf"]),
    "--mtp": (["1", "1.7", "2"], ["64", "0.5", "65"]),
    "--t-gap-ms": (["0", "3", "15"], ["1e5", "-1"]),
    "--sigma": (["0.5", "0.8", "1"], ["1e-300", "0.001", "0.01", "1.5"]),
    "--ep-overlap": (["0", "0.5", "1"], ["2"]),
    "--afd-overlap": (["0", "0.5", "1"], ["-0.1"]),
    "--kernels": (["calibrated", "datasheet", "roofline"], ["fast"]),
    "--matmul-efficiency": (["0.5", "1"], ["1e-300", "0"]),
    "--weights": (["fp8", "bf16", "nvfp4"], ["fp7"]),
    "--kv-cache": (["bf16", "fp8"], []),
    "--dispatch": (["fp8", "bf16", "fp4"], ["fp5"]),
    "--hw-profile": (["paper", "datasheet"], []),
    "--model-profile": (["paper", "reference"], []),
}
EP = {"--ep-size": (["8", "64", "144"], ["1", "257", "300", "1000000", "0"]),
      "--redundant": (["0", "32"], ["1000000"])}
AFD = {"--n-attn": (["1", "2", "4"], ["100000", "0"]), "--n-ffn": (["1", "3", "8"], ["100000"]),
       "--attn-hardware": (["h20", "h800"], ["nope"]), "--attention-domains": (["1", "2", "3"], ["0", "65"])}
DEPLOYMENT = {"--micro-batches": (["1", "2", "3", "4"], ["64", "65"]),
              "--batch-per-gpu": (["1", "16", "64"], ["1000", "1000000", "0"])}
THROUGHPUT = {"--gpus-per-node": (["4", "8"], ["1", "4096", "4097"]), "--all-to-all": (["low-latency", "normal"], []),
              "--ep-micro-batches": (["1", "2"], ["3"])}
SIMULATE = {"--cv-ffn": (["0", "0.3"], ["10", "11"]), "--cv-comm": (["0", "0.3"], ["10"]), "--cv-attn": (["0.3"], []),
            "--steps": (["1", "200", "1000"], ["30000", "10000000", "0"]), "--seed": (["0", "7"], ["-1"]),
            "--stragglers": (["none", "uniform"], [])}
TIMES = {"--t-attn-us": (["10", "100"], ["0", "1e-300", "1e9"]), "--t-ffn-us": (["100"], ["0", "1e9"]),
         "--t-comm-us": (["50"], ["0", "1e9", "-1"]), "--layers": (["1", "61"], ["3000", "10001"]),
         "--micro-batches": (["1", "2", "3", "4"], ["64"])}
ADVISE = {"--validated-only": ([None], []), "--price-per-gpu-hour": (["SELF=2"], ["SELF=1e300", "x=2", "SELF"]),
          "--attn-hardware": (["h20", "h800"], [])}

NON_FINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?!\w)", re.IGNORECASE)


def pick(rng, table: dict, k: int) -> list[str]:
    """``k`` distinct options of ``table``, each with a usual value or (chance EDGE) an edge one."""
    argv = []
    for option in rng.choice(sorted(table), size=min(k, len(table)), replace=False):
        usual, edge = table[option]
        values = edge if edge and rng.random() < EDGE else usual
        value = values[rng.integers(len(values))]
        argv += [str(option)] + ([] if value is None else [value])
    return argv


def draw(rng, command: str) -> list[str]:
    model, hw = MODELS[rng.integers(len(MODELS))], HARDWARE[rng.integers(len(HARDWARE))]
    argv = [command]
    if command == "advise":
        extra = pick(rng, DECODE, rng.integers(0, 3)) + pick(rng, ADVISE, rng.integers(0, 2))
        return argv + ["--model", model, "--hardware", hw] + [a.replace("SELF", hw) for a in extra]
    design = ["ep", "afd"][rng.integers(2)]
    other, own = (AFD, EP) if design == "ep" else (EP, AFD)
    if command == "simulate" and rng.random() < 0.4:   # given stage times
        argv += ["--design", design, "--t-attn-us", "100", "--t-ffn-us", "120", "--t-comm-us", "60", "--layers", "8",
                 *pick(rng, TIMES, rng.integers(0, 3)), *pick(rng, SIMULATE, rng.integers(0, 3))]
        if rng.random() < 0.1:
            argv += pick(rng, DECODE, 1)     # an option the given times do not use
        return argv
    argv += ["--model", model, "--hardware", hw, "--design", design]
    argv += ["--ep-size", "8"] if design == "ep" else ["--n-attn", "2", "--n-ffn", "2"]
    argv += pick(rng, own, rng.integers(0, 2)) + pick(rng, DEPLOYMENT, rng.integers(0, 2))
    argv += pick(rng, DECODE, rng.integers(0, 3))
    if command == "throughput":
        extra = {k: v for k, v in THROUGHPUT.items() if design == "ep" or k == "--gpus-per-node"}
        argv += pick(rng, extra, rng.integers(0, 2))
    else:
        argv += pick(rng, SIMULATE, rng.integers(0, 3))
    if rng.random() < 0.1:
        argv += pick(rng, other, 1)          # an option of the other design
    return argv


class TooLong(Exception):
    pass


def run(argv, capsys):
    def alarm(signum, frame):
        raise TooLong(f"over {LIMIT_CPU_S} CPU-s: {argv}")
    old = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, LIMIT_CPU_S)
    t0 = time.process_time()
    try:
        code = main(argv)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    out, err = capsys.readouterr()
    return code, out, err, time.process_time() - t0


def finite_json(text: str, argv):
    def refuse(name):
        raise AssertionError(f"{name} in JSON of {argv}")
    doc = json.loads(text, parse_constant=refuse)
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, float):
            assert math.isfinite(x), argv
        elif isinstance(x, str):
            assert not NON_FINITE.search(x), (x, argv)
    return doc


@pytest.mark.parametrize("command", list(DRAWS))
def test_random_option_sets_exit_cleanly_with_finite_numbers(capsys, command):
    rng = np.random.default_rng([SEED, list(DRAWS).index(command)])
    codes = []
    for i in range(DRAWS[command]):
        argv = draw(rng, command) + (["--json"] if i % 2 else [])
        code, out, err, seconds = run(argv, capsys)
        codes.append(code)
        assert code in (0, 2), (argv, code, err)
        assert seconds < LIMIT_CPU_S, (argv, seconds)
        if code == 2:
            assert err.startswith("afd: error: ") and err.count("\n") == 1, (argv, err)
            assert out == "", (argv, out)
        elif "--json" in argv:
            finite_json(out, argv)
        else:
            assert out and not NON_FINITE.search(out), (argv, out)
    assert 0 in codes and 2 in codes, codes   # the draws reach both answers and refusals
