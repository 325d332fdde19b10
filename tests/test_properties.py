"""Properties every objective and metric keeps on random queries (hypothesis).

Queries of 1-200 documents, labels 0-30 with ties, scores from -1e4 to 1e4, queries whose labels are all
equal, queries of one document: outputs are finite, gradients sum to zero per query (every objective is
invariant to adding a constant to a query's scores), hessians are at least the floor, permuting the
documents of a query permutes the outputs (where no random tie-breaking or tied scores are involved),
and NDCG and ERR lie in [0, 1]. The objectives keep the first three at extremes too: scores up to
±1e308, queries whose scores are one large constant, labels up to 1000 where the objective takes them.

The SVMlight loader, given random bytes, random SVMlight-like lines (odd tokens, non-UTF-8 bytes, byte-order
marks, LF/CRLF/CR line ends, plain or gzip) or random query files, returns valid data or raises
DataFormatError naming the file, never another exception.
"""

import copy
import gzip
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plboost import metrics
from plboost.data import DataFormatError, RankingData, load_svmlight, svmlight_parser
from plboost.objectives import PLRank, UMart
from plboost.objectives.urank import MAX_LABEL as URANK_MAX_LABEL

#: besides every registered objective with its defaults (the ``objective`` fixture): PLRank's several
#: permutations and whole rankings, lambdarank's window of one, a wider window without truncation, the paper's uMart
EXTRA = (PLRank(top_k=10, n_permutations=3, seed=1), PLRank(top_k=None, n_permutations=2, skip_uniform_queries=False),
         UMart(window=1), UMart(window=3, lambdarank_truncation_level=None), UMart(preset="paper"))
FLOOR = 1e-6
#: the largest label an objective takes, by name, where it is not 1000 (URank: 2^y - 1 weights; uMart: LightGBM's
#: default label_gain)
MAX_LABELS = {"urank": URANK_MAX_LABEL, "umart": 30, "lambdaloss": 30}
#: the objective fixture is one object per test, reused by hypothesis's examples: an objective's cached states
#: are keyed by the data's content, so a reused one gives what a fresh one gives
REUSED_OBJECTIVE = [HealthCheck.function_scoped_fixture]


@st.composite
def ranking_batches(draw, max_queries=4, max_size=200, max_label=30, extreme=False):
    """Flat (scores, labels, offsets) of a few queries with the awkward cases drawn often; with ``extreme``,
    also queries whose scores span ±1e308, take a few far-apart values, or are one large constant."""
    n_queries = draw(st.integers(1, max_queries))
    sizes, labels, scores = [], [], []
    for _ in range(n_queries):
        size = draw(st.one_of(st.just(1), st.integers(1, 12), st.integers(1, max_size)))
        top = draw(st.integers(0, max_label))
        kind = draw(st.sampled_from(["mixed", "uniform", "binary"]))
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
        if kind == "uniform":
            query_labels = np.full(size, float(top))
        elif kind == "binary":
            query_labels = rng.integers(0, 2, size).astype(float)
        else:
            query_labels = rng.integers(0, top + 1, size).astype(float)
        scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 1e4]))
        query_scores = rng.uniform(-scale, scale, size)
        if draw(st.booleans()):
            query_scores = np.round(query_scores, 0 if scale >= 1 else 3)  # tied scores
        if extreme and draw(st.booleans()):
            shape = draw(st.sampled_from(["spread", "far apart", "constant"]))
            if shape == "spread":
                query_scores = 1e308 * rng.uniform(-1.0, 1.0, size)
            elif shape == "far apart":  # tied groups, whose gaps overflow
                query_scores = rng.choice([-1e308, -1e30, 0.0, 1e30, 1e308], size)
            else:
                query_scores = np.full(size, draw(st.sampled_from([1e30, -1e30, 1e308, -1e308, 2.0 ** 60])))
        sizes.append(size)
        labels.append(query_labels)
        scores.append(query_scores)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return np.concatenate(scores), np.concatenate(labels), offsets


