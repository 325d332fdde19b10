"""The SVMlight/LETOR text parser that both loaders use (:func:`plboost.data.load_svmlight` in memory,
:func:`plboost.data.load_out_of_core` to chunk files on disk).

A data line is ``label qid:Q i:v i:v ... # comment``: an integer relevance label, the query id, then
features as ``index:value`` pairs with strictly increasing indices (absent features are 0). Text from
``#`` to the end of the line is a comment; comment-only and blank lines hold no document. Files may be
gzip-compressed; lines may end in LF, CRLF or CR (old Mac files), even mixed, and a UTF-8 byte-order mark at
the start is skipped. Files without a ``qid:`` column (LightGBM's examples) give their query sizes in a
separate ``.query`` file, one size per line.

Lines are read as scikit-learn's :func:`sklearn.datasets.load_svmlight_file` reads them (the same values
bit for bit, the same lines refused), by compiled kernels (:mod:`plboost.data._svmlight_kernels`) that read
chunks of whole lines in parallel and leave the rare unusual line to Python; everything scikit-learn does
not check is checked here, and every error (:class:`DataFormatError`) names the file and line.

:func:`read_chunks` gives a file's chunks of whole lines, :func:`read_documents` the documents of a chunk, and
a :class:`Parser` checks them chunk by chunk, keeping the features as a dense ``X`` or as CSR pieces.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import itertools
import os
import re
import stat
import threading
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from .._constraints import Integer, check
from .._queries import (InvalidLabelError, NonContiguousQueryError, check_labels, offsets_from_qids,
                        offsets_from_sizes)
from .._jit import kernel_threads
from . import _svmlight_kernels as _kernels
from .ranking_data import RankingData

# The file is read and checked a chunk of whole lines at a time. The checks run chunk by chunk (syntax, then
# query ids, labels, indices, values, size), so the chunk size decides which of two errors in different lines
# is reported: it stays what it was with scikit-learn's parser. Each chunk is read in parallel parts.
CHUNK_BYTES = 16 << 20
_PARTS_PER_THREAD = 4  # parts of a chunk per thread, for an even load
_PART_BYTES = 1 << 16  # smallest part
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # UTF-16 LE, BE; UTF-32 BE (LE starts as UTF-16 LE)
#: the first bytes of files in formats that are not SVMlight text (none can start a data line, whose first token is
#: a number), what each is, and what to do with it
_OTHER_FORMATS = ((re.compile(rb"BZh[1-9]1AY&SY"), "bzip2-compressed", "decompress it (bunzip2)"),
                  (re.compile(rb"\xfd7zXZ\x00"), "xz-compressed", "decompress it (unxz)"),
                  (re.compile(rb"\x28\xb5\x2f\xfd"), "Zstandard-compressed", "decompress it (unzstd)"),
                  (re.compile(rb"\x04\x22\x4d\x18"), "LZ4-compressed", "decompress it (unlz4)"),
                  (re.compile(rb"PK\x03\x04"), "a ZIP archive", "extract it (unzip)"),
                  (re.compile(rb"7z\xbc\xaf\x27\x1c"), "a 7-Zip archive", "extract it (7z x)"),
                  (re.compile(rb"PAR1"), "a Parquet file", "name it .parquet to read it as a table"))
#: tokens longer than this are cut in messages
_SHOWN_BYTES = 60
#: with max_dense_gib="auto", a dense X above this many GiB is refused when less than SPARSE_FILL of its cells
#: are given in the file: a stray large feature index, or data that should be read sparse
SPARSE_DENSE_GIB = 1.0
SPARSE_FILL = 0.01


class DataFormatError(ValueError):
    """A ranking file that cannot be read as it is; ``path`` and ``line`` (1-based, or None) locate it."""

    def __init__(self, path, line: int | None, message: str):
        self.path, self.line, self.message = Path(path), line, message
        where = str(path) if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")

    def __reduce__(self):
        return type(self), (self.path, self.line, self.message)


class Parser:
    """One pass over a file: each chunk read by the compiled kernels, then validated; errors located by line.

    The features of the chunks read so far are kept in their final form as the file is read: a dense ``X``
    grown in place by whole chunks (and widened in place when a later chunk has a larger feature index),
    or one CSR piece per chunk.
    """

    def __init__(self, path: Path, *, n_features, dense, dtype, zero_based, max_label, max_dense_gib="auto"):
        self.path, self.n_features, self.dense, self.dtype = path, n_features, dense, dtype
        self.zero_based, self.max_label, self.max_dense_gib = zero_based, max_label, max_dense_gib
        self.has_qid: bool | None = None  # decided by the first data line
        self.chunk_rows: list[int] = []
        self.n_rows = self.n_values = 0  # documents and stored values of the chunks parsed so far
        self.widest: tuple[int, int, int] | None = None  # (width, line, index) of the largest index so far
        self.X: np.ndarray | None = None  # dense: the rows read so far
        self.pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # sparse: (values, columns, row sizes)

    def parse(self, query_path: Path | None, *, progress: bool) -> RankingData:
        labels, row_qids = [], []
        with contextlib.closing(read_chunks(self.path, progress=progress)) as chunks:
            for chunk, first_line in chunks:
                piece = self.parse_chunk(chunk, first_line)
                del chunk  # freed before the next one is read
                self.chunk_rows.append(0 if piece is None else piece[0].size)
                if piece is not None:
                    labels.append(piece[0])
                    row_qids.append(piece[1])
        if not labels:
            raise DataFormatError(self.path, None, "no data lines (the file is empty or holds only comments)")

        labels = np.concatenate(labels)
        n_docs = labels.size
        width = self.width
        if width == 0:
            raise DataFormatError(self.path, None, no_features_message(n_docs))
        if self.dense:
            self._widen(width)
            X, self.X = self.X, None
        else:
            values, columns, sizes = (np.concatenate(parts) for parts in zip(*self.pieces, strict=True))
            self.pieces = []
            indptr = np.zeros(n_docs + 1, dtype=np.int64)
            np.cumsum(sizes, out=indptr[1:])
            X = sp.csr_matrix((values, columns, indptr), shape=(n_docs, width))
        offsets, qids = self.queries(np.concatenate(row_qids), n_docs, query_path)
        return RankingData(X, labels, qids, offsets, self.path)

    def parse_chunk(self, chunk: bytes, first_line: int) -> tuple | None:
        """(labels, per-row query ids) of a chunk, or None if it holds no document; its features are added to
        ``X`` or ``pieces``."""
        docs = read_documents(chunk, first_line, self.dtype)
        indptr = docs.indptr
        try:
            for row in np.flatnonzero(docs.flags).tolist():
                _read_again(chunk, docs, indptr, row)
        except (ValueError, OverflowError) as exc:  # a line scikit-learn's parser refuses: say why
            for line, tokens in _data_lines(chunk, first_line):
                problem = _syntax_problem(tokens)
                if problem:
                    raise DataFormatError(self.path, line, problem) from exc
            last_line = first_line + chunk.count(b"\n")
            raise DataFormatError(self.path, None, f"scikit-learn cannot parse lines {first_line}-{last_line}: "
                                                   f"{_cut(str(exc))}") from exc
        n_rows = docs.labels.size
        if n_rows == 0:
            return None

        if self.has_qid is None:
            self.has_qid = bool(docs.has_qid[0])
        other = np.flatnonzero(docs.has_qid != self.has_qid)
        if other.size:
            raise DataFormatError(self.path, int(docs.lines[other[0]]), "no qid: on this line, but earlier lines "
                                  "have one" if self.has_qid else "a qid: on this line, but earlier lines have none")

        try:
            labels = check_labels(docs.labels, max_label=self.max_label)
        except InvalidLabelError as exc:
            raise DataFormatError(self.path, int(docs.lines[exc.position]),
                                  f"label {exc.value:g} {exc.reason}") from None

        indices, values = docs.indices, docs.values
        columns = indices - np.int32(not self.zero_based)
        if columns.size and columns.min() < 0:
            k = int(np.argmax(columns < 0))
            self._raise_at_entry(docs, k, "feature index 0 in a file with 1-based indices (the LETOR "
                                 "convention); pass zero_based=True for 0-based files")
        if self.n_features is not None and columns.size and int(columns.max()) >= self.n_features:
            k = int(np.argmax(columns >= self.n_features))
            self._raise_at_entry(docs, k, f"feature index {indices[k]} is beyond n_features={self.n_features}")
        infinite = np.isinf(values)
        if infinite.any():
            k = int(np.argmax(infinite))
            line = int(docs.lines[_row_of_entry(indptr, k)])
            written = _written_value(chunk, first_line, line, int(indices[k]))
            if written is not None and np.isfinite(written):
                self._raise_at_entry(docs, k, f"feature {indices[k]} is {written:g}, beyond {self.dtype.name}'s "
                                     f"range (±{np.finfo(self.dtype).max:.3g}): rescale it, or read the file with "
                                     "dtype=float64")
            self._raise_at_entry(docs, k, f"feature {indices[k]} is {values[k]}; infinite values are not "
                                 "accepted (write nan for a missing value)")

        width = self.n_features or (int(columns.max()) + 1 if columns.size else 0)
        if self.n_features is None and columns.size and (self.widest is None or width > self.widest[0]):
            k = int(np.argmax(columns))
            self.widest = (width, int(docs.lines[_row_of_entry(indptr, k)]), int(indices[k]))
        self.n_rows += n_rows
        self.n_values += values.size
        if self.dense:
            self._check_dense_size()
            self._widen(self.width)
            start = self.X.shape[0]
            self.X.resize((start + n_rows, self.X.shape[1]), refcheck=False)  # new rows of zeros
            _kernels.scatter(self.X, start, docs.sizes, columns, values)
        else:
            self.pieces.append((values, columns, docs.sizes))
        return labels, docs.qids

    def _widen(self, width: int) -> None:
        """Make the dense ``X`` (created empty if need be) ``width`` columns wide, in place."""
        if self.X is None:
            self.X = np.zeros((0, width), dtype=self.dtype)
        elif width > self.X.shape[1]:
            n_rows, old = self.X.shape
            self.X.resize((n_rows, width), refcheck=False)  # the same bytes first, then zeros
            flat = self.X.reshape(-1)
            # move the rows to their new places, the last first: a block's rows land at or after where they
            # were, past the rows before it (blocks, so that numpy's copy of overlapping memory stays small)
            block = max(1, (1 << 20) // width)
            for end in range(n_rows, 0, -block):
                start = max(0, end - block)
                rows = flat[start * width:end * width].reshape(end - start, width)
                rows[:, :old] = flat[start * old:end * old].reshape(end - start, old)
                rows[:, old:] = 0

    @property
    def width(self) -> int:
        """Columns of X so far: ``n_features``, else one past the largest feature index read."""
        return self.n_features or (self.widest[0] if self.widest else 0)

    def width_cause(self) -> tuple[int | None, str]:
        """(line, reason) of X's width, for a refusal of its dense size: the line of the largest feature index,
        or ``n_features``."""
        if self.n_features is None:
            _, line, index = self.widest
            return line, f"feature index {index} makes X {self.width:,} columns wide"
        return None, f"n_features={self.n_features} makes X {self.width:,} columns wide"

    def _check_dense_size(self) -> None:
        """Refuse, before allocating it, a dense X of the documents so far that is above ``max_dense_gib``."""
        width = self.width
        gib = self.n_rows * width * self.dtype.itemsize / 2**30
        if self.max_dense_gib is None:
            return
        if self.max_dense_gib == "auto":
            memory = _memory_gib()
            fill = self.n_values / max(1, self.n_rows * width)
            if memory is not None and gib > memory:
                reason = f"more than the {memory:.1f} GiB of memory of this machine (max_dense_gib sets the limit)"
            elif gib > SPARSE_DENSE_GIB and fill < SPARSE_FILL:
                reason = (f"with {100 * fill:.2g}% of the cells in the file (over {SPARSE_DENSE_GIB:g} GiB, at least "
                          f"{100 * SPARSE_FILL:g}% must be; max_dense_gib sets the limit)")
            else:
                return
        elif gib > self.max_dense_gib:
            reason = f"more than max_dense_gib={self.max_dense_gib:g}"
        else:
            return
        line, cause = self.width_cause()
        raise DataFormatError(self.path, line, f"{cause}: pass dense=False for a sparse X; dense {self.dtype}, the "
                              f"{self.n_rows:,} document(s) read so far need {gib:.3g} GiB, {reason}")

    def _raise_at_entry(self, docs: Documents, k: int, message: str):
        """Raise ``message`` at the line of the ``k``-th stored feature value of a chunk."""
        raise DataFormatError(self.path, int(docs.lines[_row_of_entry(docs.indptr, k)]), message)

    def queries(self, row_qids: np.ndarray, n_docs: int, query_path: Path | None):
        """Offsets and per-query ids from the qid column, or from the query file if there is none."""
        if self.has_qid:
            try:
                offsets, qids = offsets_from_qids(row_qids)
            except NonContiguousQueryError as exc:
                raise DataFormatError(self.path, self._line_of_file_row(exc.row), f"qid {exc.qid} reappears "
                                      "after lines of another query; the lines of a query must be "
                                      "contiguous") from None
            if query_path is not None and not np.array_equal(_read_query_file(query_path, self.path, n_docs),
                                                             offsets):
                raise DataFormatError(query_path, None, f"the query sizes disagree with the qid: column of "
                                      f"{self.path}")
            return offsets, qids
        if query_path is None:
            looked = " and ".join(str(candidate) for candidate in query_file_candidates(self.path))
            raise DataFormatError(self.path, None, f"no qid: column and no query file giving the query sizes "
                                  f"(looked for {looked}): add qid:<id> to every line, or write the query sizes "
                                  "there, one per line, as LightGBM's .query files hold them (in Python, "
                                  "query_file=PATH names another file)")
        offsets = _read_query_file(query_path, self.path, n_docs)
        return offsets, np.arange(offsets.size - 1, dtype=np.int64)

    def _line_of_file_row(self, row: int) -> int:
        """Line number of the ``row``-th document of the file (reads the file again up to it)."""
        starts = np.cumsum([0, *self.chunk_rows])
        k = int(np.searchsorted(starts, row, side="right")) - 1
        with contextlib.closing(read_chunks(self.path)) as chunks:
            chunk, first_line = next(itertools.islice(chunks, k, None))
        return _line_of_row(chunk, first_line, row - int(starts[k]))


class Documents(NamedTuple):
    """The documents of a chunk, as the kernels read them: per document its label, query id (0 if none),
    whether it has a ``qid`` token, a flag (its line is to be read again in Python), its line number, the
    offset of its line in the chunk and its number of entries; per entry its index (as in the file) and
    value."""

    labels: np.ndarray
    qids: np.ndarray
    has_qid: np.ndarray
    flags: np.ndarray
    lines: np.ndarray
    line_starts: np.ndarray
    sizes: np.ndarray
    indices: np.ndarray
    values: np.ndarray

    @property
    def indptr(self) -> np.ndarray:
        indptr = np.zeros(self.sizes.size + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=indptr[1:])
        return indptr


def read_documents(chunk: bytes, first_line: int, dtype: np.dtype) -> Documents:
    """Read the documents of a chunk of whole lines whose first line is ``first_line``, in parts on threads.

    A first pass counts the line ends and colons of each part, bounds on its documents and entries; the
    second reads each part into its share of arrays that size, then the parts are moved together (see
    :mod:`plboost.data._svmlight_kernels`).
    """
    buf = np.frombuffer(chunk, dtype=np.uint8)
    n_parts = max(1, min(_PARTS_PER_THREAD * kernel_threads(), len(chunk) // _PART_BYTES))
    bounds = [0]
    for p in range(1, n_parts):
        at = chunk.find(b"\n", max(bounds[-1], len(chunk) * p // n_parts))
        bounds.append(len(chunk) if at < 0 else at + 1)
    bounds.append(len(chunk))
    parts = list(itertools.pairwise(bounds))
    counts = np.array(_run([(_kernels.count_bytes, (buf, start, end)) for start, end in parts]), dtype=np.int64)
    line_ends, row_room, entry_room = counts[:, 0], counts[:, 0] + 1, counts[:, 1]
    first_lines = first_line + np.cumsum(line_ends) - line_ends
    first_rows, first_entries = np.cumsum(row_room) - row_room, np.cumsum(entry_room) - entry_room
    rows, entries = int(row_room.sum()), int(entry_room.sum())
    docs = Documents(labels=np.empty(rows), qids=np.empty(rows, dtype=np.int64), has_qid=np.empty(rows, dtype=bool),
                      flags=np.empty(rows, dtype=bool), lines=np.empty(rows, dtype=np.int64),
                      line_starts=np.empty(rows, dtype=np.int64), sizes=np.empty(rows, dtype=np.int64),
                      indices=np.empty(entries, dtype=np.int32), values=np.empty(entries, dtype=dtype))
    calls = [(_kernels.fill_part, (buf, start, end, line, row, entry, entry + room, *docs))
             for (start, end), line, row, entry, room in zip(parts, first_lines.tolist(), first_rows.tolist(),
                                                             first_entries.tolist(), entry_room.tolist(), strict=True)]
    written = np.array(_run(calls), dtype=np.int64).reshape(n_parts, 2)
    return Documents(*_gather(docs[:7], first_rows, written[:, 0]), *_gather(docs[7:], first_entries, written[:, 1]))


def _gather(arrays, starts: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """The ``counts[p]`` items from ``starts[p]`` on of each part p, moved together to the front of each array
    (in place: a part only moves down)."""
    end = 0
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        if start != end:
            for array in arrays:
                array[end:end + count] = array[start:start + count]
        end += count
    return [array[:end] for array in arrays]


def _run(calls: list) -> list:
    """``function(*args)`` for each ``(function, args)`` of ``calls``, on up to Numba's number of threads
    (the kernels release the GIL)."""
    n_threads = min(kernel_threads(), len(calls))
    if n_threads <= 1:
        return [function(*args) for function, args in calls]
    with _POOLS_LOCK:  # one pool per process and size: a forked child inherits the dict, not the threads
        pool = _POOLS.get((os.getpid(), n_threads))
        if pool is None:
            pool = _POOLS[os.getpid(), n_threads] = ThreadPoolExecutor(n_threads, thread_name_prefix="plboost-read")
    return [future.result() for future in [pool.submit(function, *args) for function, args in calls]]


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _read_again(chunk: bytes, docs: Documents, indptr: np.ndarray, row: int) -> None:
    """Read a flagged document's line in Python, as scikit-learn would, into ``docs``; ValueError or
    OverflowError where scikit-learn refuses it."""
    start = int(docs.line_starts[row])
    end = chunk.find(b"\n", start)
    label, qid, indices, values = _read_line(_uncommented(chunk[start:end if end >= 0 else len(chunk)]).split())
    docs.labels[row] = label
    docs.qids[row] = 0 if qid is None else qid
    lo, hi = int(indptr[row]), int(indptr[row + 1])
    assert hi - lo == len(indices) and docs.has_qid[row] == (qid is not None)
    docs.indices[lo:hi] = indices
    with np.errstate(over="ignore"):  # to inf, as scikit-learn casts (inf is refused after)
        docs.values[lo:hi] = values


def _read_line(tokens: list[bytes]) -> tuple[float, int | None, list[int], list[float]]:
    """``(label, query id or None, indices, values)`` of a data line's tokens, read as scikit-learn's parser
    reads them (Python's ``float()`` and ``int()``, a C ``int`` index), with its errors."""
    label = float(tokens[0])
    features = tokens[1:]
    qid = None
    if features and features[0].startswith(b"qid"):
        _, value = features.pop(0).split(b":", 1)
        qid = int(np.int64(value))
    indices, values, previous = [], [], -1
    for token in features:
        index, value = token.split(b":", 1)
        index = int(index)
        if not -2**31 <= index < 2**31:
            raise OverflowError("value too large to convert to int")
        if index < 0:
            raise ValueError(f"Invalid index {index} in SVMlight/LibSVM data file.")
        if index <= previous:
            raise ValueError("Feature indices in SVMlight/LibSVM data file should be sorted and unique.")
        indices.append(index)
        values.append(float(value))
        previous = index
    return label, qid, indices, values


def read_chunks(path: Path, *, progress: bool = False) -> Iterator[tuple[bytes, int]]:
    """Yield ``(chunk, number of its first line)`` for chunks of whole lines of a plain or gzip file.

    Lines may end in LF, CRLF or CR, mixed; every chunk is given with LF endings. A UTF-8 byte-order mark at
    the start is skipped.
    """
    with open(path, "rb") as raw, tqdm(total=path.stat().st_size, desc=path.name, unit="B", unit_scale=True,
                                       unit_divisor=1024, leave=False, disable=not progress) as bar:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        line, first, pending = 1, True, []  # pending: the start of a line not ended yet
        while True:
            try:
                block = stream.read(max(CHUNK_BYTES, 4) if first else CHUNK_BYTES)  # a whole byte-order mark
            except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
                read = f"after line {line - 1} " if line > 1 else ""
                raise DataFormatError(path, None, f"cannot decompress {read}({exc}); is the file complete?") from None
            if first:
                _check_format(path, block, compressed)
                block, first = block[_bom_length(path, block):], False
            if not block:
                rest = b"".join(pending)
                if rest:
                    yield with_lf(rest), line
                return
            cut = max(block.rfind(b"\n"), block.rfind(b"\r"))
            if cut == len(block) - 1 and block.endswith(b"\r"):  # perhaps half of a CRLF: wait for the next byte
                cut = max(block.rfind(b"\n", 0, cut), block.rfind(b"\r", 0, cut))
            if cut < 0:
                pending.append(block)
                continue
            chunk = with_lf(b"".join([*pending, memoryview(block)[:cut + 1]]))  # one copy, not two
            pending, block = [block[cut + 1:]], None  # the block freed while the chunk is parsed
            yield chunk, line
            line, chunk = line + _line_ends(chunk), None  # the chunk freed before the next is read
            bar.update(raw.tell() - bar.n)


def _line_ends(chunk: bytes) -> int:
    """``chunk.count(b"\\n")``, counted by the kernels on threads (a few times faster)."""
    buf = np.frombuffer(chunk, dtype=np.uint8)
    n_parts = max(1, min(kernel_threads(), len(chunk) // _PART_BYTES))
    cuts = [len(chunk) * p // n_parts for p in range(n_parts + 1)]
    return sum(ends for ends, _ in _run([(_kernels.count_bytes, (buf, start, end))
                                          for start, end in itertools.pairwise(cuts)]))


def with_lf(chunk: bytes) -> bytes:
    """``chunk`` with its CRLF and CR line ends made LF."""
    return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in chunk else chunk


def _check_format(path: Path, head: bytes, compressed: bool) -> None:
    """Refuse a file whose first bytes say it is not SVMlight text (:data:`_OTHER_FORMATS`): plain or gzip text is
    read, and a file of another compression would otherwise fail on its first "label"."""
    for magic, what, fix in _OTHER_FORMATS:
        if magic.match(head):
            inside = " inside its gzip compression" if compressed else ""
            gzip_too = "" if what.startswith("a ") else " or recompress it with gzip"
            raise DataFormatError(path, None, f"the file is {what}{inside}, not SVMlight text; plboost reads plain or "
                                              f"gzip-compressed files: {fix}{gzip_too}")


def _bom_length(path: Path, head: bytes) -> int:
    """Length of the UTF-8 byte-order mark that starts ``head`` (0 if none); a UTF-16 or UTF-32 one is refused."""
    if head.startswith(UTF8_BOM):
        return len(UTF8_BOM)
    if head.startswith(_UTF16_BOMS):
        raise DataFormatError(path, None, "the file is UTF-16 or UTF-32 text (it starts with a byte-order mark); "
                                          "save it as ASCII or UTF-8, e.g. with iconv -f UTF-16 -t UTF-8")
    return 0


def _written_value(chunk: bytes, first_line: int, line: int, index: int) -> float | None:
    """The value written for feature ``index`` on ``line`` of ``chunk``, read as float64 (None if not found)."""
    lines = chunk.split(b"\n")
    text = lines[line - first_line] if 0 <= line - first_line < len(lines) else b""
    for token in _uncommented(text).split()[1:]:
        name, _, value = token.partition(b":")
        if name == str(index).encode():
            try:
                return float(value)
            except ValueError:
                return None
    return None


def _data_lines(chunk: bytes, first_line: int) -> Iterator[tuple[int, list[bytes]]]:
    """Yield ``(line number, tokens)`` for each line of ``chunk`` that holds a document."""
    for line, text in enumerate(chunk.split(b"\n"), first_line):
        tokens = _uncommented(text).split()
        if tokens:
            yield line, tokens


def _uncommented(text: bytes) -> bytes:
    """A line without its comment, as scikit-learn cuts it: at the first ``#`` unless a NUL byte comes first
    (it looks for ``#`` with C's ``strchr``, which stops at NUL)."""
    hash_at = text.find(b"#")
    return text if hash_at < 0 or b"\0" in text[:hash_at] else text[:hash_at]


def _line_of_row(chunk: bytes, first_line: int, row: int) -> int:
    return next(itertools.islice(_data_lines(chunk, first_line), row, None))[0]


def _row_of_entry(indptr: np.ndarray, k: int) -> int:
    """Row of the ``k``-th stored value of a CSR matrix."""
    return int(np.searchsorted(indptr, k, side="right")) - 1


def _memory_gib() -> float | None:
    """Physical memory of this machine in GiB, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (AttributeError, OSError, ValueError):
        return None


def _has_qid(tokens: list[bytes]) -> bool:
    # scikit-learn's rule: a query id is the token right after the label, if it starts with "qid"
    return len(tokens) > 1 and tokens[1].startswith(b"qid")


def _syntax_problem(tokens: list[bytes]) -> str | None:
    """What makes a data line unreadable to scikit-learn, or None if it is well-formed."""
    label, *features = tokens
    try:
        float(label)
    except ValueError:
        if b":" in label:
            return f"missing label: the line starts with {_show(label)}"
        if b"," in label:
            return (f"label {_show(label)} is not a number: the line is comma-separated, as a CSV table's are, and a "
                    "table is read as one by its name only: name the file .csv (or .csv.gz)")
        return f"label {_show(label)} is not a number"
    if _has_qid(tokens):
        name, _, value = features.pop(0).partition(b":")
        if name != b"qid" or not _is_int64(value):
            return f"malformed query id {_show(tokens[1])}; expected qid:<integer>"
    previous = -1
    for token in features:
        index, colon, value = token.partition(b":")
        if index == b"qid":
            return f"{_show(token)} must come right after the label"
        if not colon:
            return f"malformed feature {_show(token)}; expected index:value"
        try:
            j = int(index)
        except ValueError:
            return f"feature index {_show(index)} in {_show(token)} is not an integer"
        if not 0 <= j < 2**31:
            return f"feature index {j} in {_show(token)} is out of range"
        try:
            float(value)
        except ValueError:
            return f"feature value {_show(value)} in {_show(token)} is not a number"
        if j <= previous:
            return f"feature index {j} follows index {previous}; indices must be strictly increasing"
        previous = j
    return None


def _is_int64(text: bytes) -> bool:
    try:
        return -2**63 <= int(text) < 2**63
    except ValueError:
        return False


def _show(token: bytes) -> str:
    """``token`` quoted for a message; a long one cut to 60 characters, with its length."""
    if len(token) <= _SHOWN_BYTES:
        return repr(token.decode("utf-8", "replace"))
    return f"{token[:_SHOWN_BYTES - 3].decode('utf-8', 'replace') + '...'!r} ({len(token):,} bytes)"


def _cut(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters (for messages quoting other libraries' messages)."""
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text):,} characters)"


def no_features_message(n_docs: int) -> str:
    """Why a file of documents without any feature is refused (both loaders say it alike)."""
    return (f"no features: its {n_docs} line(s) hold a label and qid: only, and a model needs at least one feature "
            "(or pass n_features to read them as zeros)")


def check_is_file(path: Path, what: str) -> None:
    """Refuse a path that is not a regular file, saying what it is."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"no such {what}", str(path)) from None
    except NotADirectoryError:  # a part of the path is a file
        raise FileNotFoundError(errno.ENOENT, f"no such {what}", str(path)) from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"is a directory, not a {what}", str(path))
    if not stat.S_ISREG(mode):
        raise DataFormatError(path, None, f"not a regular file (a pipe, a device or a socket); give a {what}")


def checked_load_arguments(path, n_features, dtype) -> tuple[Path, np.dtype]:
    """The checks both loaders make first: ``path`` a regular file (see :func:`check_is_file`), ``dtype`` float32
    or float64, ``n_features`` a positive integer or None. Returns the path and the dtype."""
    path = Path(path)
    check_is_file(path, "ranking data file")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    check(n_features, (Integer(low=1), None), "n_features")
    return path, dtype


def query_file_candidates(path) -> list[Path]:
    """The query files :func:`load_svmlight` looks for beside ``path`` (``query_file="auto"``), in order, whether
    or not they exist: ``<name>.query`` and, for ``<stem>.gz``, ``<stem>.query``."""
    path = Path(path)
    names = [path.name + ".query"] + ([path.name[:-3] + ".query"] if path.name.endswith(".gz") else [])
    return [path.with_name(name) for name in names]


def find_query_file(path: Path, query_file) -> Path | None:
    """The query file to read for ``path`` under the ``query_file`` option (see :func:`load_svmlight`)."""
    if query_file is None:
        return None
    if isinstance(query_file, str) and query_file == "auto":
        for candidate in query_file_candidates(path):
            if candidate.exists():
                check_is_file(candidate, "query file")  # a directory or a FIFO there is said, not passed over
                return candidate
        return None
    query_path = Path(query_file)
    check_is_file(query_path, "query file")
    return query_path


def _read_query_file(query_path: Path, data_path: Path, n_docs: int) -> np.ndarray:
    """Offsets from a LightGBM-style query file (one size per line; blank lines are skipped).

    Lines may end in LF, CRLF or CR, and a UTF-8 byte-order mark at the start is skipped, as in data files.
    """
    sizes = []
    with open(query_path, "rb") as raw:
        raw.seek(_bom_length(query_path, raw.read(4)))
        # latin-1 maps bytes to characters one to one: universal newlines, and the bytes back for messages
        lines = io.TextIOWrapper(raw, encoding="latin-1", newline=None)
        for line, text in enumerate(lines, 1):
            text = text.encode("latin-1").strip()
            if not text:
                continue
            try:
                size = int(text)
            except ValueError:
                raise DataFormatError(query_path, line, f"query size {_show(text)} is not an integer") from None
            if size <= 0:
                raise DataFormatError(query_path, line, f"query size {size} is not positive")
            sizes.append(size)
    if sum(sizes) != n_docs:
        raise DataFormatError(query_path, None, f"the query sizes sum to {sum(sizes)}, but {data_path} has "
                              f"{n_docs} data lines")
    return offsets_from_sizes(sizes, name=str(query_path))
