"""Every objective's gradients and hessians are bit for bit those computed before issue 27's performance work.

The SHA-256 of each configuration's float32 gradient and hessian arrays, on random queries with ties and large
score ranges (and, for the threaded path, a dataset large enough to be split over threads), were stored in
``data/stored_gradients.json`` from the code before that work. The objectives that came later (PA-ListMLE,
PL-Rank-3, LambdaLoss, YetiRank) were added on 2026-11-27, their hashes from that day's code; YetiRank's equal
those of the code before that day's change of its pair loop. PL-Rank-3's were written anew on 2026-12-04, when its
rankings came to be drawn position by position from a sum tree instead of by Gumbel keys (other draws, of the same
policy: ``test_rankings_drawn_position_by_position_follow_the_policy`` bounds them). A change of a kernel's
arithmetic (its order of operations, a vectorised exponential) fails here, naming the configuration; such a
change must be bounded by a test of its own instead, and the hashes written anew on purpose::

    python tests/objectives/test_stored_gradients.py --write

PLRank's float64 losses are also compared with those stored before its exponentials were vectorised
(``data/plrank_losses_before_vectorized_exp.npz``): that change moved them by at most a few units in the last
place (under 1e-15 relative on these queries), too little to change one float32 gradient here.

Compiled kernels only: the interpreted pass (NUMBA_DISABLE_JIT) computes some functions with NumPy's vectorised
routines, whose last bits differ.
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from plboost.objectives import get_objective

STORED = Path(__file__).with_name("data") / "stored_gradients.json"
CONFIGURATIONS = [
    ("plrank", {}), ("plrank", {"n_permutations": 3}), ("plrank", {"top_k": None}), ("urank", {}), ("umart", {}),
    # LightGBM's arithmetic at the floor it had by default before it took LightGBM's 0
    ("umart", {"window": 1}), ("umart", {"window": 1, "lightgbm_arithmetic": True, "hessian_floor": 1e-6}),
    ("umart", {"preset": "paper"}),
    ("pl_partition", {}), ("pl_lb", {}), ("listnet", {}), ("listnet", {"target": "gain"}),
    # objectives that came after issue 27: their gradients as of 2026-11-27 (module docstring)
    ("pa_listmle", {}), ("pl_rank3", {}), ("pl_rank3", {"curvature": "lambda"}), ("lambdaloss", {}),
    ("lambdaloss", {"preset": "loss"}), ("yetirank", {}), ("yetirank", {"preset": "plackett_luce"}),
    ("yetirank", {"loss": "mrr", "neighbors": 3}),
]


def _queries(n_queries: int, widest: int, seed: int):
    """Labels 0-4 with many ties, query sizes 1..widest, scores of a wide range with tied and huge values."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, widest + 1, size=n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    labels = rng.integers(0, 5, size=offsets[-1]).astype(np.float64)
    scores = rng.normal(scale=3.0, size=offsets[-1])
    scores[rng.random(offsets[-1]) < 0.1] = 0.5  # tied scores
    scores[: sizes[0]] *= 400.0  # a query spanning well over the narrowing limit
    return scores, labels, offsets


DATASETS = {"small": (300, 40, 0), "threaded": (400, 150, 1)}  # the second holds over 2 x 10,000 documents


def _digests() -> dict[str, str]:
    digests = {}
    for dataset, arguments in DATASETS.items():
        scores, labels, offsets = _queries(*arguments)
        for name, params in CONFIGURATIONS:
            grad, hess = get_objective(name, **params).gradients(scores, labels, offsets)
            key = f"{dataset}: {name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
            digests[key] = hashlib.sha256(grad.tobytes() + hess.tobytes()).hexdigest()
    return digests


@pytest.mark.compiled_only("compiled kernels only (module docstring)")
def test_gradients_are_bit_identical_to_the_stored_ones():
    stored = json.loads(STORED.read_text())
    now = _digests()
    assert set(now) == set(stored), "configurations differ from the stored ones: write them anew on purpose"
    changed = [key for key in stored if now[key] != stored[key]]
    assert not changed, f"gradients changed for {changed}"


@pytest.mark.compiled_only("compiled kernels only (module docstring)")
def test_plranks_losses_are_within_1e_13_of_those_before_the_vectorised_exponential():
    stored = np.load(STORED.with_name("plrank_losses_before_vectorized_exp.npz"))
    for dataset, arguments in DATASETS.items():
        scores, labels, offsets = _queries(*arguments)
        for i, params in enumerate([{}, {"n_permutations": 3}]):
            before = stored[f"{dataset}-{i}"]
            now = get_objective("plrank", **params).losses(scores, labels, offsets)
            np.testing.assert_allclose(now, before, rtol=1e-13, atol=0, err_msg=f"{dataset}: plrank({params})")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    STORED.write_text(json.dumps(_digests(), indent=1) + "\n")
    print(f"wrote {STORED}")
