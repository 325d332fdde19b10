"""Per-document groups for fairness of exposure (:mod:`plboost.fairness`, :class:`plboost.FairPLRank3`): from a
file beside the data, one group per line in the data's document order (as LightGBM reads a ``.query`` file beside
an SVMlight file), or from a feature split at a threshold (as the fairness-of-exposure papers define groups), by
its number or, for a table, its column's name. A table's column that is not a feature (a seller's id, say) is read
with pandas and passed as it is: any per-document values are groups.

A group is any text without whitespace (``0``, ``1``, ``protected``); lines are the documents, in order. Errors
name the file and line: an empty line, a line of two words, a count of lines other than the data's documents.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .svmlight_parser import DataFormatError

__all__ = ["groups_from_feature", "read_groups"]


def read_groups(path, n_docs: int) -> np.ndarray:
    """The groups of ``path``: one per line, ``n_docs`` lines (a last newline optional), as a str array."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such groups file") from None
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not a text file of groups ({error.reason} at byte {error.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    groups = []
    for number, line in enumerate(lines, start=1):
        words = line.split()
        if len(words) != 1:
            what = "is empty" if not words else f"holds {len(words)} values ({line.strip()[:40]!r})"
            raise DataFormatError(path, number, f"{what}; each line is the group of one document")
        groups.append(words[0])
    if len(groups) != n_docs:
        raise DataFormatError(path, None, f"{len(groups)} groups for {n_docs} documents (one line per document, in "
                              "the data's order)")
    return np.array(groups, dtype=str)


def groups_from_feature(data, feature, threshold: float) -> np.ndarray:
    """Group 1 for the documents whose ``feature`` is above ``threshold``, 0 for the rest. ``data``: a feature matrix
    (rows are documents) or a :class:`~plboost.data.RankingData`; ``feature``: its number from 1 (as SVMlight numbers
    features) or, for data read from a table, its column's name. A missing value (NaN) is refused: it belongs to
    neither group."""
    X = getattr(data, "X", data)
    n_features = X.shape[1]
    names = tuple(getattr(data, "feature_names", None) or ())
    if isinstance(feature, str):
        if feature not in names:
            known = f"the feature columns are {', '.join(map(repr, names))}" if names else "the data has no names"
            raise ValueError(f"groups_from_feature: no feature column {feature!r}; {known}")
        number = names.index(feature) + 1
    elif isinstance(feature, bool) or not isinstance(feature, (int, np.integer)) or not 1 <= feature <= n_features:
        raise ValueError(f"groups_from_feature: feature must be a feature number from 1 to {n_features} (or a "
                         f"column's name), got {feature!r}")
    else:
        number = int(feature)
    if not np.isfinite(threshold):
        raise ValueError(f"groups_from_feature: threshold must be a finite number, got {threshold!r}")
    column = X[:, number - 1]
    column = np.asarray(column.todense() if hasattr(column, "todense") else column, dtype=np.float64).ravel()
    if np.isnan(column).any():
        row = int(np.flatnonzero(np.isnan(column))[0])
        raise ValueError(f"groups_from_feature: feature {feature!r} is missing (NaN) at row {row}: such a document "
                         "belongs to neither group")
    return (column > threshold).astype(np.int64)
