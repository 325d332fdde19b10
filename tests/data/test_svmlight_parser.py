"""The compiled SVMlight parser against the scikit-learn-based parser it replaced.

``ReferenceParser`` below is the loader's parser as it was (scikit-learn's ``load_svmlight_file`` on chunks of
whole lines, then plboost's checks), kept here as the specification: on every data file of the test suite
and of ../shared/data, on the error cases of test_svmlight.py and test_errors.py, and on random files (valid
ones with numbers of every spelling, and corrupted ones), both must give the same arrays bit for bit (dense
and sparse X, float32 and float64, labels, query ids, offsets, index types) or the same error (message, file
and line).
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import itertools
import struct
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from plboost._queries import InvalidLabelError, NonContiguousQueryError, check_labels, offsets_from_qids
from plboost.data import DataFormatError, RankingData, load_svmlight
from plboost.data import svmlight_parser

TESTS = Path(__file__).resolve().parents[1]
REAL_FILES = ([f"MQ2008/Fold{k}/{name}.txt.gz" for k in range(1, 6) for name in ("train", "vali", "test")]
              + ["MSLR-WEB10K-5k/msn1.fold1.train.5k.txt.gz", "MSLR-WEB10K-5k/msn1.fold1.test.5k.txt.gz",
                 "lightgbm_lambdarank/rank.train.gz", "lightgbm_lambdarank/rank.test.gz"])


class ReferenceParser:
    """The loader's parser before the compiled kernels, unchanged but for the names it takes from the module.

    scikit-learn parses each chunk of ``svmlight_parser.read_chunks``; a chunk it refuses is searched line by line
    for the first problem; then query ids, labels, indices and values are checked, and the dense blocks or CSR
    pieces of the chunks are put together.
    """

    def __init__(self, path, *, n_features, dense, dtype, zero_based, max_label, max_dense_gib="auto"):
        self.path, self.n_features, self.dense, self.dtype = path, n_features, dense, dtype
        self.zero_based, self.max_label, self.max_dense_gib = zero_based, max_label, max_dense_gib
        self.has_qid = None
        self.chunk_rows = []
        self.n_rows = self.n_values = 0
        self.widest = None  # (width, chunk, row in it, index)

    def parse(self, query_path, *, progress):
        pieces = []
        with contextlib.closing(svmlight_parser.read_chunks(self.path, progress=progress)) as chunks:
            for chunk, first_line in chunks:
                piece = self._parse_chunk(chunk, first_line)
                self.chunk_rows.append(0 if piece is None else piece[1].size)
                if piece is not None:
                    pieces.append(piece)
        if not pieces:
            raise DataFormatError(self.path, None, "no data lines (the file is empty or holds only comments)")
        blocks, labels, row_qids = zip(*pieces, strict=True)
        labels = np.concatenate(labels)
        n_docs = labels.size
        width = self.n_features or max(block.shape[1] for block in blocks)
        if width == 0:
            raise DataFormatError(self.path, None, svmlight_parser.no_features_message(n_docs))
        if self.dense:
            X = np.zeros((n_docs, width), dtype=self.dtype)
            start = 0
            for block in blocks:
                X[start:start + block.shape[0], :block.shape[1]] = block
                start += block.shape[0]
        else:
            for block in blocks:
                block.resize(block.shape[0], width)
            X = sp.vstack(blocks, format="csr")
        offsets, qids = self._queries(np.concatenate(row_qids), n_docs, query_path)
        return RankingData(X, labels, qids, offsets, self.path)

    def _parse_chunk(self, chunk, first_line):
        try:
            X, labels, row_qids = load_svmlight_file(io.BytesIO(chunk), dtype=self.dtype, zero_based=True,
                                                     query_id=True)
        except (ValueError, OverflowError) as exc:
            for line, tokens in svmlight_parser._data_lines(chunk, first_line):
                problem = svmlight_parser._syntax_problem(tokens)
                if problem:
                    raise DataFormatError(self.path, line, problem) from exc
            last_line = first_line + chunk.count(b"\n")
            raise DataFormatError(self.path, None, f"scikit-learn cannot parse lines {first_line}-{last_line}: "
                                                   f"{svmlight_parser._cut(str(exc))}") from exc
        n_rows = X.shape[0]
        if n_rows == 0:
            return None
        if self.has_qid is None:
            self.has_qid = svmlight_parser._has_qid(next(svmlight_parser._data_lines(chunk, first_line))[1])
        if row_qids.size != (n_rows if self.has_qid else 0):
            line = next(line for line, tokens in svmlight_parser._data_lines(chunk, first_line)
                        if svmlight_parser._has_qid(tokens) != self.has_qid)
            raise DataFormatError(self.path, line, "no qid: on this line, but earlier lines have one" if
                                  self.has_qid else "a qid: on this line, but earlier lines have none")
        try:
            labels = check_labels(labels, max_label=self.max_label)
        except InvalidLabelError as exc:
            raise DataFormatError(self.path, svmlight_parser._line_of_row(chunk, first_line, exc.position),
                                  f"label {exc.value:g} {exc.reason}") from None
        columns = X.indices.astype(np.int64) - (not self.zero_based)
        if columns.size and columns.min() < 0:
            k = int(np.argmax(columns < 0))
            self._raise_at_entry(chunk, first_line, X.indptr, k, "feature index 0 in a file with 1-based "
                                 "indices (the LETOR convention); pass zero_based=True for 0-based files")
        if self.n_features is not None and columns.size and columns.max() >= self.n_features:
            k = int(np.argmax(columns >= self.n_features))
            self._raise_at_entry(chunk, first_line, X.indptr, k, f"feature index {X.indices[k]} is beyond "
                                 f"n_features={self.n_features}")
        infinite = np.isinf(X.data)
        if infinite.any():
            k = int(np.argmax(infinite))
            line = svmlight_parser._line_of_row(chunk, first_line, svmlight_parser._row_of_entry(X.indptr, k))
            written = svmlight_parser._written_value(chunk, first_line, line, int(X.indices[k]))
            if written is not None and np.isfinite(written):
                self._raise_at_entry(chunk, first_line, X.indptr, k, f"feature {X.indices[k]} is {written:g}, beyond "
                                     f"{np.dtype(self.dtype).name}'s range (±{np.finfo(self.dtype).max:.3g}): rescale "
                                     "it, or read the file with dtype=float64")
            self._raise_at_entry(chunk, first_line, X.indptr, k, f"feature {X.indices[k]} is {X.data[k]}; "
                                 "infinite values are not accepted (write nan for a missing value)")
        width = self.n_features or (int(columns.max()) + 1 if columns.size else 0)
        if self.n_features is None and columns.size and (self.widest is None or width > self.widest[0]):
            k = int(np.argmax(columns))
            self.widest = (width, len(self.chunk_rows), svmlight_parser._row_of_entry(X.indptr, k), int(X.indices[k]))
        self.n_rows += n_rows
        self.n_values += X.data.size
        if self.dense:
            self._check_dense_size(chunk, first_line)
        block = sp.csr_matrix((X.data, columns, X.indptr), shape=(n_rows, width))
        return (block.toarray() if self.dense else block), labels, row_qids

    def _check_dense_size(self, chunk, first_line):
        width = self.n_features or (self.widest[0] if self.widest else 0)
        gib = self.n_rows * width * self.dtype.itemsize / 2**30
        if self.max_dense_gib is None:
            return
        if self.max_dense_gib == "auto":
            memory = svmlight_parser._memory_gib()
            fill = self.n_values / max(1, self.n_rows * width)
            if memory is not None and gib > memory:
                reason = f"more than the {memory:.1f} GiB of memory of this machine (max_dense_gib sets the limit)"
            elif gib > svmlight_parser.SPARSE_DENSE_GIB and fill < svmlight_parser.SPARSE_FILL:
                reason = (f"with {100 * fill:.2g}% of the cells in the file (over "
                          f"{svmlight_parser.SPARSE_DENSE_GIB:g} GiB, at least {100 * svmlight_parser.SPARSE_FILL:g}% "
                          "must be; max_dense_gib sets the limit)")
            else:
                return
        elif gib > self.max_dense_gib:
            reason = f"more than max_dense_gib={self.max_dense_gib:g}"
        else:
            return
        if self.n_features is None:
            _, chunk_number, row, index = self.widest
            line = (svmlight_parser._line_of_row(chunk, first_line, row) if chunk_number == len(self.chunk_rows)
                    else self._line_of_chunk_row(chunk_number, row))
            cause = f"feature index {index} makes X {width:,} columns wide"
        else:
            line, cause = None, f"n_features={self.n_features} makes X {width:,} columns wide"
        raise DataFormatError(self.path, line, f"{cause}: pass dense=False for a sparse X; dense {self.dtype}, the "
                              f"{self.n_rows:,} document(s) read so far need {gib:.3g} GiB, {reason}")

    def _raise_at_entry(self, chunk, first_line, indptr, k, message):
        line = svmlight_parser._line_of_row(chunk, first_line, svmlight_parser._row_of_entry(indptr, k))
        raise DataFormatError(self.path, line, message)

    def _queries(self, row_qids, n_docs, query_path):
        if self.has_qid:
            try:
                offsets, qids = offsets_from_qids(row_qids)
            except NonContiguousQueryError as exc:
                starts = np.cumsum([0, *self.chunk_rows])
                k = int(np.searchsorted(starts, exc.row, side="right")) - 1
                raise DataFormatError(self.path, self._line_of_chunk_row(k, exc.row - int(starts[k])),
                                      f"qid {exc.qid} reappears after lines of another query; the lines of a "
                                      "query must be contiguous") from None
            if query_path is not None and not np.array_equal(
                    svmlight_parser._read_query_file(query_path, self.path, n_docs), offsets):
                raise DataFormatError(query_path, None, f"the query sizes disagree with the qid: column of "
                                      f"{self.path}")
            return offsets, qids
        if query_path is None:
            looked = " and ".join(str(c) for c in svmlight_parser.query_file_candidates(self.path))
            raise DataFormatError(self.path, None, f"no qid: column and no query file giving the query sizes "
                                  f"(looked for {looked}): add qid:<id> to every line, or write the query sizes "
                                  "there, one per line, as LightGBM's .query files hold them (in Python, "
                                  "query_file=PATH names another file)")
        offsets = svmlight_parser._read_query_file(query_path, self.path, n_docs)
        return offsets, np.arange(offsets.size - 1, dtype=np.int64)

    def _line_of_chunk_row(self, k, row):
        with contextlib.closing(svmlight_parser.read_chunks(self.path)) as chunks:
            chunk, first_line = next(itertools.islice(chunks, k, None))
        return svmlight_parser._line_of_row(chunk, first_line, row)


def load_with(parser, path, **options):
    """``load_svmlight(path, cache=False, **options)`` with ``parser`` as the loader's parser."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(svmlight_parser, "Parser", parser)
        return load_svmlight(path, cache=False, **options)


