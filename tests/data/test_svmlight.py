import bz2
import gzip
import lzma
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from plboost.data import DataFormatError, load_svmlight
from plboost.data import svmlight_parser

REAL_FILES = [
    "MQ2008/Fold1/train.txt.gz",
    "MQ2008/Fold1/vali.txt.gz",
    "MQ2008/Fold1/test.txt.gz",
    "MSLR-WEB10K-5k/msn1.fold1.train.5k.txt.gz",
    "MSLR-WEB10K-5k/msn1.fold1.test.5k.txt.gz",
]


@pytest.fixture(params=["one chunk", "tiny chunks"])
def chunking(request, monkeypatch):
    """Run a test with the default chunk size and with chunks of a few lines (errors across chunks)."""
    if request.param == "tiny chunks":
        monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 20)
    return request.param


def write(path, text, *, compress=False):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def row_qids(data):
    return np.repeat(data.qids, data.group_sizes)


# --- real files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_FILES)
def test_agrees_with_scikit_learn(shared_data, name):
    path = shared_data / name
    data = load_svmlight(path, cache=False)
    X, y, qid = load_svmlight_file(str(path), dtype=np.float32, zero_based=False, query_id=True)
    assert data.X.dtype == np.float32 and data.labels.dtype == np.float64
    np.testing.assert_array_equal(data.X, X.toarray())
    np.testing.assert_array_equal(data.labels, y)
    np.testing.assert_array_equal(row_qids(data), qid)
    assert data.offsets.dtype == np.int64 and data.offsets[0] == 0 and data.offsets[-1] == data.n_docs


def test_real_file_statistics(shared_data):
    """MQ2008 Fold1 holds every one of MQ2008's 784 queries and 15,211 documents once (README)."""
    parts = [load_svmlight(shared_data / "MQ2008/Fold1" / f"{name}.txt.gz") for name in ("train", "vali", "test")]
    assert sum(p.n_docs for p in parts) == 15211
    assert sum(p.n_queries for p in parts) == 784
    assert np.unique(np.concatenate([p.qids for p in parts])).size == 784
    assert {p.n_features for p in parts} == {46}
    mslr = load_svmlight(shared_data / "MSLR-WEB10K-5k/msn1.fold1.train.5k.txt.gz")  # CRLF line endings
    assert (mslr.n_docs, mslr.n_queries, mslr.n_features) == (5000, 43, 136)
    assert set(np.unique(mslr.labels)) == {0, 1, 2, 3, 4}


def test_lightgbm_example_with_query_files(shared_data):
    folder = shared_data / "lightgbm_lambdarank"
    train = load_svmlight(folder / "rank.train.gz")
    test = load_svmlight(folder / "rank.test.gz", n_features=train.n_features)
    assert (train.n_docs, train.n_queries, train.n_features) == (3005, 201, 300)
    assert (test.n_docs, test.n_queries, test.n_features) == (768, 50, 300)
    sizes = np.loadtxt(folder / "rank.train.query", dtype=np.int64)
    np.testing.assert_array_equal(train.group_sizes, sizes)
    np.testing.assert_array_equal(train.qids, np.arange(201))
    X, y = load_svmlight_file(str(folder / "rank.train.gz"), dtype=np.float32, zero_based=False, n_features=300)
    np.testing.assert_array_equal(train.X, X.toarray())
    np.testing.assert_array_equal(train.labels, y)


def test_n_features_aligns_and_limits(shared_data):
    path = shared_data / "lightgbm_lambdarank/rank.test.gz"
    assert load_svmlight(path, n_features=400).X.shape == (768, 400)
    with gzip.open(path, "rt") as lines:
        first_wide = next(n for n, line in enumerate(lines, 1)
                          if max(int(token.split(":")[0]) for token in line.split()[1:]) > 250)
    with pytest.raises(DataFormatError, match=rf"rank\.test\.gz, line {first_wide}: feature index \d+ is beyond "
                                              "n_features=250"):
        load_svmlight(path, n_features=250)


def test_sparse_mode_matches_dense(shared_data):
    path = shared_data / "lightgbm_lambdarank/rank.train.gz"
    dense = load_svmlight(path, dtype=np.float64)
    sparse = load_svmlight(path, dense=False, dtype=np.float64)
    assert isinstance(sparse.X, sp.csr_matrix) and sparse.X.dtype == np.float64
    assert load_svmlight(path, dense=False).X.dtype == np.float32
    assert sparse.X.shape == dense.X.shape
    np.testing.assert_array_equal(sparse.X.toarray(), dense.X)
    np.testing.assert_array_equal(sparse.offsets, dense.offsets)


