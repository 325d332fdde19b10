from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real ranking data in ../shared/data beside the repository (see its README); skips if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def mq2008(shared_data):
    """MQ2008 Fold1 as [train, valid, test] ``RankingData`` of the same width, read once; tests must not change it."""
    from plboost.data import load_splits

    fold = shared_data / "MQ2008" / "Fold1"
    return load_splits(fold / "train.txt.gz", fold / "vali.txt.gz", fold / "test.txt.gz")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test caches parsed files in a fresh temporary directory, never in the user's home."""
    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(tmp_path_factory.mktemp("plboost-cache")))


def _registered_objectives():
    from plboost.objectives import OBJECTIVES

    return list(OBJECTIVES.values())


@pytest.fixture(params=_registered_objectives(), ids=lambda cls: cls.name)
def objective_class(request):
    """Every objective class in plboost's registry (``plboost.objectives.OBJECTIVES``): a test that takes
    this fixture, or ``objective``, covers an objective as soon as it is registered."""
    return request.param


@pytest.fixture
def objective(objective_class):
    """A default-constructed instance of every registered objective."""
    return objective_class()