def outcome(parser, path, **options):
    """What loading gives: the arrays, as (name, dtype, shape, bytes), or the DataFormatError's path, line, message."""
    try:
        data = load_with(parser, path, **options)
    except DataFormatError as error:
        return "error", str(error.path), error.line, error.message
    X = data.X
    arrays = ({"X.data": X.data, "X.indices": X.indices, "X.indptr": X.indptr} if sp.issparse(X) else {"X": X})
    arrays |= {"labels": data.labels, "qids": data.qids, "offsets": data.offsets}
    return "data", type(X).__name__, X.shape, [(name, a.dtype.str, a.shape, a.tobytes()) for name, a in arrays.items()]


def assert_same(path, **options):
    """The compiled parser and the reference give the same outcome on ``path``; returns it."""
    expected = outcome(ReferenceParser, path, **options)
    got = outcome(svmlight_parser.Parser, path, **options)
    if got[0] == "data" and expected[0] == "data":
        assert got[1:3] == expected[1:3]
        for (name, *ours), (_, *theirs) in zip(got[3], expected[3], strict=True):
            assert ours == theirs, f"{name} differs ({path.name}, {options})"
    assert got == expected, f"{path.name}, {options}: {got[:4]} != {expected[:4]}"
    return got


def load_module(name: str):
    """A test module beside this one, by path (the tests are not a package)."""
    spec = importlib.util.spec_from_file_location("_reference_" + name.replace("/", "_"), TESTS / f"{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=[None, 20], ids=["one chunk", "tiny chunks"])
def chunk_bytes(request, monkeypatch):
    if request.param:
        monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", request.param)
    return request.param


@pytest.fixture(params=[None, 16], ids=["one part", "many parts"])
def part_bytes(request, monkeypatch):
    """Small files are read in one part; 16-byte parts give them several (line numbers, offsets across parts)."""
    if request.param:
        monkeypatch.setattr(svmlight_parser, "_PART_BYTES", request.param)
    return request.param


# --- real files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_files(shared_data, name):
    """Every file, as float64 CSR (the values as parsed, explicit zeros and -0.0 kept); float32 and dense X are
    these values cast and added to zeros, as in the reference (checked against it on some files below)."""
    path = shared_data / name
    assert assert_same(path, dtype=np.float64, dense=False)[0] == "data"
    exact = load_svmlight(path, cache=False, dtype=np.float64, dense=False)
    dense32 = load_svmlight(path, cache=False)
    expected = sp.csr_matrix((exact.X.data.astype(np.float32), exact.X.indices, exact.X.indptr), exact.X.shape)
    np.testing.assert_array_equal(dense32.X.view(np.uint32), expected.toarray().view(np.uint32))


@pytest.mark.parametrize("name", [*REAL_FILES[:3], REAL_FILES[-4], *REAL_FILES[-2:]])
def test_real_files_float32_dense(shared_data, name):
    assert assert_same(shared_data / name)[0] == "data"


@pytest.mark.parametrize("dtype, dense", [(np.float32, False), (np.float64, True)], ids=["float32 sparse",
                                                                                          "float64 dense"])
@pytest.mark.parametrize("name", ["MSLR-WEB10K-5k/msn1.fold1.test.5k.txt.gz", *REAL_FILES[-2:]])
def test_real_files_other_layouts(shared_data, name, dtype, dense, monkeypatch):
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 1 << 20)  # several chunks
    assert assert_same(shared_data / name, dtype=dtype, dense=dense, n_features=400)[0] == "data"