def test_progress_bar_counts_bytes(shared_data, capsys):
    path = shared_data / "MQ2008/Fold1/vali.txt.gz"
    with_bar = load_svmlight(path, progress=True, cache=False)
    assert "vali.txt.gz" in capsys.readouterr().err
    np.testing.assert_array_equal(with_bar.X, load_svmlight(path, cache=False).X)


# --- format details -----------------------------------------------------------------------------------------


def test_comments_blank_lines_crlf_and_unsorted_qids(tmp_path, chunking):
    text = ("# header comment\r\n"
            "\r\n"
            "2 qid:30 1:0.5 3:1.25 # doc a\r\n"
            "0 qid:30 2:-1\r\n"
            "   # indented comment\r\n"
            "1 qid:7 1:nan 3:2\r\n"
            "0 qid:12\r\n")
    data = load_svmlight(write(tmp_path / "f.txt", text), cache=False)
    np.testing.assert_array_equal(data.qids, [30, 7, 12])
    np.testing.assert_array_equal(data.offsets, [0, 2, 3, 4])
    np.testing.assert_array_equal(data.labels, [2, 0, 1, 0])
    expected = np.array([[0.5, 0, 1.25], [0, -1, 0], [np.nan, 0, 2], [0, 0, 0]], dtype=np.float32)
    np.testing.assert_array_equal(data.X, expected)  # NaN is accepted: both engines read it as missing


def test_zero_based_indices(tmp_path):
    path = write(tmp_path / "f.txt", "1 qid:1 0:5 2:7\n0 qid:1 1:3\n")
    data = load_svmlight(path, zero_based=True)
    np.testing.assert_array_equal(data.X, [[5, 0, 7], [0, 3, 0]])
    with pytest.raises(DataFormatError, match="line 1: feature index 0 in a file with 1-based indices"):
        load_svmlight(path)


def test_gzip_is_recognised_by_content(tmp_path):
    text = "1 qid:1 1:0.25\n0 qid:1 2:4\n"
    plain = load_svmlight(write(tmp_path / "plain.txt", text))
    packed = load_svmlight(write(tmp_path / "packed.dat", text, compress=True))
    np.testing.assert_array_equal(plain.X, packed.X)
    np.testing.assert_array_equal(plain.labels, packed.labels)


def test_max_label_can_be_raised(tmp_path):
    path = write(tmp_path / "f.txt", "31 qid:1 1:1\n0 qid:1 1:2\n")
    assert load_svmlight(path, max_label=None).labels.max() == 31
    with pytest.raises(DataFormatError, match="line 1: label 31 exceeds max_label=30"):
        load_svmlight(path)


def test_query_file_beside_plain_file_and_explicit(tmp_path):
    data_path = write(tmp_path / "rank.train", "1 1:1\n0 1:2\n2 1:3\n")
    write(tmp_path / "rank.train.query", "2\n1\n")
    np.testing.assert_array_equal(load_svmlight(data_path).offsets, [0, 2, 3])
    other = write(tmp_path / "sizes.txt", "1\n2\n")
    np.testing.assert_array_equal(load_svmlight(data_path, query_file=other).offsets, [0, 1, 3])
    with pytest.raises(DataFormatError, match="no qid: column and no query file"):
        load_svmlight(data_path, query_file=None)
    with pytest.raises(FileNotFoundError, match="nope.query"):
        load_svmlight(data_path, query_file=tmp_path / "nope.query")


def test_gz_query_file_names_are_tried_in_order(tmp_path):
    data_path = write(tmp_path / "rank.train.gz", "1 1:1\n0 1:2\n2 1:3\n", compress=True)
    write(tmp_path / "rank.train.query", "3\n")
    assert load_svmlight(data_path).n_queries == 1
    write(tmp_path / "rank.train.gz.query", "1\n1\n1\n")
    assert load_svmlight(data_path).n_queries == 3


