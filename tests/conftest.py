from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real ranking data in ../shared/data beside the repository (see its README); skips if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test caches parsed files in a fresh temporary directory, never in the user's home."""
    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(tmp_path_factory.mktemp("plboost-cache")))