# --- the cases of the other tests ---------------------------------------------------------------------------


def test_error_cases_of_the_error_table():
    """Every data-file row of docs/errors.md: the same message from both parsers."""
    errors = load_module("test_errors")
    cases = [case for case in errors.CASES if case.section == "data file"]
    assert len(cases) > 20
    for case in cases:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(svmlight_parser, "Parser", ReferenceParser)
            expected = errors.observe(case)
        assert errors.observe(case) == expected, case.what


@pytest.fixture(scope="module")
def svmlight_tests():
    return load_module("data/test_svmlight")


def write(path, data: bytes, compress=False):
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_bad_lines_of_test_svmlight(tmp_path, svmlight_tests, chunk_bytes, part_bytes):
    for case, (bad, _) in svmlight_tests.BAD_LINES.items():
        text = svmlight_tests.HEADER + svmlight_tests.GOOD + bad + "\n0 qid:9 1:0.5\n"
        assert assert_same(write(tmp_path / "bad.txt", text.encode()))[0] == "error", case


def test_line_ends_of_test_svmlight(tmp_path, svmlight_tests, chunk_bytes, part_bytes):
    tests = svmlight_tests
    for ending, bom, compress in itertools.product(tests.ENDINGS, [False, True], [False, True]):
        for lines in (tests.LINES, [*tests.LINES, "0 qid:12 1:abc", "1 qid:12 1:1"], [*tests.LINES, "1 qid:30 1:1"]):
            data = b"\xef\xbb\xbf" * bom + tests.ENDINGS[ending](lines).encode()
            assert_same(write(tmp_path / "f.txt", data, compress))


