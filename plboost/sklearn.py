"""A scikit-learn ranker for both engines: :class:`Ranker`.

XGBoost's ``XGBRanker`` refuses a callable objective, and LightGBM's ``LGBMRanker`` takes one only through
:meth:`~plboost.objectives.RankingObjective.sklearn`. :class:`Ranker` trains any plboost objective, or an engine's
own ranking objective by name, with either engine, through plboost's training helpers (:func:`plboost.engines.train`),
and behaves as a scikit-learn estimator: ``clone``, ``Pipeline``, ``GridSearchCV`` with ``GroupKFold`` over query
ids, ``pickle`` and ``joblib``. Needs scikit-learn (``pip install 'plboost[sklearn]'``).
"""

from __future__ import annotations

import inspect
import numbers
from dataclasses import replace

import numpy as np

from ._extras import MissingExtra

try:
    from sklearn.base import BaseEstimator, clone
    from sklearn.utils import check_random_state
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as error:  # a core install: say how to get it, in one line
    raise MissingExtra("plboost.sklearn.Ranker needs scikit-learn: pip install 'plboost[sklearn]'") from error

from ._constraints import SEED, Integer, Options, Real, check, check_params
from .errors import InputTypeError, InvalidParameterError, RankerSetupError
from . import metrics
from ._engine_registry import DEFAULT_ENGINE, get_engine
from ._queries import offsets_from_qids, offsets_from_sizes
from .clicks import ClickData
from .data import RankingData
from .engines import DEFAULT_SETTINGS, TrainingSettings, resolve_objective, train
from .engines.settings import SETTINGS_CONSTRAINTS
from .objectives import RankingObjective, class_given_message
from .policies import PlackettLucePolicy

#: the column of a DataFrame ``X`` that holds the query ids, as XGBoost's ``XGBRanker`` reads it
QUERY_COLUMN = "qid"
_IMPORTANCE_TYPES = ("split", "gain")


