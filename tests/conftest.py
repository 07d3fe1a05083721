import os
from pathlib import Path

import pytest

from afdlib.inputs.catalog import load_hardware, load_model

ROOT = Path(__file__).resolve().parent.parent
# the measured expert-load counts: $AFDLIB_COUNTS_DIR (as for afdlib.routing.measured.default_counts_dir),
# else the shared reference data beside the repository
SHARED_DATA = Path(os.environ.get("AFDLIB_COUNTS_DIR") or ROOT.parent / "shared" / "data" / "deepseek-v3-expert-load")


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(scope="module")
def ds():
    """DeepSeek-V3, the paper's reference model."""
    return load_model("deepseek-v3", profile="reference")


@pytest.fixture(scope="module")
def h800():
    """The H800 at datasheet values times the named efficiencies (the decode model's profile)."""
    return load_hardware("h800", profile="datasheet")


@pytest.fixture(scope="session", autouse=True)
def shared_results(tmp_path_factory):
    """One cache of computed results (:mod:`afdlib.report.computed`) for the whole run, every xdist
    worker's too: the chapters' tests that show one advice table compute it once."""
    from afdlib.report.computed import CACHE_ENV
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "afd-shared-results"
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before