@pytest.mark.extra_objectives(*EXTRA)
@settings(max_examples=25, deadline=None, suppress_health_check=REUSED_OBJECTIVE)
@given(batch=ranking_batches())
def test_objectives_are_finite_zero_sum_and_floored(objective, batch):
    _assert_finite_zero_sum_and_floored(objective, *batch)


@pytest.mark.extra_objectives(*EXTRA)
@settings(max_examples=25, deadline=None, suppress_health_check=REUSED_OBJECTIVE)
@given(data=st.data())
def test_objectives_are_finite_zero_sum_and_floored_at_extremes(objective, data):
    """Issue 16: URank's hessians were NaN at ±1e308, its gradients infinite for labels above about 127,
    and gradients of queries with scores all 1e30 summed to 10-21 instead of 0."""
    batch = data.draw(ranking_batches(max_label=MAX_LABELS.get(objective.name, 1000), extreme=True))
    _assert_finite_zero_sum_and_floored(objective, *batch)


def _assert_finite_zero_sum_and_floored(obj, scores, labels, offsets):
    grad, hess = obj.gradients(scores, labels, offsets)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    assert np.all(hess >= np.float32(FLOOR))
    sums = np.add.reduceat(grad.astype(np.float64), offsets[:-1])
    scale = np.maximum(1.0, np.add.reduceat(np.abs(grad.astype(np.float64)), offsets[:-1]))
    np.testing.assert_array_less(np.abs(sums), 1e-5 * scale)


def _permute_within_queries(offsets, rng):
    order = np.arange(offsets[-1])
    for lo, hi in itertools.pairwise(offsets):
        order[lo:hi] = lo + rng.permutation(hi - lo)
    return order


@pytest.mark.extra_objectives(PLRank(top_k=10, n_permutations=3, seed=1), UMart(window=1),
                               UMart(window=3, lambdarank_truncation_level=None))
