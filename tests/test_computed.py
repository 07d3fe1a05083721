"""Results computed once and read many times (afdlib.report.computed), and the verdicts of devices
searched together (afdlib.decision.stacked)."""
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.report import computed
from afdlib.report.computed import CACHE_ENV, fingerprint, shared

ROOT = Path(__file__).resolve().parent.parent


def test_fingerprint_is_canonical_and_tells_apart_what_differs():
    a, b = load_hardware("h800", profile="datasheet"), load_hardware("h800", profile="datasheet")
    assert a is not b and fingerprint(a) == fingerprint(b)                       # loaded twice: one key
    assert fingerprint(a) != fingerprint(replace(a, hbm_bytes=a.hbm_bytes * 1.000001))
    assert fingerprint(1) != fingerprint(1.0) != fingerprint("1")                  # types are tagged
    assert fingerprint(np.arange(3.0)) == fingerprint(np.array([0.0, 1.0, 2.0]))  # arrays by content
    assert fingerprint(np.arange(3.0)) != fingerprint(np.arange(3))                # ... and dtype
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})          # a mapping has no order
    assert fingerprint([1, 2]) != fingerprint((1, 2)) != fingerprint([2, 1])
    with pytest.raises(TypeError, match="not a cache key"):
        fingerprint(object())


calls: list = []


def _square(x, offset=0.0):
    calls.append(x)
    return x * x + offset


def test_shared_stores_nothing_without_a_cache_folder(monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    calls.clear()
    assert shared(_square, 3.0) == shared(_square, 3.0) == 9.0
    assert calls == [3.0, 3.0]


def test_shared_computes_each_call_once_keyed_on_its_bound_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    calls.clear()
    assert shared(_square, 3.0) == 9.0
    # the same call written three ways (defaults applied, by keyword): read, not computed
    assert shared(_square, 3.0, 0.0) == shared(_square, x=3.0, offset=0.0) == 9.0
    assert shared(_square, 3.0, offset=1.0) == 10.0                      # another argument: computed
    assert calls == [3.0, 3.0]
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 2


def test_the_key_changes_with_the_data_files(tmp_path, monkeypatch):
    import shutil

    import afdlib.inputs.catalog as catalog
    copy = tmp_path / "data"
    shutil.copytree(catalog.data_dir(), copy)
    monkeypatch.setattr(catalog, "data_dir", lambda: copy)
    before = computed.code_version.__wrapped__()
    (copy / "hardware.yaml").write_text((copy / "hardware.yaml").read_text() + "\n# edited\n")
    assert computed.code_version.__wrapped__() != before


WORKER = """
import os, sys, time
sys.path.insert(0, {root!r})
from afdlib.report.computed import shared_each

def work(x):
    with open(os.environ["LOG"], "a") as f:
        f.write(f"{{os.getpid()}} {{x}}\\n")
    time.sleep(0.3)
    return x * 10

# both start together (a slow start of one would leave it nothing to do)
open(os.path.join(os.environ["READY"], str(os.getpid())), "w").close()
while len(os.listdir(os.environ["READY"])) < 2:
    time.sleep(0.01)
print(shared_each([(work, (x,), {{}}) for x in range(6)]))
"""


def test_two_processes_share_the_work_and_get_every_result(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(root=str(ROOT)))
    (tmp_path / "ready").mkdir()
    env = {"PATH": "/usr/bin:/bin", CACHE_ENV: str(tmp_path / "cache"), "LOG": str(tmp_path / "log"),
           "READY": str(tmp_path / "ready")}
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == [str([x * 10 for x in range(6)])] * 2          # both read every result
    log = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    assert sorted(int(x) for _, x in log) == list(range(6))         # each computed exactly once
    assert len({pid for pid, _ in log}) == 2                         # by both processes, not one


def test_advice_one_model_at_a_time_is_the_whole_table(tmp_path, monkeypatch):
    from afdlib.decision.advise import advice_table
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    models = [load_model(m, profile="reference") for m in ("deepseek-v3", "step3")]
    hws = [load_hardware(h, profile="datasheet") for h in ("h800", "gb200", "h200")]   # two groups: Hopper, GB200
    budget = Budget(slo_s=0.05)
    whole = pd.DataFrame(advice_table(models, hws, budget, 4096, uncertain=False))
    assert len(whole) == 6 and whole.ratio.notna().all()
    assert pd.DataFrame(computed.advice(models, hws, budget, 4096, uncertain=False)).equals(whole)
    assert pd.DataFrame(computed.advice(models, hws, budget, 4096, uncertain=False)).equals(whole)  # read back
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 4           # one result per model and group
    # another grid with one of these groups reads its rows: one more result, for the new group only
    b200 = load_hardware("b200", profile="datasheet")
    part = pd.DataFrame(computed.advice(models[:1], [b200, hws[1]], budget, 4096, uncertain=False))
    assert part.iloc[1].equals(whole.iloc[1]) and part.hardware.tolist() == ["b200", "gb200"]
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 5


def test_verdicts_of_devices_searched_together_are_each_alone():
    from afdlib.decision.stacked import device_groups, verdicts
    from afdlib.decision.verdict import verdict
    m, budget = load_model("deepseek-v3", profile="reference"), Budget(slo_s=0.05)
    hws = [load_hardware(h, profile="datasheet") for h in ("h800", "h200")]
    assert device_groups(hws) == [[0, 1]]                          # one structure: one call
    together = verdicts(m, hws, budget, 4096)
    alone = [verdict(m, h, budget, 4096, tornado=False) for h in hws]
    assert [(v.p_afd, v.ratio_interval, v.ratio_median) for v in together] == \
        [(v.p_afd, v.ratio_interval, v.ratio_median) for v in alone]
    assert together[0].p_afd != together[1].p_afd                  # two devices, two answers