class Ranker(BaseEstimator):
    """Learning to rank with a plboost objective (or an engine's own) on LightGBM or XGBoost.

    Parameters
    ----------
    objective : RankingObjective or str, default "plrank"
        A plboost objective (``PLRank(top_k=5)``), a plboost objective's name (``"plrank"``, ``"umart"``, ...)
        or the name of one of the engine's own ranking objectives (``"lambdarank"``, ``"rank_xendcg"``;
        ``"rank:ndcg"``, ``"rank:pairwise"``), so that a comparison is like with like. The objective given is
        never changed: fitting trains a clone of it (``objective_``).
    engine : {"lightgbm", "xgboost", "catboost"}, default "lightgbm"
        CatBoost (``pip install 'plboost[catboost]'``) trains its own losses only (``"YetiRank"``, ``"LambdaMart"``,
        ...), and its feature importances are ``importance_type="gain"`` (its PredictionValuesChange).
    n_estimators : int, default 100
        Boosting rounds.
    learning_rate : float, default 0.1
    num_leaves : int, default 31
        Leaves per tree (XGBoost grows trees leaf-wise with ``max_leaves`` and no depth limit, as LightGBM does).
    eval_at : int, default 10
        k of the NDCG@k that early stopping watches and that :meth:`score` returns.
    importance_type : {"split", "gain"}, default "split"
        What :attr:`feature_importances_` counts: the splits on each feature, or their total gain.
    random_state : int, RandomState or None, default 0
        The engine's seed (a RandomState or None draws one). A plboost objective's own sampling has its own
        ``seed``.
    **engine_params
        Further parameters of the engine, under its own names (``min_data_in_leaf=5``, ``max_bin=63``,
        ``num_threads=2``; ``min_child_weight=1``): reported by :meth:`get_params`, searchable by ``GridSearchCV``.

    Attributes (after :meth:`fit`)
    ------------------------------
    booster_ : lightgbm.Booster or xgboost.Booster
        Fitted on a DataFrame, it keeps the columns as its feature names
        (:func:`plboost._engine_registry.stored_names`), so that its model file scores a table by column name
        (``plboost evaluate``, :func:`plboost.engines.load_model`). The Ranker itself takes a DataFrame's columns
        as scikit-learn does: a column missing, unseen or in another order than in :meth:`fit` is refused.
    objective_ : RankingObjective or str
        What was trained.
    best_iteration_ : int or None
        The number of rounds with the best validation NDCG@eval_at under early stopping (what :meth:`predict`
        uses), else None.
    n_iter_ : int
        Rounds used for prediction.
    evals_result_ : dict
        ``{"valid": {"ndcg@k": [one value per round]}}`` with an ``eval_set``, else empty.
    feature_importances_ : ndarray of shape (n_features_in_,)
    n_features_in_, feature_names_in_ : as in scikit-learn (``feature_names_in_`` only for a DataFrame ``X``).

    Queries
    -------
    Rows of one query must be contiguous. :meth:`fit` and :meth:`score` take them as ``group`` (query sizes, as
    LightGBM's ``group``) or ``qid`` (one query id per row, as XGBoost's ``qid``), or, when ``X`` is a pandas
    DataFrame, from its ``qid`` column (dropped from the features; :meth:`predict` drops it too). That last form
    is what ``GridSearchCV`` needs without metadata routing, since it hands :meth:`score` nothing but ``X`` and
    ``y``; with ``sklearn.set_config(enable_metadata_routing=True)``, ``set_fit_request(qid=True)`` and
    ``set_score_request(qid=True)`` route a ``qid`` array instead. Fitting or scoring without queries, or scoring
    queries cut between training and scoring, raises :class:`plboost.errors.RankerSetupError`, which stops a search
    at its first fit or score, in one line, where an ordinary error would have been a NaN score.

    scikit-learn's estimator checks pass for both engines (``tests/test_sklearn.py``: 40 of scikit-learn 1.9's 41;
    ``check_array_api_input`` is skipped by scikit-learn, as array-API input is not supported). One thing cannot
    apply as the checks are written: they fit and score without queries, which a ranker refuses, so the test runs
    them on a subclass that takes all rows as one query when given none.

    Examples
    --------
    >>> from plboost.data import make_synthetic
    >>> from plboost.objectives import PLRank
    >>> data = make_synthetic(n_queries=40, docs_per_query=(5, 15), n_features=8, seed=0)
    >>> ranker = Ranker(objective=PLRank(n_permutations=2), n_estimators=5)
    >>> ranker = ranker.fit(data.X, data.labels, group=data.group_sizes)
    >>> ranker.predict(data.X).shape == (data.n_docs,)
    True
    >>> 0.0 <= ranker.score(data.X, data.labels, group=data.group_sizes) <= 1.0
    True
    """

    #: what the numeric and named parameters may be (:mod:`plboost._constraints`), checked by :meth:`fit` as
    #: scikit-learn estimators do; ``objective`` and ``engine`` are checked against their registries
    #: (the training settings' own constraints: one declaration of each)
    parameter_constraints = {"n_estimators": SETTINGS_CONSTRAINTS["rounds"],
                             **{name: SETTINGS_CONSTRAINTS[name]
                                for name in ("learning_rate", "num_leaves", "eval_at")},
                             "importance_type": Options(*_IMPORTANCE_TYPES)}

    def __init__(self, objective: RankingObjective | str = "plrank", engine: str = DEFAULT_ENGINE, *,
                 n_estimators: int = DEFAULT_SETTINGS.rounds, learning_rate: float = DEFAULT_SETTINGS.learning_rate,
                 num_leaves: int = DEFAULT_SETTINGS.num_leaves, eval_at: int = DEFAULT_SETTINGS.eval_at,
                 importance_type: str = "split", random_state=DEFAULT_SETTINGS.seed, **engine_params):
        self.objective = objective
        self.engine = engine
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.eval_at = eval_at
        self.importance_type = importance_type
        self.random_state = random_state
        self._engine_params = engine_params

    # parameters: the signature's, and the engine's given as keywords (as LightGBM's scikit-learn API does) --------
    def get_params(self, deep: bool = True) -> dict:
        params = super().get_params(deep=deep)
        params.update(self._engine_params)
        return params

    def set_params(self, **params):
        own = set(self._get_param_names())
        for name in list(params):
            if name not in own and "__" not in name:
                self._engine_params[name] = params.pop(name)
        return super().set_params(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    # fitting --------------------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, group=None, qid=None, eval_set=None, eval_group=None, eval_qid=None,
            early_stopping_rounds: int | None = None, verbose: bool = False, **unknown):
        """Train on ``X``, ``y`` with queries from ``group``, ``qid`` or ``X``'s ``qid`` column (see the class).

        ``X`` may instead be a click log and its estimator, :class:`plboost.clicks.ClickData` (no ``y``,
        ``group`` or ``qid``: it holds its queries, and the relevance estimates are the labels), for an objective
        that takes estimates (``PLRank3(gain="estimate", normalize=False)``); its documents' feature columns are
        taken by position, as arrays'.

        ``eval_set`` is one ``(X, y)`` pair (or a list of one) with its queries in ``eval_group`` or ``eval_qid``
        (a list of one, or the array itself); ``early_stopping_rounds`` stops when its NDCG@eval_at has not
        improved for that many rounds and keeps the best round. ``verbose`` shows a progress bar. Any other
        argument is refused, naming it (``sample_weight`` among them: plboost trains without sample weights).
        """
        _refuse_unknown("fit", unknown, self.fit)
        own = check_params(self.parameter_constraints,
                           {name: getattr(self, name) for name in self.parameter_constraints}, owner="Ranker")
        early_stopping_rounds = check(early_stopping_rounds, (Integer(low=0), None), "early_stopping_rounds",
                                      "Ranker.fit") or None  # 0: none, as before
        engine = get_engine(self.engine)
        objective = self._resolved_objective(engine.name)
        if isinstance(X, ClickData):
            train_data, names = _click_training_data(self, X, y, group, qid), None
        else:
            X, qid = _split_query_column(X, qid)
            X, y = validate_data(self, X, y, reset=True, accept_sparse="csr", dtype=[np.float32, np.float64],
                                 ensure_all_finite="allow-nan", ensure_min_samples=2, y_numeric=True)
            names = getattr(self, "feature_names_in_", None)  # a DataFrame's columns, which the booster keeps
            train_data = _ranking_data(X, y, group, qid, where="fit", feature_names=names)
        valid_data = None
        if eval_set is not None:
            valid_X, valid_y, valid_group, valid_qid = _one_eval_set(eval_set, eval_group, eval_qid)
            valid_X, valid_qid = _split_query_column(valid_X, valid_qid)
            valid_X = validate_data(self, valid_X, reset=False, accept_sparse="csr", dtype=[np.float32, np.float64],
                                    ensure_all_finite="allow-nan")
            valid_data = _ranking_data(valid_X, valid_y, valid_group, valid_qid, where="eval_set", feature_names=names)
        elif early_stopping_rounds:
            raise ValueError("early_stopping_rounds needs an eval_set to watch")
        seed = (self.random_state if isinstance(self.random_state, numbers.Integral)
                else int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max)))
        name, objective_params = (objective, {}) if isinstance(objective, RankingObjective) else objective
        settings = TrainingSettings(rounds=own["n_estimators"], learning_rate=own["learning_rate"],
                                    num_leaves=own["num_leaves"], early_stopping=early_stopping_rounds,
                                    eval_at=own["eval_at"],
                                    engine_params={**objective_params, **self._engine_params}, seed=int(seed))
        trained = train(engine.name, name, train_data, valid_data, settings, progress=bool(verbose))
        self.objective_ = name
        self.booster_ = trained.booster
        # the queries trained on, by id (None without ids: group= gives sizes only), for score's cut-query check
        self._fit_queries = None if qid is None else dict(zip(train_data.qids.tolist(),
                                                              np.diff(train_data.offsets).tolist(), strict=True))
        self.best_iteration_ = trained.best_iteration
        self.n_iter_ = trained.trees_used
        self.evals_result_ = {"valid": {f"ndcg@{self.eval_at}": list(trained.valid_history)}} if valid_data else {}
        return self

    def _resolved_objective(self, engine: str):
        """A clone of a plboost objective, or ``(name, engine parameters)`` of a named one."""
        if isinstance(self.objective, RankingObjective):
            return clone(self.objective)
        if not isinstance(self.objective, str):
            raise InputTypeError(class_given_message(self.objective) or "objective must be a plboost objective or an "
                                 f"objective's name, got {self.objective!r}")
        objective, params = resolve_objective(self.objective, engine)
        if isinstance(objective, RankingObjective):
            own = sorted(set(self._engine_params) & set(objective.get_params()))
            if own:  # e.g. top_k, which LightGBM would take as its voting-parallel setting
                raise ValueError(f"Ranker: {', '.join(own)} is a parameter of {type(objective).__name__}, not of "
                                 f"the engine: pass objective={type(objective).__name__}({own[0]}=...) instead of "
                                 f"objective={self.objective!r}")
            return objective
        return objective, params

    # using the model ------------------------------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """Ranking scores (raw margins) of the rows of ``X``: higher ranks first within a query."""
        check_is_fitted(self, "booster_")
        X, _ = _split_query_column(X, None)
        X = validate_data(self, X, reset=False, accept_sparse="csr", dtype=[np.float32, np.float64],
                          ensure_all_finite="allow-nan")
        return get_engine(self.engine).predict(self.booster_, X, self.n_iter_)

    def score(self, X, y, *, group=None, qid=None, **unknown) -> float:
        """Mean NDCG@eval_at over the queries (plboost's conventions: gains 2^y - 1, a query without a relevant
        document counts 1; :func:`plboost.metrics.ndcg`).

        Without queries, or with queries trained on with other documents of theirs, it raises
        :class:`plboost.errors.RankerSetupError`, which a scikit-learn search does not turn into a NaN score."""
        _refuse_unknown("score", unknown, self.score)
        X, qid = _split_query_column(X, qid)
        data = _ranking_data(np.zeros((len(y), 0)), y, group, qid, where="score")
        if qid is not None:
            self._refuse_cut_queries(data)
        return float(metrics.ndcg(self.predict(X), data.labels, offsets=data.offsets, k=int(self.eval_at)))

    def sample_rankings(self, X, *, group=None, qid=None, n_samples: int = 1, temperature: float = 1.0, seed: int = 0,
                        top_k: int | None = None) -> np.ndarray:
        """Rankings of each query of ``X`` sampled from the Plackett-Luce policy of the model's scores: the model
        served as the stochastic ranker it was trained and evaluated as.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame
            The documents, as :meth:`predict` takes them.
        group, qid : array-like, optional
            The queries, as :meth:`score` takes them: ``group`` (query sizes) or ``qid`` (a query id per row), or,
            for a DataFrame ``X``, its ``qid`` column. Rows of one query must be contiguous.
        n_samples : int, default 1
            Rankings drawn per query.
        temperature : float, default 1.0
            The policy's temperature, a finite number >= 0: 1 is the distribution of the scores as they are, a
            higher one flatter; 0 is the deterministic ranking by score, documents of equal scores in random order.
        seed : int, default 0
            Seed of the draws, in ``[0, 2**63)``.
        top_k : int or None, default None
            Rank the top ``top_k`` documents of each ranking only (None: every rank).

        Returns
        -------
        ndarray of shape (n_samples, n_rows), int32
            Row i holds each document's rank in ranking i of its query: 1 at the top, 0 below ``top_k``. It is
            :meth:`plboost.PlackettLucePolicy.sample` of ``PlackettLucePolicy(self.predict(X), offsets,
            temperature=temperature, top_k=top_k)``, a pure function of the scores, the queries, the temperature and
            the seed (``plboost predict --sample`` writes the same ranks, transposed: a line per document).

        Examples
        --------
        >>> from plboost.data import make_synthetic
        >>> data = make_synthetic(n_queries=20, docs_per_query=(4, 8), n_features=5, seed=0)
        >>> ranker = Ranker("lambdarank", n_estimators=3).fit(data.X, data.labels, group=data.group_sizes)
        >>> ranks = ranker.sample_rankings(data.X, group=data.group_sizes, n_samples=4, seed=1)
        >>> ranks.shape == (4, data.n_docs), ranks.dtype
        (True, dtype('int32'))
        >>> first = data.group_sizes[0]  # each ranking of a query is a permutation of its ranks 1..n
        >>> sorted(ranks[0, :first].tolist()) == list(range(1, first + 1))
        True
        >>> top = ranker.sample_rankings(data.X, group=data.group_sizes, temperature=0.0, top_k=1)
        >>> int(top[0, :first].argmax()) == int(ranker.predict(data.X)[:first].argmax())  # the best score, first
        True
        """
        where = "Ranker.sample_rankings"
        n_samples = check(n_samples, Integer(low=1), "n_samples", where)
        temperature = check(temperature, Real(low=0.0), "temperature", where)
        seed = check(seed, SEED, "seed", where)
        top_k = check(top_k, (Integer(low=1), None), "top_k", where)
        X, qid = _split_query_column(X, qid)
        scores = self.predict(X)
        queries = _ranking_data(np.zeros((scores.shape[0], 0)), np.zeros(scores.shape[0]), group, qid,
                                where="sample_rankings")
        policy = PlackettLucePolicy(scores, queries.offsets, temperature=temperature, top_k=top_k)
        return policy.sample(n_samples, seed=seed)

    def _refuse_cut_queries(self, data: RankingData) -> None:
        """Refuse to score queries that were also trained on with other documents: a splitter that cut them (KFold,
        ShuffleSplit over rows) leaks them into training and scores shorter lists, which inflates NDCG (0.919
        against 0.742 with GroupKFold on MQ2008, in a 3-fold grid search)."""
        trained = getattr(self, "_fit_queries", None)
        if not trained:
            return
        sizes = np.diff(data.offsets)
        cut = [qid for qid, size in zip(data.qids.tolist(), sizes.tolist(), strict=True)
               if qid in trained and trained[qid] != size]
        if cut:
            raise RankerSetupError(f"score: {len(cut)} of the {len(sizes)} queries scored (query id {cut[0]!r}, ...) "
                                   "were trained on with other documents of theirs: the rows were split across "
                                   "queries. Split by query: sklearn.model_selection.GroupKFold with groups=qid, or "
                                   "plboost.query_folds")

    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature: the number of splits on it (``importance_type="split"``) or their total gain (``"gain"``),
        over the rounds :meth:`predict` uses."""
        check_is_fitted(self, "booster_")
        importance_type = check(self.importance_type, self.parameter_constraints["importance_type"],
                                "importance_type", "Ranker")
        return get_engine(self.engine).feature_importances(self.booster_, importance_type, self.n_iter_)


def _refuse_unknown(method: str, unknown: dict, bound) -> None:
    """Refuse the keyword arguments ``method`` does not take, naming the first (TypeError's own message names
    none of the ones it does take)."""
    if not unknown:
        return
    name = next(iter(unknown))
    if name == "sample_weight":
        raise InvalidParameterError(f"Ranker.{method}: sample_weight is not taken: plboost's training has no sample "
                                    "weights; lgb.LGBMRanker(objective=PLRank()).fit(X, y, group=..., "
                                    "sample_weight=...) weights each document's gradient")
    taken = [p for p in inspect.signature(bound).parameters if p not in ("X", "y", "unknown")]
    raise InvalidParameterError(f"Ranker.{method}: unknown argument {name!r}; it takes {', '.join(taken)}")


def _split_query_column(X, qid):
    """``(X without its qid column, the query ids)`` for a DataFrame with a ``qid`` column, else ``(X, qid)``."""
    columns = getattr(X, "columns", None)
    if columns is None or QUERY_COLUMN not in columns:
        return X, qid
    if qid is not None:
        raise ValueError(f"query ids given twice: as qid= and as the {QUERY_COLUMN!r} column of X; give one")
    return X.drop(columns=QUERY_COLUMN), X[QUERY_COLUMN].to_numpy()


def _ranking_data(X, y, group, qid, *, where: str, feature_names=None) -> RankingData:
    labels = np.asarray(y, dtype=np.float64)
    if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
        raise ValueError(f"{where}: y must hold one label per row of X ({X.shape[0]}), got shape {labels.shape}")
    if group is not None and qid is not None:
        raise ValueError(f"{where}: give the queries as group= (sizes) or qid= (ids per row), not both")
    if qid is not None:
        qid = np.asarray(qid)
        if qid.shape != (X.shape[0],):
            raise ValueError(f"{where}: qid must hold one query id per row of X ({X.shape[0]}), got shape {qid.shape}")
        offsets, ids = offsets_from_qids(qid)
    elif group is not None:
        offsets = offsets_from_sizes(group, X.shape[0], name=f"{where} group")
        ids = np.arange(offsets.size - 1)
    else:
        raise RankerSetupError(f"{where}: a ranker needs the queries: group= (query sizes), qid= (a query id per row) "
                               f"or a {QUERY_COLUMN!r} column in a DataFrame X (in a scikit-learn search, the column: "
                               "groups= goes to the splitter alone, and qid= to score only with metadata routing)")
    return RankingData(X, labels, ids, offsets, feature_names=feature_names)


def _click_training_data(ranker: Ranker, clicks: ClickData, y, group, qid) -> RankingData:
    """The training data of ``Ranker.fit(ClickData)``: the log's documents labelled with the estimates, features by
    position (the booster keeps no names, so that arrays score it on either engine)."""
    given = [name for name, value in (("y", y), ("group", group), ("qid", qid)) if value is not None]
    if given:
        raise ValueError(f"Ranker.fit: a ClickData holds its queries and relevance estimates; give no "
                         f"{', '.join(given)}")
    data = replace(clicks.to_ranking_data(), feature_names=None)
    validate_data(ranker, data.X, data.labels, reset=True, dtype=[np.float32, np.float64],
                  ensure_all_finite="allow-nan", ensure_min_samples=2, y_numeric=True)
    return data


def _one_eval_set(eval_set, eval_group, eval_qid):
    """The one ``(X, y, group, qid)`` of ``eval_set`` (a pair or a list of one pair)."""
    if isinstance(eval_set, tuple) and len(eval_set) == 2:
        eval_set = [eval_set]
    eval_set = list(eval_set)
    if len(eval_set) != 1:
        raise ValueError(f"eval_set: plboost watches one validation set, got {len(eval_set)}")

    def first(value, name):
        """The one set's entry of ``[entry]``; a list of scalars is the entry itself (e.g. query sizes)."""
        if isinstance(value, (list, tuple)) and len(value) and not np.isscalar(value[0]):
            if len(value) != 1:
                raise ValueError(f"{name}: one evaluation set, got {len(value)} entries")
            return value[0]
        return value

    (X, y), = eval_set
    return X, y, first(eval_group, "eval_group"), first(eval_qid, "eval_qid")