def test_query_file_must_agree_with_qids(tmp_path):
    data_path = write(tmp_path / "f.txt", "1 qid:4 1:1\n0 qid:4 1:2\n2 qid:5 1:3\n")
    write(tmp_path / "f.txt.query", "2\n1\n")
    assert load_svmlight(data_path).n_queries == 2
    write(tmp_path / "f.txt.query", "1\n2\n")
    with pytest.raises(DataFormatError, match=r"f\.txt\.query: the query sizes disagree with the qid: column"):
        load_svmlight(data_path)


# --- errors -------------------------------------------------------------------------------------------------

HEADER = "# a comment line\n\n"  # two lines without a document: line numbers differ from row numbers
GOOD = "1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25\n"  # lines 3 and 4

BAD_LINES = {
    "feature value not a number": ("0 qid:2 1:0.1 3:abc", r"feature value 'abc' in '3:abc' is not a number"),
    "feature index not a number": ("0 qid:2 x:1", r"feature index 'x' in 'x:1' is not an integer"),
    "token without colon": ("0 qid:2 1:0.5 7", r"malformed feature '7'; expected index:value"),
    "missing label": ("qid:2 1:0.5", r"missing label: the line starts with 'qid:2'"),
    "label not a number": ("high qid:2 1:0.5", r"label 'high' is not a number"),
    "malformed qid": ("0 qid:two 1:0.5", r"malformed query id 'qid:two'"),
    "qid out of place": ("0 1:0.5 qid:2", r"'qid:2' must come right after the label"),
    "indices not increasing": ("0 qid:2 3:1 2:1", r"feature index 2 follows index 3"),
    "negative label": ("-1 qid:2 1:0.5", r"label -1 is negative"),
    "fractional label": ("1.5 qid:2 1:0.5", r"label 1.5 is not a whole number"),
    "nan label": ("nan qid:2 1:0.5", r"label nan is not finite"),
    "infinite label": ("inf qid:2 1:0.5", r"label inf is not finite"),
    "label above max_label": ("31 qid:2 1:0.5", r"label 31 exceeds max_label=30"),
    "infinite feature": ("0 qid:2 1:0.5 4:-inf", r"feature 4 is -inf; infinite values are not accepted"),
    "qid missing": ("0 1:0.5", r"no qid: on this line, but earlier lines have one"),
    "qid reappears": ("0 qid:2 1:0.5\n1 qid:1 1:0.5", r"qid 1 reappears after lines of another query"),
}


@pytest.mark.parametrize("case", BAD_LINES)
def test_bad_line_is_named(tmp_path, chunking, case):
    bad, message = BAD_LINES[case]
    line = 5 + bad.count("\n")  # the last line of `bad`
    path = write(tmp_path / "bad.txt", HEADER + GOOD + bad + "\n0 qid:9 1:0.5\n")
    with pytest.raises(DataFormatError, match=rf"bad\.txt, line {line}: {message}") as error:
        load_svmlight(path, cache=False)
    assert error.value.line == line and error.value.path == path


def test_qid_missing_on_the_first_lines(tmp_path, chunking):
    path = write(tmp_path / "bad.txt", HEADER + "1 1:0.5\n0 1:0.5\n0 qid:3 1:0.5\n")
    with pytest.raises(DataFormatError, match=r"line 5: a qid: on this line, but earlier lines have none"):
        load_svmlight(path, cache=False)


def test_qid_reappearing_far_away_is_located(tmp_path, chunking):
    lines = [f"0 qid:{q} 1:{q}" for q in range(50) for _ in range(3)] + ["1 qid:17 1:0.5"]
    path = write(tmp_path / "bad.txt", "\n".join(lines) + "\n", compress=True)
    with pytest.raises(DataFormatError, match=r"line 151: qid 17 reappears"):
        load_svmlight(path, cache=False)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  # and another\n"])
def test_file_without_data_lines(tmp_path, text):
    with pytest.raises(DataFormatError, match=r"empty\.txt: no data lines"):
        load_svmlight(write(tmp_path / "empty.txt", text))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        load_svmlight(tmp_path / "absent.txt")


def test_no_qid_and_no_query_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"f\.txt: no qid: column and no query file"):
        load_svmlight(write(tmp_path / "f.txt", "1 1:1\n0 1:2\n"))