EXPLICIT = [  # (text, options) of the other tests of test_svmlight.py
    ("1 qid:1 0:5 2:7\n0 qid:1 1:3\n", {}), ("1 qid:1 0:5 2:7\n0 qid:1 1:3\n", dict(zero_based=True)),
    ("31 qid:1 1:1\n0 qid:1 1:2\n", {}), ("31 qid:1 1:1\n0 qid:1 1:2\n", dict(max_label=None)),
    ("# a comment line\n\n1 1:0.5\n0 1:0.5\n0 qid:3 1:0.5\n", {}),
    ("".join(f"0 qid:{q} 1:{q}\n" for q in range(50) for _ in range(3)) + "1 qid:17 1:0.5\n", {}),
    ("", {}), ("\n\n", {}), ("# only a comment\n  # and another\n", {}), ("1 1:1\n0 1:2\n", dict(query_file=None)),
    ("1 qid:1 1:0.5 3:1\n0 qid:1 2:1 1000000000:1\n1 qid:2 1:1\n", {}),
    ("1 qid:1 1:0.5 3:1\n0 qid:1 2:1 1000000000:1\n1 qid:2 1:1\n", dict(dense=False)),
    ("1 qid:1 1:0.5\n", dict(n_features=10**9)),
    ("\n".join(["0 qid:1 1:1", "1 qid:1 1000:2"] + ["0 qid:2 1:1"] * 40) + "\n",
     dict(max_dense_gib=20 * 1000 * 4 / 2**30)),
    ("\n".join(["0 qid:1 1:1", "1 qid:1 1000:2"] + ["0 qid:2 1:1"] * 40) + "\n", dict(max_dense_gib=1e-4)),
    ("\r".join(f"{i % 3} qid:{i // 10} 1:{i}" for i in range(200)) + "\r", {}),
    ("0 qid:1 1:" + "9" * 2_000_000 + "x\n", {}), ("y" * 2_000_000 + " qid:1 1:1\n", {}),
    ("0 qid:1 1:" + "9" * 2_000_000 + "\n", dict(dtype=np.float64)),
]