@settings(max_examples=20, deadline=None, suppress_health_check=REUSED_OBJECTIVE)
@given(batch=ranking_batches(max_size=60, extreme=True), seed=st.integers(0, 1000))
def test_objectives_follow_a_permutation_of_the_documents(objective, batch, seed):
    """Outputs move with their documents. Scores are made distinct (uMart orders by score, ties by input
    order); for objectives that draw random numbers (a ``seed`` parameter, as PLRank's) labels are made
    distinct too (PLRank's tie-breaking is drawn from the query's labels in input order, so permuting tied
    documents draws another tie-breaking). The permuted query goes to a copy, fresh as the original."""
    scores, labels, offsets = batch
    rng = np.random.default_rng(seed)
    scores = scores + rng.uniform(0, 1e-3, scores.size) * np.maximum(1.0, np.abs(scores))
    if "seed" in objective.get_params():
        labels = np.concatenate([rng.permutation(hi - lo).astype(float) for lo, hi in itertools.pairwise(offsets)])
    order = _permute_within_queries(offsets, rng)
    twin = copy.deepcopy(objective)
    grad, hess = objective.gradients(scores, labels, offsets)
    moved_grad, moved_hess = twin.gradients(scores[order], labels[order], offsets)
    np.testing.assert_allclose(moved_grad, grad[order], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moved_hess, hess[order], rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(batch=ranking_batches(max_queries=6))
def test_metrics_lie_in_the_unit_interval(batch):
    scores, labels, offsets = batch
    for policy in ("one", "zero", "exclude"):
        values = metrics.evaluate(scores, labels, offsets=offsets, ndcg_at=(1, 5, 10), err_at=(1, 10),
                                  g_max=30, no_relevant=policy, per_query=True)
        for name, column in values.items():
            if name == "conventions":
                continue
            finite = column[~np.isnan(column)]
            assert np.all((finite >= 0.0) & (finite <= 1.0 + 1e-12)), name
            if policy != "exclude":
                assert not np.isnan(column).any(), name


@settings(max_examples=40, deadline=None)
@given(batch=ranking_batches(max_queries=6), seed=st.integers(0, 1000))
def test_metrics_ignore_the_order_of_documents_with_distinct_scores(batch, seed):
    scores, labels, offsets = batch
    rng = np.random.default_rng(seed)
    scores = rng.permutation(scores.size).astype(float)  # distinct scores
    order = _permute_within_queries(offsets, rng)
    first = metrics.evaluate(scores, labels, offsets=offsets, g_max=30, per_query=True)
    second = metrics.evaluate(scores[order], labels[order], offsets=offsets, g_max=30, per_query=True)
    for name in first:
        if name != "conventions":
            np.testing.assert_allclose(first[name], second[name], rtol=1e-12, atol=1e-15, err_msg=name)


# --- the SVMlight loader on random input ---------------------------------------------------------------------

_TOKENS = st.one_of(
    st.sampled_from([b"0", b"1", b"2", b"30", b"31", b"-1", b"0.5", b"nan", b"inf", b"1e400", b"", b"x", b"#", b":",
                     b"qid:", b"qid:1", b"qid:2", b"qid:x", b"qid:99999999999999999999", b"qid", b"1:", b":1",
                     b"0:1", b"1:1", b"2:0.5", b"2:-inf", b"3:nan", b"1:1:1", b"2147483648:1", b"1000000000:1",
                     b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\xff", b"\xc3\xa9", b"1_0", b"+1", b"1e3:1"]),
    st.builds(lambda i, v: b"%d:%s" % (i, v), st.integers(-2, 2**32), st.sampled_from([b"1", b"0", b"-2.5", b"nan"])),
    st.binary(max_size=6),
)


@st.composite
def svmlight_like(draw):
    """Bytes of a file of SVMlight-like lines: labels, qid:, index:value pairs, comments, blank lines, odd tokens,
    non-UTF-8 bytes, byte-order marks, and every line end (LF, CRLF, CR, mixed)."""
    qids = draw(st.sampled_from([[b""], [b" qid:1", b" qid:2"], [b" qid:1", b" qid:2", b" qid:3", b""]]))
    ends = draw(st.sampled_from([[b"\n"], [b"\r\n"], [b"\r"], [b"\n", b"\r\n", b"\r", b"\n\r", b""]]))
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["data", "data", "data", "data", "comment", "blank", "tokens"]))
        if kind == "data":
            label = draw(st.sampled_from([b"0", b"1", b"2", b"4"]))
            indices = sorted(draw(st.sets(st.one_of(st.integers(1, 40), st.just(10**9)), max_size=5)))
            features = b"".join(b" %d:%s" % (i, draw(st.sampled_from([b"1", b"0.25", b"-3", b"nan"]))) for i in indices)
            comment = draw(st.sampled_from([b"", b" # doc", b"#", b" # \xff\x00"]))
            line = label + draw(st.sampled_from(qids)) + features + comment
        elif kind == "comment":
            line = b"# " + draw(st.binary(max_size=10))
        elif kind == "blank":
            line = draw(st.sampled_from([b"", b"  ", b"\t"]))
        else:
            line = draw(st.sampled_from([b" ", b"\t"])).join(draw(st.lists(_TOKENS, max_size=5)))
        lines.append(line + draw(st.sampled_from(ends)))
    head = draw(st.sampled_from([b"", b"", b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf", b"\xff\xfe"]))
    return head + b"".join(lines)


def _load_bytes(tmp_path_factory, content: bytes, **options):
    """``load_svmlight`` on a file holding ``content``: a RankingData or a DataFormatError naming the file."""
    path = tmp_path_factory.mktemp("random") / "random.txt"
    path.write_bytes(content)
    try:
        data = load_svmlight(path, cache=False, max_dense_gib=0.01, **options)
    except DataFormatError as error:
        assert error.path == path and str(error).startswith(str(path))
        return error
    assert isinstance(data, RankingData) and data.n_docs == data.labels.size == data.offsets[-1]
    return data


@settings(max_examples=100, deadline=None)
@given(content=st.binary(max_size=200), gz=st.booleans())
def test_loader_on_random_bytes_returns_data_or_a_format_error(tmp_path_factory, content, gz):
    _load_bytes(tmp_path_factory, gzip.compress(content) if gz else content)


@settings(max_examples=200, deadline=None)
@given(content=svmlight_like(), gz=st.booleans(), dense=st.booleans(), chunk=st.sampled_from([None, 7, 64]))
def test_loader_on_svmlight_like_lines_returns_data_or_a_format_error(tmp_path_factory, content, gz, dense, chunk):
    with pytest.MonkeyPatch.context() as patch:
        if chunk:
            patch.setattr(svmlight_parser, "CHUNK_BYTES", chunk)
        _load_bytes(tmp_path_factory, gzip.compress(content) if gz else content, dense=dense, query_file=None)


@settings(max_examples=100, deadline=None)
@given(sizes=st.one_of(st.binary(max_size=40), st.lists(st.sampled_from([b"1", b"2", b"3", b"0", b"-1", b"x", b"",
                                                                         b"\xef\xbb\xbf2", b" 2 ", b"\xff"]),
                                                       max_size=6).map(lambda parts: b"\r\n".join(parts))))
def test_loader_on_random_query_files_returns_data_or_a_format_error(tmp_path_factory, sizes):
    folder = tmp_path_factory.mktemp("random")
    (folder / "rank.txt").write_bytes(b"1 1:1\n0 1:2\n2 1:3\n")
    (folder / "rank.txt.query").write_bytes(sizes)
    try:
        data = load_svmlight(folder / "rank.txt", cache=False)
    except DataFormatError as error:
        assert error.path.name in ("rank.txt", "rank.txt.query")
    else:
        assert data.offsets[-1] == 3 and data.n_queries >= 1



_DATA_LINE = st.builds(lambda label, qid, indices, comment: b"%d qid:%d%s%s" % (
    label, qid, b"".join(b" %d:%d" % (i, i) for i in sorted(indices)), comment),
    st.integers(0, 4), st.integers(1, 3), st.sets(st.integers(1, 9), max_size=4), st.sampled_from([b"", b" # c", b"#"]))


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.one_of(_DATA_LINE, st.just(b""), st.just(b"# comment")), min_size=1, max_size=15),
       ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=15, max_size=15), final_end=st.booleans(),
       bom=st.booleans(), gz=st.booleans(), chunk=st.integers(1, 40))
def test_line_ends_and_chunks_do_not_change_what_is_read(tmp_path_factory, lines, ends, final_end, bom, gz, chunk):
    """Any mixture of LF, CRLF and CR, a UTF-8 byte-order mark, gzip and any chunk size read as the same lines
    with LF ends (Python's universal newlines): the same data, or the same error at the same line."""
    text = b"".join(line + end for line, end in zip(lines, ends, strict=False))
    if not final_end:
        text = text[:-len(ends[len(lines) - 1])]
    folder = tmp_path_factory.mktemp("ends")
    (folder / "lf.txt").write_bytes(b"\n".join(text.splitlines()) + b"\n")
    content = b"\xef\xbb\xbf" * bom + text
    (folder / "any.txt").write_bytes(gzip.compress(content) if gz else content)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(svmlight_parser, "CHUNK_BYTES", chunk)
        try:
            expected = load_svmlight(folder / "lf.txt", cache=False)
        except DataFormatError as error:
            with pytest.raises(DataFormatError) as same:
                load_svmlight(folder / "any.txt", cache=False)
            assert (same.value.line, same.value.message) == (error.line, error.message)
            return
        data = load_svmlight(folder / "any.txt", cache=False)
    for field in ("X", "labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(data, field), getattr(expected, field))