@pytest.mark.parametrize("sizes, message", [
    ("2\n2\n", r"rank\.query: the query sizes sum to 4, but .*rank\.txt has 3 data lines"),
    ("2\n0\n1\n", r"rank\.query, line 2: query size 0 is not positive"),
    ("2\n-1\n2\n", r"rank\.query, line 2: query size -1 is not positive"),
    ("1\n\n1.5\n", r"rank\.query, line 3: query size '1.5' is not an integer"),
])
def test_bad_query_file(tmp_path, sizes, message):
    data_path = write(tmp_path / "rank.txt", "1 1:1\n0 1:2\n2 1:3\n")
    with pytest.raises(DataFormatError, match=message):
        load_svmlight(data_path, query_file=write(tmp_path / "rank.query", sizes))


def test_truncated_gzip(tmp_path):
    packed = gzip.compress(("1 qid:1 1:0.5\n" * 2000).encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(DataFormatError, match=r"cut\.txt\.gz: cannot decompress"):
        load_svmlight(path)


def test_error_survives_pickling():
    error = pickle.loads(pickle.dumps(DataFormatError("a/b.txt", 7, "label -1 is negative")))
    assert (str(error), error.line, error.path.name) == ("a/b.txt, line 7: label -1 is negative", 7, "b.txt")


# --- line ends, byte-order marks, sizes, paths (issue 16) --------------------------------------------------

LINES = ["# header comment", "", "2 qid:30 1:0.5 3:1.25 # doc a", "0 qid:30 2:-1", "   # indented comment",
         "1 qid:7 1:nan 3:2", "0 qid:12"]
ENDINGS = {
    "LF": lambda lines: "\n".join(lines) + "\n",
    "CRLF": lambda lines: "\r\n".join(lines) + "\r\n",
    "CR": lambda lines: "\r".join(lines) + "\r",
    "mixed": lambda lines: "".join(line + ["\r\n", "\r", "\n"][i % 3] for i, line in enumerate(lines)),
    "no final end": lambda lines: "\r".join(lines),
}


def write_bytes(path, data, *, compress=False):
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("bom", [False, True], ids=["", "BOM"])
@pytest.mark.parametrize("ending", ENDINGS)
def test_line_ends_and_byte_order_mark(tmp_path, chunking, ending, bom, compress):
    text = ENDINGS[ending](LINES).encode()
    data = load_svmlight(write_bytes(tmp_path / "f.txt", b"\xef\xbb\xbf" * bom + text, compress=compress), cache=False)
    reference = load_svmlight(write(tmp_path / "lf.txt", ENDINGS["LF"](LINES)), cache=False)
    np.testing.assert_array_equal(data.X, reference.X)
    for field in ("labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(data, field), getattr(reference, field))
    np.testing.assert_array_equal(data.qids, [30, 7, 12])


def test_old_mac_file_is_read_line_by_line(tmp_path):
    """200 documents with CR line ends were read as one line holding one document."""
    lines = [f"{i % 3} qid:{i // 10} 1:{i}" for i in range(200)]
    data = load_svmlight(write(tmp_path / "mac.txt", "\r".join(lines) + "\r"), cache=False)
    assert (data.n_queries, data.n_docs) == (20, 200)
    np.testing.assert_array_equal(data.X[:, 0], np.arange(200))


@pytest.mark.parametrize("ending", ["CR", "mixed"])
def test_bad_line_is_named_with_any_line_ends(tmp_path, chunking, ending):
    lines = [*LINES, "0 qid:12 1:abc", "1 qid:12 1:1"]
    with pytest.raises(DataFormatError, match=r"f\.txt, line 8: feature value 'abc'"):
        load_svmlight(write(tmp_path / "f.txt", ENDINGS[ending](lines)), cache=False)
    lines = [*LINES, "1 qid:30 1:1"]  # qid 30 reappears: located by reading the file again
    with pytest.raises(DataFormatError, match=r"f\.txt, line 8: qid 30 reappears"):
        load_svmlight(write(tmp_path / "f.txt", "\ufeff" + ENDINGS[ending](lines)), cache=False)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("sizes", [b"\xef\xbb\xbf2\n1\n", b"2\r1\r", b"\xef\xbb\xbf2\r\n\r\n1\r\n", b"2\r\n1"])
def test_query_file_line_ends_and_byte_order_mark(tmp_path, sizes, compress):
    data_path = write(tmp_path / "rank.train", "\ufeff1 1:1\r0 1:2\r2 1:3\r", compress=compress)
    (tmp_path / "rank.train.query").write_bytes(sizes)
    data = load_svmlight(data_path, cache=False)
    np.testing.assert_array_equal(data.offsets, [0, 2, 3])


def test_query_file_errors_name_lines_with_any_line_ends(tmp_path):
    data_path = write(tmp_path / "rank.txt", "1 1:1\n0 1:2\n2 1:3\n")
    with pytest.raises(DataFormatError, match=r"rank\.query, line 3: query size 'x' is not an integer"):
        load_svmlight(data_path, query_file=write_bytes(tmp_path / "rank.query", b"\xef\xbb\xbf1\r\r\nx\r2\r"))


@pytest.mark.parametrize("where", ["data file", "query file"])
def test_utf16_is_refused(tmp_path, where):
    text = "1 1:1\n0 1:2\n"
    if where == "data file":
        path = write_bytes(tmp_path / "f.txt", text.encode("utf-16"))
    else:
        write(tmp_path / "f.txt", text)
        path = write_bytes(tmp_path / "f.txt.query", "2\n".encode("utf-16"))
    with pytest.raises(DataFormatError, match=rf"{path.name}: the file is UTF-16 or UTF-32 text") as error:
        load_svmlight(tmp_path / "f.txt", cache=False)
    assert error.value.path == path


@pytest.mark.parametrize("compress, what", [(bz2.compress, "bzip2-compressed"), (lzma.compress, "xz-compressed"),
                                             (lambda data: zipfile_bytes(data), "a ZIP archive")])
@pytest.mark.parametrize("inside_gzip", [False, True])
def test_other_compressions_are_refused_by_name(tmp_path, compress, what, inside_gzip):
    """Whatever the file's name: its first bytes say what it is, plain or inside gzip."""
    content = compress(b"1 qid:7 1:0.25\n0 qid:7 2:4\n")
    path = write_bytes(tmp_path / "ranking.dat", gzip.compress(content) if inside_gzip else content)
    inside = " inside its gzip compression" if inside_gzip else ""
    with pytest.raises(DataFormatError, match=rf"^{path}: the file is {what}{inside}, not SVMlight text; plboost reads "
                                              r"plain or gzip-compressed files: ") as error:
        load_svmlight(path, cache=False)
    assert error.value.line is None


def zipfile_bytes(data: bytes) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("inner.txt", data)
    return buffer.getvalue()


@pytest.mark.parametrize("header", ["label,qid,x", "rel,query,a,b,c"])
def test_a_csv_table_named_otherwise_is_told_apart(tmp_path, header):
    path = write(tmp_path / "scores.svm", f"{header}\n2,5,0.5\n")
    with pytest.raises(DataFormatError, match=rf"scores\.svm, line 1: label '{header}' is not a number: the line is "
                                              r"comma-separated, as a CSV table's are, and a table is read as one by "
                                              r"its name only: name the file \.csv \(or \.csv\.gz\)$"):
        load_svmlight(path, cache=False)
    # a comma inside one line of SVMlight data is still a malformed label of its own
    with pytest.raises(DataFormatError, match=r"line 2: label '1,5' is not a number: the line is comma-separated"):
        load_svmlight(write(tmp_path / "two.txt", "1 qid:1 1:2\n1,5 qid:1 1:2\n"), cache=False)


def test_huge_feature_index_is_refused_before_allocating(tmp_path):
    path = write(tmp_path / "f.txt", "1 qid:1 1:0.5 3:1\n0 qid:1 2:1 1000000000:1\n1 qid:2 1:1\n")
    message = (r"f\.txt, line 2: feature index 1000000000 makes X 1,000,000,000 columns wide: pass dense=False for a "
               r"sparse X; dense float32, the 3 document\(s\) read so far need 11\.2 GiB, with 1\.7e-07% of the cells "
               r"in the file \(over 1 GiB, at least 1% must be; max_dense_gib sets the limit\)$")
    with pytest.raises(DataFormatError, match=message) as error:
        load_svmlight(path, cache=False)
    assert error.value.line == 2
    with pytest.raises(DataFormatError, match=r"g\.txt: n_features=1000000000 makes X .* need 3\.73 GiB"):
        load_svmlight(write(tmp_path / "g.txt", "1 qid:1 1:0.5\n"), n_features=10**9)
    sparse = load_svmlight(path, dense=False)
    assert sparse.X.shape == (3, 1_000_000_000) and sparse.X.nnz == 5


def test_max_dense_gib_sets_the_limit(tmp_path, chunking):
    """The widest line is named even when the limit is passed in a later chunk."""
    lines = ["0 qid:1 1:1", "1 qid:1 1000:2"] + ["0 qid:2 1:1"] * 40
    path = write(tmp_path / "f.txt", "\n".join(lines) + "\n")
    limit = 20 * 1000 * 4 / 2**30  # twenty rows of float32
    with pytest.raises(DataFormatError, match=r"f\.txt, line 2: feature index 1000 .*max_dense_gib=7\.45\d*e-05"):
        load_svmlight(path, max_dense_gib=limit, cache=False)
    assert load_svmlight(path, max_dense_gib=5 * limit, cache=False).X.shape == (42, 1000)
    assert load_svmlight(path, max_dense_gib=None, cache=False).X.shape == (42, 1000)
    assert load_svmlight(path, max_dense_gib=limit, dense=False, cache=False).X.shape == (42, 1000)


def test_dense_limit_of_the_machine_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(svmlight_parser, "_memory_gib", lambda: 1e-6)
    path = write(tmp_path / "f.txt", "".join(f"0 qid:1 1:1 2:1 3:{i}\n" for i in range(200)))
    with pytest.raises(DataFormatError, match=r"line 1: .* need 2\.24e-06 GiB, more than the 0\.0 GiB of memory of "
                                              r"this machine"):
        load_svmlight(path, cache=False)
    monkeypatch.setattr(svmlight_parser, "_memory_gib", lambda: None)  # where the system does not say
    assert load_svmlight(path, cache=False).n_docs == 200


@pytest.mark.parametrize("value", [0, -1.0, "big", True, float("nan")])
def test_max_dense_gib_is_checked(tmp_path, value):
    with pytest.raises(ValueError, match=r"max_dense_gib must be a finite number > 0, 'auto' or None, got"):
        load_svmlight(write(tmp_path / "f.txt", "1 qid:1 1:1\n"), max_dense_gib=value)


def test_directory_is_not_called_missing(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError, match=r"is a directory, not a ranking data file: '.*folder'"):
        load_svmlight(tmp_path / "folder")
    data_path = write(tmp_path / "f.txt", "1 1:1\n")
    with pytest.raises(IsADirectoryError, match=r"is a directory, not a query file"):
        load_svmlight(data_path, query_file=tmp_path / "folder")
    with pytest.raises(FileNotFoundError, match=r"no such ranking data file: '.*f\.txt/g\.txt'"):
        load_svmlight(data_path / "g.txt")


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_device_is_refused():
    with pytest.raises(DataFormatError, match=r"^/dev/null: not a regular file \(a pipe, a device or a socket\)"):
        load_svmlight("/dev/null")


@pytest.mark.parametrize("line, shown", [
    ("0 qid:1 1:" + "9" * 2_000_000 + "x", r"feature value '9{57}\.\.\.' \(2,000,001 bytes\) in '1:9{55}\.\.\.' "
                                           r"\(2,000,003 bytes\) is not a number$"),
    ("y" * 2_000_000 + " qid:1 1:1", r"label 'y{57}\.\.\.' \(2,000,000 bytes\) is not a number$"),
])
def test_long_tokens_are_cut_in_messages(tmp_path, line, shown):
    with pytest.raises(DataFormatError, match=rf"f\.txt, line 1: {shown}") as error:
        load_svmlight(write(tmp_path / "f.txt", line + "\n"), cache=False)
    assert len(error.value.message) < 200


@pytest.mark.parametrize("cache", [True, False])
def test_a_file_without_features_gets_one_error_from_every_loader(tmp_path, cache, monkeypatch):
    """It gave a memoryview TypeError with the cache and loaded an (n, 0) X without: one clear error now, also out
    of core; with n_features the lines read as zeros."""
    from plboost.data import DataFormatError, load_out_of_core

    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "nofeat.txt"
    path.write_text("1 qid:1\n0 qid:1\n2 qid:2\n0 qid:2\n")
    for load in (lambda: load_svmlight(path, cache=cache), lambda: load_out_of_core(path)):
        with pytest.raises(DataFormatError, match=r"nofeat.txt: no features: its 4 line\(s\) hold a label and qid: "
                                                  "only"):
            load()
    assert load_svmlight(path, n_features=2, cache=cache).X.shape == (4, 2)
