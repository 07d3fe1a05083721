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