@pytest.mark.parametrize("text, options", EXPLICIT, ids=range(len(EXPLICIT)))
def test_other_cases_of_test_svmlight(tmp_path, text, options, chunk_bytes):
    assert_same(write(tmp_path / "f.txt", text.encode()), **options)


def test_machine_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(svmlight_parser, "_memory_gib", lambda: 1e-6)
    assert_same(write(tmp_path / "f.txt", "".join(f"0 qid:1 1:1 2:1 3:{i}\n" for i in range(200)).encode()))


def test_query_files(tmp_path):
    data_path = write(tmp_path / "rank.train", b"1 1:1\n0 1:2\n2 1:3\n")
    for sizes in (b"2\n1\n", b"2\n2\n", b"2\n0\n1\n", b"1\n\n1.5\n", b"\xef\xbb\xbf2\r\n\r\n1\r\n"):
        (tmp_path / "rank.train.query").write_bytes(sizes)
        assert_same(data_path)
    qid_path = write(tmp_path / "q.txt", b"1 qid:4 1:1\n0 qid:4 1:2\n2 qid:5 1:3\n")
    for sizes in (b"2\n1\n", b"1\n2\n"):
        (tmp_path / "q.txt.query").write_bytes(sizes)
        assert_same(qid_path)


def test_truncated_gzip_and_utf16(tmp_path):
    packed = gzip.compress(("1 qid:1 1:0.5\n" * 2000).encode())
    assert_same(write(tmp_path / "cut.txt.gz", packed[:len(packed) // 2]))
    assert_same(write(tmp_path / "utf16.txt", "1 qid:1 1:1\n".encode("utf-16")))


@pytest.mark.parametrize("name", ["r.txt", "r.txt.gz"])
def test_every_float32_pattern_saved_and_loaded(tmp_path, name):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2**32, size=(300, 7), dtype=np.uint64).astype(np.uint32).view(np.float32).copy()
    X[~np.isfinite(X)] = np.nan
    X[rng.random(X.shape) < 0.3] = 0
    data = RankingData(X, rng.integers(0, 5, 300), np.arange(3), np.array([0, 100, 200, 300]))
    path = data.save_svmlight(tmp_path / name)
    for dtype, dense in itertools.product([np.float32, np.float64], [True, False]):
        assert_same(path, dtype=dtype, dense=dense)


# --- numbers ------------------------------------------------------------------------------------------------


def random_numbers(rng, n: int) -> list[bytes]:
    """Decimals of every spelling Python's float() reads, and a few it does not."""
    out = []
    for _ in range(n):
        kind = rng.integers(12)
        if kind == 0:  # any double, shortest repr
            x = struct.unpack("<d", rng.bytes(8))[0]
            out.append(repr(x).encode())
        elif kind == 1:  # any double, 17 digits
            out.append(b"%.17g" % struct.unpack("<d", rng.bytes(8))[0])
        elif kind == 2:  # float32 written with 9 digits
            out.append(b"%.9g" % struct.unpack("<f", rng.bytes(4))[0])
        elif kind == 3:  # long mantissas, any exponent
            digits = "".join(map(str, rng.integers(0, 10, rng.integers(1, 40))))
            point = rng.integers(0, len(digits) + 1)
            text = digits[:point] + "." + digits[point:] + (f"e{rng.integers(-400, 400)}" if rng.random() < 0.7 else "")
            out.append(text.encode())
        elif kind == 4:  # halfway between two doubles (m * 2**e, m odd of 54 bits), and just above it
            m = int(rng.integers(2**52, 2**53)) * 2 + 1
            e = int(rng.integers(-60, 60))
            digits, power = (str(m * 2**e), 0) if e >= 0 else (str(m * 5**-e), e)
            nudge = rng.integers(2)
            out.append(f"{digits}{'0001' * nudge}e{power - 4 * nudge}".encode())
        elif kind == 5:  # short decimals
            out.append(b"%.*f" % (int(rng.integers(0, 8)), rng.normal() * 10.0 ** rng.integers(-5, 6)))
        elif kind == 6:  # integers
            out.append(b"%d" % rng.integers(-10**9, 10**9))
        elif kind == 7:  # subnormals, overflow, near the ends of the range
            out.append(rng.choice([b"4.9e-324", b"2.4e-324", b"1e-320", b"2.2250738585072011e-308",
                                   b"2.2250738585072014e-308", b"1.7976931348623157e308", b"1.7976931348623159e308",
                                   b"1e309", b"1e-400", b"0e999999", b"123e-330", b"9007199254740993"]))
        elif kind == 8:  # special values
            out.append(rng.choice([b"nan", b"-nan", b"+NaN", b"NAN", b"inf", b"-Infinity", b"+inf", b"iNfInItY"]))
        elif kind == 9:  # zeros and signs
            out.append(rng.choice([b"0", b"-0", b"+0", b"-0.0", b"0.", b".0", b"-.0e5", b"+.5", b"5.", b"00012.50"]))
        elif kind == 10:  # spellings Python reads that the kernels leave to Python
            out.append(rng.choice([b"1_000", b"1_0.5", b"1e1_0", b"0" * 30 + b"1", b"1" + b"0" * 30]))
        else:  # not numbers
            out.append(rng.choice([b"", b".", b"-", b"e5", b"1e", b"1e+", b"1..2", b"0x10", b"1,5", b"na", b"infin",
                                   b"1e5.5", b"--1", b"1-", b"nan1", b"inf0"]))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_are_pythons_floats(tmp_path, part_bytes, dtype):
    """Each value (and label) is Python's float() of its text, then cast to the type, bit for bit."""
    rng = np.random.default_rng(7)
    with np.errstate(over="ignore"):
        numbers = [t for t in random_numbers(rng, 6000) if _is_float(t) and np.isfinite(dtype(float(t)))]
    lines = [b"0 qid:1 " + b" ".join(b"%d:%s" % (j + 1, t) for j, t in enumerate(numbers[i:i + 20]))
             for i in range(0, len(numbers), 20)]
    path = write(tmp_path / "numbers.txt", b"\n".join(lines) + b"\n")
    data = load_svmlight(path, cache=False, dense=False, dtype=dtype, n_features=20)
    expected = np.array([float(t) for t in numbers]).astype(dtype)
    np.testing.assert_array_equal(data.X.data.view(np.uint8), expected.view(np.uint8))
    assert len(numbers) > 4000


def _is_float(text: bytes) -> bool:
    try:
        return np.isfinite(float(text)) or text.lower().lstrip(b"+-") == b"nan"
    except ValueError:
        return False


def test_common_spellings_are_read_by_the_kernels(tmp_path, monkeypatch):
    """Lines go back to Python only for unusual spellings: not for 17-digit doubles or 9-digit float32."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(200, 30)) * np.exp(rng.normal(size=(200, 30)) * 8)
    lines = [f"{i % 5} qid:{i // 7} " + " ".join(f"{j + 1}:{v:.17g}" if i % 2 else f"{j + 1}:{np.float32(v):.9g}"
                                                  for j, v in enumerate(row)) + " # c"
             for i, row in enumerate(values)]
    path = write(tmp_path / "f.txt", ("\n".join(lines) + "\n").encode())
    again = []
    read_again = svmlight_parser._read_again
    monkeypatch.setattr(svmlight_parser, "_read_again", lambda *args: again.append(args[-1]) or read_again(*args))
    data = load_svmlight(path, cache=False, dtype=np.float64)
    assert again == []
    np.testing.assert_array_equal(data.X[1::2], values[1::2])
    write(tmp_path / "f.txt", ("\n".join(lines) + "\n1 qid:99 1:1_0\n").encode())
    assert load_svmlight(path, cache=False).X[-1, 0] == 10 and len(again) == 1


# --- random files -------------------------------------------------------------------------------------------

SEPARATORS = [b" ", b" ", b" ", b"  ", b"\t", b" \t ", b"\x0b", b"\x0c"]
LABELS = [b"0", b"1", b"2", b"3", b"4", b"2.0", b"-0", b"+1", b"1e0", b"0.5", b"-1", b"1e400", b"nan", b"31", b"1_0",
          b"x", b"qid:3", b"00", b"4.", b"inf"]
QIDS = [b"qid:%d", b"qid:%d", b"qid:%d", b"qid:+%d", b"qid:0%d", b"qidx:%d", b"qid:%d_0", b"qid:-%d",
        b"qid:99999999999999999999", b"qid:9223372036854775807", b"qid:", b"qid:%d:1", b"qid=%d", b"qid:%dx"]
INDICES = [b"%d", b"%d", b"%d", b"%d", b"0%d", b"+%d", b"%d_0", b"-%d", b"%d0000000000", b"x%d", b""]
CORRUPTIONS = [b":", b" ", b"x", b"#", b"\0", b"\n", b"\r", b"-", b".", b"e", b"5", b"\r\n", b"\xff", b"\t"]


def random_file(rng) -> bytes:
    """A small SVMlight file: mostly well-formed lines, with odd spellings, comments, blank lines and
    whitespace, and sometimes a few corrupted bytes."""
    with_qid = rng.random() < 0.9
    odd_lines = 0.0 if rng.random() < 0.5 else 0.15  # half the files have only plain lines
    qid = int(rng.integers(0, 5))
    lines = []
    for _ in range(int(rng.integers(1, 30))):
        kind = rng.random()
        if kind < 0.08:
            lines.append(rng.choice([b"", b"  ", b"\t", b"# a comment", b"  #", b"#qid:1 1:2"]))
            continue
        weird = rng.random() < odd_lines
        label = LABELS[rng.integers(len(LABELS) if weird else 5)]
        tokens = [label]
        if with_qid != (weird and rng.random() < 0.1):
            qid += int(rng.random() < 0.3) - 2 * int(rng.random() < 0.03)  # rarely, back to an earlier query
            spelling = QIDS[rng.integers(len(QIDS) if weird else 1)]
            tokens.append(spelling % qid if b"%d" in spelling else spelling)
        index = -1 if rng.random() < 0.03 else int(rng.integers(0, 3))  # rarely, a first index of 0
        for value in random_numbers(rng, int(rng.integers(0, 12))):
            index += int(rng.integers(1, 4)) if not (weird and rng.random() < 0.05) else 0
            spelling = INDICES[rng.integers(len(INDICES) if weird and rng.random() < 0.2 else 1)]
            if not weird and not (_is_float(value) and abs(float(value)) < 1e38 or b"nan" in value.lower()):
                value = b"0.25"
            tokens.append((spelling % index if b"%d" in spelling else spelling) + b":" + value)
        line = SEPARATORS[rng.integers(len(SEPARATORS))].join(tokens)
        if rng.random() < 0.2:
            line += rng.choice([b" # comment 1:2", b"#", b"\t#x", b"   "])
        lines.append(line)
    text = bytearray(b"\n".join(lines) + (b"\n" if rng.random() < 0.9 else b""))
    for _ in range(int(rng.integers(0, 4)) if rng.random() < 0.3 else 0):
        at = int(rng.integers(0, len(text) + 1))
        what = rng.integers(3)
        if what == 0 and at < len(text):
            del text[at]
        else:
            text[at:at + (what == 2)] = CORRUPTIONS[rng.integers(len(CORRUPTIONS))]
    return bytes(text)


@pytest.mark.parametrize("seed", range(6))
def test_random_files(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    kinds = {"data": 0, "error": 0}
    for case in range(60):
        content = random_file(rng)
        monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", int(rng.choice([16 << 20, 1, 7, 40, 300])))
        monkeypatch.setattr(svmlight_parser, "_PART_BYTES", int(rng.choice([1 << 16, 1, 16, 100])))
        options = dict(dense=bool(rng.random() < 0.6), dtype=[np.float32, np.float64][rng.integers(2)],
                       zero_based=bool(rng.random() < 0.3), query_file=None,
                       n_features=[None, None, 25, 40][rng.integers(4)], max_label=[30, None][rng.integers(2)])
        path = write(tmp_path / f"r{case}.txt", content, compress=bool(rng.random() < 0.2))
        kinds[assert_same(path, **options)[0]] += 1
    assert kinds["data"] > 5 and kinds["error"] > 5


def test_the_thread_count_and_parts_do_not_matter(tmp_path, monkeypatch):
    rng = np.random.default_rng(11)
    path = write(tmp_path / "f.txt", b"".join(random_file(rng).rstrip(b"\n") + b"\n" for _ in range(40)))
    results = []
    previous = numba.get_num_threads()
    try:
        for threads, part in [(1, 1 << 16), (previous, 1 << 16), (previous, 1), (1, 64)]:
            numba.set_num_threads(threads)
            monkeypatch.setattr(svmlight_parser, "_PART_BYTES", part)
            results.append(outcome(svmlight_parser.Parser, path, query_file=None, max_label=None))
    finally:
        numba.set_num_threads(previous)
    assert all(result == results[0] for result in results)


def test_qids_beyond_int64_and_widths_growing_across_chunks(tmp_path, chunk_bytes, part_bytes):
    for text in (b"1 qid:9223372036854775807 1:1\n0 qid:-9223372036854775808 1:2\n",
                 b"1 qid:9223372036854775808 1:1\n", b"1 qid:-9223372036854775809 1:1\n",
                 b"1 qid:1 1:1\n1 qid:1 5:1\n1 qid:2 2:1 90:3\n0 qid:2 3:-0\n1 qid:3 200:nan 300:-nan\n" * 3):
        for dense, dtype in itertools.product([True, False], [np.float32, np.float64]):
            assert_same(write(tmp_path / "f.txt", text), dense=dense, dtype=dtype)


def test_nul_bytes_and_comments(tmp_path, chunk_bytes):
    for text in (b"1 qid:1 1:1 # x\0y\n", b"1 qid:1 1:1 \0 # 2:3\n", b"1 qid:1 1:1\0#\n", b"1 qidx\0:5 1:1\n",
                 b"1\0 qid:1\n", b"1 qid:1 1:0.5#2:3\n0 qid:1#\n", b"#\0\n1 qid:1 2:2\n"):
        assert_same(write(tmp_path / "f.txt", text))


_INTERPRETED = """
import pickle, sys
import numpy as np
from plboost.data import svmlight
outcomes = []
for name in sys.argv[1:]:
    for options in (dict(dtype=np.float64, dense=False), dict()):
        try:
            data = svmlight.load_svmlight(name, cache=False, query_file=None, **options)
            X = data.X.toarray() if hasattr(data.X, "toarray") else data.X
            outcomes.append([a.tobytes() for a in (X, data.labels, data.qids, data.offsets)])
        except svmlight.DataFormatError as error:
            outcomes.append((error.line, error.message))
sys.stdout.buffer.write(pickle.dumps(outcomes))
"""


def test_interpreted_kernels_read_the_same(tmp_path):
    """With NUMBA_DISABLE_JIT=1 (the suite's coverage pass) the kernels run as Python, with NumPy scalars: the
    same results."""
    import os
    import pickle
    import subprocess

    rng = np.random.default_rng(5)
    numbers = [t for t in random_numbers(rng, 300) if _is_float(t)]
    lines = [b"0 qid:1 " + b" ".join(b"%d:%s" % (j + 1, t) for j, t in enumerate(numbers[i:i + 10]))
             for i in range(0, len(numbers), 10)]
    paths = [write(tmp_path / "numbers.txt", b"\n".join(lines))]
    paths += [write(tmp_path / f"r{k}.txt", random_file(rng)) for k in range(6)]
    runs = []
    for disable in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", _INTERPRETED, *map(str, paths)], env=env,
                              capture_output=True, check=True)
        runs.append(pickle.loads(done.stdout))
    assert runs[0] == runs[1]
