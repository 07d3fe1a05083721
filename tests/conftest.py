import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the measured expert-load counts: $AFDLIB_COUNTS_DIR (as for afdlib.routing.measured.default_counts_dir),
# else the shared reference data beside the repository
SHARED_DATA = Path(os.environ.get("AFDLIB_COUNTS_DIR") or ROOT.parent / "shared" / "data" / "deepseek-v3-expert-load")


@pytest.fixture
def root() -> Path:
    return ROOT
