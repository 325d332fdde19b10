"""A progress bar over boosting rounds that shows the latest validation score."""

from __future__ import annotations

from tqdm import tqdm


class RoundProgress:
    """tqdm bar over ``total`` rounds; ``update(score)`` advances it by one round."""

    def __init__(self, total: int, description: str, enabled: bool):
        self._bar = tqdm(total=total, desc=description, unit="round", leave=False, disable=not enabled)

    def update(self, metric_name: str | None = None, score: float | None = None) -> None:
        if score is not None:
            self._bar.set_postfix({metric_name: f"{score:.4f}"}, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
