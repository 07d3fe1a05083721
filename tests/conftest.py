from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data" / "deepseek-v3-expert-load"


@pytest.fixture
def root() -> Path:
    return ROOT
