"""Ranking data larger than memory: SVMlight files parsed chunk by chunk into dense chunk files on disk.

:func:`load_out_of_core` reads a file as :func:`plboost.data.load_svmlight` does (the same chunks of 16 MiB of
text, the same checks, the same errors with file and line, the same float32 values bit for bit), but writes
the dense rows of each chunk to its own ``.npy`` file instead of growing one matrix in memory: the full
dense ``X`` never exists in memory. Labels, query offsets and query ids (a few bytes per document) stay in
memory, as the objectives need them. With ``cache=True`` the chunk files are a cache entry
(:mod:`plboost.data.cache`), so a second load parses nothing; otherwise they live in a private scratch
directory, deleted when the data are no longer referenced.

:class:`OutOfCoreData` reads the chunk files back in batches of whole queries whose dense rows take at most
``memory_budget_bytes`` (a query larger than that is a batch of its own), and hands them to the engines:
:meth:`~OutOfCoreData.to_lightgbm` builds a ``lightgbm.Dataset`` from a ``lightgbm.Sequence`` (LightGBM
samples rows for its bins, then takes the rows in batches and keeps one byte per feature and row), and
:meth:`~OutOfCoreData.to_xgboost` an ``xgboost.ExtMemQuantileDMatrix`` from an ``xgboost.DataIter`` (XGBoost
keeps its quantised pages on disk). ``docs/out_of_core.md`` has the memory model and what equals in-memory
training.

:func:`choose_out_of_core` decides, for ``out_of_core=None``, whether files fit in memory, from an estimate
of their dense size made from the first chunk of each file; :mod:`plboost.data.splits` loads the files of a split
together with the loader asked or chosen.
"""

from __future__ import annotations

import collections
import contextlib
import io
import numbers
import shutil
import sys
import tempfile
import threading
import warnings
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._constraints import Integer, check
from ..errors import InputTypeError
from .._queries import DEFAULT_MAX_LABEL, check_labels, offsets_from_boundaries
from . import _svmlight_kernels as _kernels
from . import cache as _cache
from . import svmlight_parser
from .ranking_data import RankingData
from .svmlight_parser import DataFormatError

#: default largest batch of dense rows handed to an engine at once (and written at once when parsing)
DEFAULT_MEMORY_BUDGET = 256 << 20
#: largest batch of rows that is only streamed through, whatever the budget: the rows LightGBM bins into its
#: Dataset and the rows scored (:meth:`OutOfCoreData.row_ranges`). Neither is faster in larger batches
#: (docs/out_of_core.md), so a larger batch would only raise the peak.
#: XGBoost's pages, which cost time per page, take the whole budget.
STREAM_BATCH_BYTES = 16 << 20
#: in-memory training holds the dense X and an engine's copy of it (LightGBM's bins take a quarter of X,
#: XGBoost's DMatrix twice X): ``out_of_core=None`` reads files out of core when this many times their dense
#: size exceeds the memory available
IN_MEMORY_FACTOR = 2.0
_CHUNK_PREFIX = "X_"
_OPEN_FILES = 16  # chunk files kept open by a reader
_READ_MAX = 1 << 30  # bytes per read call (Linux reads at most 2 GiB - 4 KiB at once)


# --------------------------------------------------------------------------------------------------
# Memory: how much is available, how much a file would take


def available_memory_bytes() -> int | None:
    """Memory available to a new allocation without swapping, in bytes: psutil's ``available`` (Linux's
    MemAvailable), else ``/proc/meminfo``; None where neither says."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # psutil missing or failing: read the kernel's own estimate
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class DenseEstimate:
    """The dense size of a file's ``X``: ``n_docs`` documents (counted, or estimated from the first chunk's
    bytes per line when ``exact`` is False) by ``n_features`` columns (the largest index of the first chunk,
    unless given)."""

    path: Path
    n_docs: int
    n_features: int
    itemsize: int
    exact: bool

    @property
    def nbytes(self) -> int:
        return self.n_docs * self.n_features * self.itemsize


def estimate_dense(path, *, n_features: int | None = None, dtype=np.float32, zero_based: bool = False) -> DenseEstimate:
    """Estimate the dense size of the SVMlight file ``path`` before parsing it: the first chunk (16 MiB of
    text) is read by the compiled kernels, its documents counted and its largest feature index taken; the
    number of documents of a larger file is scaled from the bytes (compressed bytes for ``.gz``) per document
    of that chunk. The estimate can be low for a file whose later lines are longer or whose later features
    have larger indices; a malformed chunk still gives one (the loader reports what is wrong)."""
    path = Path(path)
    svmlight_parser.check_is_file(path, "ranking data file")  # a FIFO would block the read below for ever
    itemsize = np.dtype(dtype).itemsize
    size = path.stat().st_size
    head, consumed, at_end = _head(path, svmlight_parser.CHUNK_BYTES)
    if head.startswith(svmlight_parser.UTF8_BOM):
        head = head[len(svmlight_parser.UTF8_BOM):]
    text = head
    if not at_end:
        cut = max(head.rfind(b"\n"), head.rfind(b"\r"))
        text = head[:cut + 1] if cut >= 0 else head
    docs = svmlight_parser.read_documents(svmlight_parser.with_lf(text), 1, np.dtype(dtype))
    rows = int(docs.labels.size)
    width = n_features or (int(docs.indices.max()) + int(zero_based) if docs.indices.size else 0)
    if at_end:
        return DenseEstimate(path, rows, width, itemsize, True)
    read = max(1, consumed * len(text) // max(1, len(head)))  # file bytes behind the whole lines read
    return DenseEstimate(path, max(rows, round(rows * size / read)), width, itemsize, False)


def _head(path: Path, limit: int) -> tuple[bytes, int, bool]:
    """The first ``limit`` bytes of text of a plain or gzip file, the bytes of the file they took (compressed
    bytes for gzip, counted exactly), and whether they are the whole text. A damaged gzip stream ends the
    text where it breaks."""
    with open(path, "rb") as raw:
        if raw.read(2) != svmlight_parser.GZIP_MAGIC:
            raw.seek(0)
            head = raw.read(limit)
            return head, len(head), not raw.read(1)
        raw.seek(0)
        stream = zlib.decompressobj(wbits=31)
        parts, produced, fed, tail, exhausted = [], 0, 0, b"", False
        try:
            while produced < limit and not stream.eof:
                if not tail:
                    tail = raw.read(1 << 16)
                    fed += len(tail)
                    if not tail:
                        exhausted = True  # a truncated stream: its text so far is all there is
                        break
                piece = stream.decompress(tail, limit - produced)
                tail = stream.unconsumed_tail
                parts.append(piece)
                produced += len(piece)
        except zlib.error:  # what was read is the estimate
            return b"".join(parts), fed, True
        at_end = exhausted or (stream.eof and not stream.unused_data and not raw.read(1))
        return b"".join(parts), fed - len(tail) - len(stream.unused_data), at_end


def choose_out_of_core(paths, *, n_features: int | None = None, dtype=np.float32, zero_based: bool = False,
                       available: int | None = None, log=None) -> bool:
    """Whether files used together (train, validation, test; None entries are skipped) should be read out of
    core: when :data:`IN_MEMORY_FACTOR` times their estimated dense size (:func:`estimate_dense`, all at the
    width of the widest, as :func:`plboost.data.load_splits` aligns them) exceeds the memory available
    (``available`` bytes, by default :func:`available_memory_bytes`). Says so in one line through ``log``
    (default: standard error) when it chooses out of core. Where the memory available is unknown, in memory."""
    paths = [Path(p) for p in paths if p is not None]
    if available is None:
        available = available_memory_bytes()
    if available is None or not paths:
        return False
    estimates = []
    for path in paths:
        try:
            estimates.append(estimate_dense(path, n_features=n_features, dtype=dtype, zero_based=zero_based))
        except OSError:  # a missing file: the loader says what is wrong
            return False
    width = max(e.n_features for e in estimates)
    dense = sum(e.n_docs for e in estimates) * width * np.dtype(dtype).itemsize
    if IN_MEMORY_FACTOR * dense <= available:
        return False
    exact = "" if all(e.exact for e in estimates) else "about "
    names = ", ".join(p.name for p in paths)
    line = (f"plboost: {names}: {exact}{dense / 2**30:.3g} GiB as a dense {np.dtype(dtype)} matrix, which with the "
            f"engine's copy would not fit the {available / 2**30:.3g} GiB of memory available: reading out of core "
            "(chunks on disk; force either way with --in-memory/--out-of-core or out_of_core=False/True)")
    (log or (lambda text: print(text, file=sys.stderr, flush=True)))(line)
    return True


# --------------------------------------------------------------------------------------------------
# Chunk files on disk


@dataclass(frozen=True)
class _Chunk:
    """The dense rows of one chunk of the file: ``rows`` x ``width`` values of the dataset's dtype from byte
    ``offset`` of ``path`` on (C order); ``width`` is the widest index seen up to this chunk."""

    path: Path
    rows: int
    width: int
    offset: int


class _Storage:
    """The chunk files of one parse, and the files open on them; a private directory is deleted when no data
    refer to it any more (a cache entry is kept)."""

    def __init__(self, directory: Path, *, private: bool):
        self.directory, self.private = directory, private
        self._files: collections.OrderedDict[Path, io.FileIO] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _Storage._close, self._files, directory if private else None)

    @staticmethod
    def _close(files: dict, directory: Path | None) -> None:
        for f in files.values():
            with contextlib.suppress(OSError):
                f.close()
        files.clear()
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def read_into(self, chunk: _Chunk, first_row: int, out: np.ndarray) -> None:
        """Read rows ``first_row:first_row + len(out)`` of ``chunk`` into ``out`` (C-contiguous, chunk width):
        plain reads into the array, not a memory map, so that the pages read are not the process's memory."""
        view = memoryview(out).cast("B")
        with self._lock:
            f = self._file(chunk.path)
            f.seek(chunk.offset + first_row * chunk.width * out.itemsize)
            done = 0
            while done < view.nbytes:
                n = f.readinto(view[done:done + _READ_MAX])
                if not n:
                    raise OSError(f"{chunk.path}: the chunk file ends early (was the cache cleared or the file "
                                  "truncated while the data were in use?)")
                done += n

    def _file(self, path: Path) -> io.FileIO:
        f = self._files.get(path)
        if f is not None:
            self._files.move_to_end(path)
            return f
        if len(self._files) >= _OPEN_FILES:
            self._files.popitem(last=False)[1].close()
        f = self._files[path] = io.FileIO(path, "r")
        return f


def _write_chunk(path: Path, sizes: np.ndarray, columns: np.ndarray, values: np.ndarray, width: int, dtype: np.dtype,
                 slice_rows: int) -> _Chunk:
    """Write the documents of a parsed chunk (CSR pieces) as a dense ``.npy`` file, ``slice_rows`` rows at a
    time (each made as the in-memory loader makes its rows: zeros, then 0 + v at the given cells)."""
    n_rows = int(sizes.size)
    ends = np.cumsum(sizes)
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                                                 "shape": (n_rows, width)})
        offset = f.tell()
        block = None
        for start in range(0, n_rows, slice_rows):
            stop = min(n_rows, start + slice_rows)
            lo, hi = (int(ends[start - 1]) if start else 0), int(ends[stop - 1])
            if block is None or block.shape[0] != stop - start:
                block = np.zeros((stop - start, width), dtype=dtype)
            else:
                block.fill(0)
            _kernels.scatter(block, 0, sizes[start:stop], columns[lo:hi], values[lo:hi])
            if block.size:  # a chunk of no feature yet (later chunks may widen it) holds no bytes
                f.write(memoryview(block).cast("B"))
    return _Chunk(path, n_rows, width, offset)


# --------------------------------------------------------------------------------------------------
# The data


class OutOfCoreData:
    """A ranking dataset whose features stay on disk, in dense chunk files (see the module docstring).

    It has the attributes of :class:`~plboost.data.RankingData` but ``X``: ``labels``, ``qids``, ``offsets``,
    ``group_sizes``, ``n_docs``, ``n_queries``, ``n_features``, ``source``. Rows are read with :meth:`rows`
    or, by whole queries, with :meth:`batches`; :meth:`to_lightgbm` and :meth:`to_xgboost` give the engines'
    datasets, built batch by batch.

    Attributes
    ----------
    memory_budget_bytes : int
        Largest batch of dense rows read at once (:meth:`batches`, the engines' batches), in bytes.
    dtype : numpy dtype
        Type of the features (float32 by default).
    """

    def __init__(self, storage: _Storage, chunks: list[_Chunk], labels, qids, offsets, *, n_features: int, dtype,
                 source=None, memory_budget_bytes: int | None = None):
        self._storage, self._chunks = storage, list(chunks)
        self._starts = np.concatenate([[0], np.cumsum([c.rows for c in self._chunks], dtype=np.int64)])
        self.labels = np.asarray(labels, dtype=np.float64)
        self.offsets = offsets_from_boundaries(offsets, int(self._starts[-1]), name="offsets")
        self.qids = np.asarray(qids)
        if self.labels.shape != (int(self._starts[-1]),) or self.qids.shape != (self.offsets.size - 1,):
            raise ValueError(f"{self.labels.size} labels and {self.qids.size} query ids for {self._starts[-1]} rows "
                             f"and {self.offsets.size - 1} queries")
        self.dtype = np.dtype(dtype)
        self._n_features = int(n_features)
        self.source = None if source is None else Path(source)
        self.memory_budget_bytes = checked_memory_budget(memory_budget_bytes)

    # --- what RankingData has

    @property
    def n_docs(self) -> int:
        return int(self._starts[-1])

    @property
    def n_queries(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_features(self) -> int:
        return self._n_features

    @property
    def group_sizes(self) -> np.ndarray:
        """Number of documents of each query (LightGBM's ``group``), int64."""
        return np.diff(self.offsets)

    @property
    def X(self):
        raise AttributeError("out-of-core data hold no X in memory: read rows with .rows(start, stop) or, by whole "
                             "queries, .batches(); .to_ranking_data() reads them all into memory")

    @property
    def nbytes(self) -> int:
        """Bytes of the dense X, were it in memory."""
        return self.n_docs * self.n_features * self.dtype.itemsize

    @property
    def directory(self) -> Path:
        """Where the chunk files are (a cache entry, or a private directory deleted with the data)."""
        return self._storage.directory

    @property
    def n_chunks(self) -> int:
        return len(self._chunks)

    def __repr__(self) -> str:
        return (f"OutOfCoreData(n_docs={self.n_docs}, n_queries={self.n_queries}, n_features={self.n_features}, "
                f"X=dense {self.dtype} in {self.n_chunks} chunk file(s) ({self.nbytes / 2**20:.1f} MiB) in "
                f"{str(self.directory)!r}, source={str(self.source) if self.source else None!r})")

    # --- reading rows

    @property
    def batch_rows(self) -> int:
        """Rows of dense features that fit the memory budget (at least 1)."""
        return max(1, self.memory_budget_bytes // max(1, self.n_features * self.dtype.itemsize))

    def stream_batch_rows(self, max_bytes: int | None = None, *, extra_bytes_per_row: int = 0) -> int:
        """Rows of a batch that is only streamed through (LightGBM's binning of the rows; scoring, by
        :meth:`row_ranges`): ``min(max_bytes, STREAM_BATCH_BYTES)`` bytes (``max_bytes`` defaults to
        :attr:`memory_budget_bytes`) over the bytes of a row of X plus ``extra_bytes_per_row`` (what the
        consumer holds per row, e.g. an engine's float64 score), at least 1."""
        budget = self.memory_budget_bytes if max_bytes is None else checked_memory_budget(max_bytes)
        row_bytes = self.n_features * self.dtype.itemsize + max(0, int(extra_bytes_per_row))
        return max(1, min(budget, STREAM_BATCH_BYTES) // max(1, row_bytes))

    def row_ranges(self, max_bytes: int | None = None, *, extra_bytes_per_row: int = 0) -> list[tuple[int, int]]:
        """Ranges ``(start, stop)`` of rows, in order and covering every document, of :meth:`stream_batch_rows`
        rows each (the last may be shorter). Rows, not whole queries: for what reads each row alone, such
        as scoring, where a query larger than the budget need not be read at once."""
        rows = self.stream_batch_rows(max_bytes, extra_bytes_per_row=extra_bytes_per_row)
        return [(start, min(self.n_docs, start + rows)) for start in range(0, self.n_docs, rows)]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of X, read from the chunk files: a new C-contiguous array of ``n_features``
        columns (a chunk read before a wider index appeared gets zero columns; a chunk wider than
        ``n_features``, after :meth:`with_width` narrowed the data, is cut)."""
        if not 0 <= start <= stop <= self.n_docs:
            raise IndexError(f"rows {start}:{stop} out of range for {self.n_docs} documents")
        width = self.n_features
        out = np.empty((stop - start, width), dtype=self.dtype)
        k = int(np.searchsorted(self._starts, start, side="right")) - 1
        row = start
        while row < stop:
            chunk, first = self._chunks[k], int(self._starts[k])
            a, b = row - first, min(stop, first + chunk.rows) - first
            target = out[row - start:row - start + b - a]
            if chunk.width == width:
                self._storage.read_into(chunk, a, target)
            else:
                buffer = np.empty((b - a, chunk.width), dtype=self.dtype)
                self._storage.read_into(chunk, a, buffer)
                shared = min(width, chunk.width)
                target[:, :shared] = buffer[:, :shared]
                target[:, shared:] = 0
            row += b - a
            k += 1
        return out

    def query_batches(self, max_bytes: int | None = None) -> list[tuple[int, int]]:
        """Ranges ``(first query, end query)`` of whole queries whose dense rows take at most ``max_bytes``
        (default :attr:`memory_budget_bytes`) each; a query larger than that is a range of its own."""
        rows = self.batch_rows if max_bytes is None else max(1, int(max_bytes) // max(1, self.n_features *
                                                                                       self.dtype.itemsize))
        ranges, first = [], 0
        offsets = self.offsets
        while first < self.n_queries:
            # the last query that ends within `rows` of the batch's start (at least one query)
            end = int(np.searchsorted(offsets, offsets[first] + rows, side="right")) - 1
            end = min(self.n_queries, max(end, first + 1))
            ranges.append((first, end))
            first = end
        return ranges

    def batches(self, max_bytes: int | None = None) -> Iterator[RankingData]:
        """The data as :class:`~plboost.data.RankingData` batches of whole queries, in order (see
        :meth:`query_batches`); each batch's X is read from disk when the batch is reached."""
        for first, end in self.query_batches(max_bytes):
            start, stop = int(self.offsets[first]), int(self.offsets[end])
            yield RankingData(self.rows(start, stop), self.labels[start:stop], self.qids[first:end],
                              self.offsets[first:end + 1] - start, self.source)

    def to_ranking_data(self) -> RankingData:
        """All of it in memory, as :func:`plboost.data.load_svmlight` would have read it."""
        return RankingData(self.rows(0, self.n_docs), self.labels, self.qids, self.offsets, self.source)

    # --- widths

    def widen(self, n_features: int) -> OutOfCoreData:
        """The same data with zero columns appended up to ``n_features`` (as :meth:`RankingData.widen`)."""
        if n_features < self.n_features:
            raise ValueError(f"cannot narrow {self.n_features} features to {n_features}")
        return self if n_features == self.n_features else self.with_width(n_features)

    def with_width(self, n_features: int) -> OutOfCoreData:
        """The same data read ``n_features`` columns wide: zero columns appended, or the last ones cut."""
        n_features = check(n_features, Integer(low=0), "n_features", "OutOfCoreData.with_width")
        return OutOfCoreData(self._storage, self._chunks, self.labels, self.qids, self.offsets,
                             n_features=int(n_features), dtype=self.dtype, source=self.source,
                             memory_budget_bytes=self.memory_budget_bytes)

    # --- the engines

    def to_lightgbm(self, reference=None, **kwargs):
        """A ``lightgbm.Dataset`` with labels and query sizes set, built from a ``lightgbm.Sequence`` over the
        chunk files: LightGBM samples rows for its bin boundaries (``bin_construct_sample_cnt``, 200,000 by
        default), then takes the rows in batches of :meth:`stream_batch_rows`; the constructed Dataset holds the
        binned features (about one byte per feature and row).

        For a training set (no ``reference``), ``data_random_seed`` is set to what LightGBM derives from
        ``seed`` when ``params`` give a seed and no ``data_random_seed``: LightGBM's Python sampling of a
        Sequence sees only the Dataset's parameters, while its C++ sampling of a matrix derives the data seed
        from ``seed``; so both sample the same rows and build the same bins (validation data take the
        reference's). ``kwargs`` go to ``lightgbm.Dataset`` (``params``, ``free_raw_data``, ...).
        """
        import lightgbm as lgb

        params = dict(kwargs.pop("params", None) or {})
        if reference is None:
            params.update(_lightgbm_data_seed(params))
        elif "data_random_seed" in (reference.params or {}):  # the reference's parameters, or LightGBM warns
            params.setdefault("data_random_seed", reference.params["data_random_seed"])
        return lgb.Dataset(_lightgbm_rows_class()(self), label=self.labels, group=self.group_sizes,
                           reference=reference, params=params, **kwargs)

    def to_xgboost(self, *, ref=None, max_bin: int | None = None, external_memory: bool = True, cache_prefix=None,
                   **kwargs):
        """An ``xgboost.ExtMemQuantileDMatrix`` fed batch by batch of whole queries (:meth:`batches`, with
        ``qid`` set to the query's position, so ``group_ptr`` equals ``offsets``): XGBoost sketches the
        feature quantiles over the batches, then writes its quantised pages to disk and reads them back at
        each iteration. ``max_bin`` must be the booster's (256 by default, XGBoost's); ``ref``, the training
        matrix for validation data (its quantiles are used). The pages go to ``cache_prefix``, by default a
        private scratch directory removed when the matrix is deleted. ``kwargs`` go to
        ``ExtMemQuantileDMatrix`` (``missing`` defaults to NaN, as in memory).

        With ``external_memory=False``, an ``xgboost.QuantileDMatrix`` from the same batches instead: the
        quantised matrix (one byte per feature and row, as LightGBM's) stays in memory, and each iteration is
        as fast as in memory, or faster (``docs/out_of_core.md``).
        """
        import xgboost as xgb

        kwargs.setdefault("missing", np.nan)
        if not external_memory:
            return xgb.QuantileDMatrix(_xgboost_batches_class()(self, None), ref=ref, max_bin=max_bin, **kwargs)
        directory = None
        if cache_prefix is None:
            directory = _scratch("xgboost-")
            cache_prefix = str(directory / "pages")
        iterator = _xgboost_batches_class()(self, str(cache_prefix))
        try:
            matrix = xgb.ExtMemQuantileDMatrix(iterator, ref=ref, max_bin=max_bin, **kwargs)
        except BaseException:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)
            raise
        if directory is not None:  # runs after the matrix's __del__ has freed XGBoost's handle
            # not at exit, where it could run before XGBoost removes its files (which then warns): a directory
            # left by a process that ended is removed by the next scratch_directory()
            weakref.finalize(matrix, shutil.rmtree, directory, True).atexit = False
        return matrix


def checked_memory_budget(budget) -> int:
    """``memory_budget_bytes`` as a positive int (``DEFAULT_MEMORY_BUDGET`` for None), or a ValueError naming it."""
    if budget is None:
        return DEFAULT_MEMORY_BUDGET
    return check(budget, Integer(low=1), "memory_budget_bytes")


def _lightgbm_data_seed(params: dict) -> dict:
    """``{"data_random_seed": s}`` where ``params`` give a seed (under any alias) and no data seed: ``s`` is
    what LightGBM's ``Config::Set`` derives from the seed (the first ``NextShort(0, 32767)`` of its
    ``Random(seed)``, a linear congruential generator)."""
    from lightgbm.basic import _ConfigAliases

    if any(key in params for key in _ConfigAliases.get("data_random_seed")):
        return {}
    seeds = [params[key] for key in _ConfigAliases.get("seed") if key in params]
    if not seeds or seeds[-1] is None:
        return {}
    try:
        seed = int(seeds[-1])
    except (TypeError, ValueError):  # LightGBM refuses it when it reads the parameters
        return {}
    x = (214013 * (seed & 0xFFFFFFFF) + 2531011) & 0xFFFFFFFF
    return {"data_random_seed": ((x >> 16) & 0x7FFF) % 32767}


_CLASSES: dict[str, type] = {}


def _lightgbm_rows_class() -> type:
    """A ``lightgbm.Sequence`` over the rows of :class:`OutOfCoreData` (made when LightGBM is first needed)."""
    if "Rows" not in _CLASSES:
        import lightgbm as lgb

        class Rows(lgb.Sequence):
            """Rows of out-of-core data for LightGBM: a row (float64, as LightGBM's sampling needs) or a range of
            rows (the data's dtype) at a time."""

            def __init__(self, data: OutOfCoreData):
                # binned batch by batch, then freed: larger batches are no faster (STREAM_BATCH_BYTES)
                self.data, self.batch_size = data, data.stream_batch_rows()

            def __len__(self) -> int:
                return self.data.n_docs

            def __getitem__(self, index):
                n = self.data.n_docs
                if isinstance(index, numbers.Integral):
                    i = int(index) + (n if index < 0 else 0)
                    if not 0 <= i < n:
                        raise IndexError(f"row {index} out of range for {n} documents")
                    return self.data.rows(i, i + 1)[0].astype(np.float64)
                if isinstance(index, slice):
                    start, stop, step = index.indices(n)
                    if step == 1:
                        return self.data.rows(start, max(start, stop))
                    index = list(range(start, stop, step))
                if isinstance(index, list):  # Dataset.subset
                    return np.stack([self.data.rows(i, i + 1)[0] for i in index]) if index else \
                        np.empty((0, self.data.n_features), dtype=self.data.dtype)
                raise InputTypeError(f"rows are taken by integer, slice or list, not {type(index).__name__}")

        _CLASSES["Rows"] = Rows
    return _CLASSES["Rows"]


def _xgboost_batches_class() -> type:
    """An ``xgboost.DataIter`` over the batches of :class:`OutOfCoreData` (made when XGBoost is first needed)."""
    if "Batches" not in _CLASSES:
        import xgboost as xgb

        class Batches(xgb.DataIter):
            """Batches of whole queries of out-of-core data for XGBoost, each with its labels and query ids."""

            def __init__(self, data: OutOfCoreData, cache_prefix: str | None):
                self.data, self.ranges, self.position = data, data.query_batches(), 0
                super().__init__(cache_prefix=cache_prefix)

            def next(self, input_data) -> bool:
                if self.position == len(self.ranges):
                    return False
                first, end = self.ranges[self.position]
                self.position += 1
                start, stop = int(self.data.offsets[first]), int(self.data.offsets[end])
                qid = np.repeat(np.arange(first, end, dtype=np.int64), self.data.group_sizes[first:end])
                input_data(data=self.data.rows(start, stop), label=self.data.labels[start:stop], qid=qid)
                return True

            def reset(self) -> None:
                self.position = 0

        _CLASSES["Batches"] = Batches
    return _CLASSES["Batches"]


def _scratch(prefix: str) -> Path:
    """A private scratch directory beside the cache (see :func:`plboost.data.cache.scratch_directory`), or in
    the system's temporary directory (with a warning) where the cache directory cannot be written."""
    try:
        return _cache.scratch_directory(prefix)
    except OSError as exc:
        directory = Path(tempfile.mkdtemp(prefix=f"plboost-{prefix}"))
        warnings.warn(f"cannot create a scratch directory in {_cache.cache_dir()} ({exc}); out-of-core "
                      f"files go to {directory}", stacklevel=3)
        return directory


# --------------------------------------------------------------------------------------------------
# Loading


def load_out_of_core(path, *, n_features: int | None = None, dtype=np.float32, zero_based: bool = False,
                     max_label: int | None = DEFAULT_MAX_LABEL, query_file="auto", cache: bool = True,
                     progress: bool = False, memory_budget_bytes: int | None = None) -> OutOfCoreData:
    """Read a ranking file in SVMlight/LETOR format chunk by chunk into dense chunk files on disk.

    The arguments are those of :func:`plboost.data.load_svmlight` (X is dense, of ``dtype``); the checks and
    errors are the same, and :meth:`OutOfCoreData.to_ranking_data` gives the same arrays. In memory at once:
    one chunk of 16 MiB of text and its parsed values, at most ``memory_budget_bytes`` of dense rows while a
    chunk file is written, and the labels, query ids (per document while parsing) and offsets.

    Parameters
    ----------
    cache : bool, default=True
        Keep the chunk files as a cache entry (``$PLBOOST_CACHE_DIR/svmlight``, one ``X_<k>.npy`` per chunk
        beside ``labels.npy``, ``qids.npy`` and ``offsets.npy``), and reuse it: a second load parses nothing.
        Without the cache, the chunk files go to a private scratch directory under the cache directory, deleted
        when the data are no longer referenced.
    memory_budget_bytes : int, optional
        Largest batch of dense rows read or written at once, in bytes (default 256 MiB); batches hold whole
        queries, so a query larger than the budget is read alone.

    Returns
    -------
    OutOfCoreData
    """
    path, dtype = svmlight_parser.checked_load_arguments(path, n_features, dtype)
    budget = checked_memory_budget(memory_budget_bytes)
    query_path = svmlight_parser.find_query_file(path, query_file)

    def current_key() -> str:
        options = dict(n_features=n_features, dense=True, dtype=dtype.str, zero_based=zero_based, max_label=max_label,
                       query_file=None if query_path is None else _cache.file_identity(query_path), layout="chunks")
        return _cache.entry_key(path, options)

    def decode(arrays, *, private=False, directory=None):
        chunks = sorted((name, array) for name, array in arrays.items() if name.startswith(_CHUNK_PREFIX))
        for _, array in chunks:
            if array.dtype != dtype or len(array.shape) != 2:
                raise ValueError(f"{array.path}: a chunk of {array.dtype} {array.shape}, not 2-d {dtype}")
        n_docs, width = (int(v) for v in arrays["shape"])
        parts = [_Chunk(array.path, int(array.shape[0]), int(array.shape[1]), array.offset) for _, array in chunks]
        if sum(c.rows for c in parts) != n_docs or any(c.width > width for c in parts):
            raise ValueError("the chunk files disagree with the entry's shape")
        storage = _Storage(directory or (parts[0].path.parent if parts else Path(".")), private=private)
        labels = check_labels(arrays["labels"], max_label=max_label)  # a cache entry's labels, checked again
        return OutOfCoreData(storage, parts, labels, arrays["qids"], arrays["offsets"], n_features=width,
                             dtype=dtype, source=path, memory_budget_bytes=budget)

    def is_chunk(name: str) -> bool:
        return name.startswith(_CHUNK_PREFIX)

    key = current_key() if cache else None
    if key is not None:
        data = _cache.read_entry(key, decode, lazy=is_chunk)
        if data is not None:
            return data
        digests = _cache.racy_digests([path] if query_path is None else [path, query_path])

    directory = _scratch("chunks-")
    try:
        arrays = _parse_to_chunks(path, directory, query_path, n_features=n_features, dtype=dtype,
                                  zero_based=zero_based, max_label=max_label, progress=progress, budget=budget)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    private = True
    if key is not None and key == current_key():  # unchanged while it was parsed
        stored = _cache.store_directory(directory, key, digests)
        if stored is not None:
            directory, private = stored, False
        else:  # perhaps another process stored the same entry first: use it
            data = _cache.read_entry(key, decode, lazy=is_chunk)
            if data is not None:
                shutil.rmtree(directory, ignore_errors=True)
                return data
    files = {name: _cache.array_file(directory / f"{name}.npy") if is_chunk(name) else array
             for name, array in arrays.items()}
    return decode(files, private=private, directory=directory)


def _parse_to_chunks(path: Path, directory: Path, query_path: Path | None, *, n_features, dtype, zero_based,
                     max_label, progress: bool, budget: int) -> dict[str, np.ndarray]:
    """Parse ``path`` with the parser of the in-memory loader, chunk by chunk, writing each chunk's dense rows to
    ``directory``; returns the small arrays (labels, qids, offsets, shape) and the chunk names (as None)."""
    parser = svmlight_parser.Parser(path, n_features=n_features, dense=False, dtype=dtype, zero_based=zero_based,
                                    max_label=max_label, max_dense_gib=None)
    labels, row_qids, names = [], [], []
    with contextlib.closing(svmlight_parser.read_chunks(path, progress=progress)) as chunks:
        for chunk, first_line in chunks:
            piece = parser.parse_chunk(chunk, first_line)  # the checks and errors of the in-memory loader
            del chunk
            parser.chunk_rows.append(0 if piece is None else piece[0].size)
            if piece is None:
                continue
            labels.append(piece[0])
            row_qids.append(piece[1])
            values, columns, sizes = parser.pieces.pop()
            width = parser.width
            _check_fill(parser, path, dtype)
            name = f"{_CHUNK_PREFIX}{len(names):06d}"
            slice_rows = max(1, budget // max(1, width * dtype.itemsize))
            _write_chunk(directory / f"{name}.npy", sizes, columns, values, width, dtype, slice_rows)
            names.append(name)
            del values, columns, sizes
    if not labels:
        raise DataFormatError(path, None, "no data lines (the file is empty or holds only comments)")
    labels = np.concatenate(labels)
    width = parser.width
    if width == 0:
        raise DataFormatError(path, None, svmlight_parser.no_features_message(labels.size))
    offsets, qids = parser.queries(np.concatenate(row_qids), labels.size, query_path)
    arrays = {"labels": labels, "qids": qids, "offsets": offsets,
              "shape": np.array([labels.size, width], dtype=np.int64)}
    for name, array in arrays.items():
        np.save(directory / f"{name}.npy", array, allow_pickle=False)
    return {**arrays, **dict.fromkeys(names)}


def _check_fill(parser, path: Path, dtype: np.dtype) -> None:
    """Refuse, as the in-memory loader's ``max_dense_gib="auto"`` does, dense chunk files above 1 GiB of which
    less than 1% of the cells are given in the file (a stray large feature index, or data to read sparse)."""
    width = parser.width
    gib = parser.n_rows * width * dtype.itemsize / 2**30
    fill = parser.n_values / max(1, parser.n_rows * width)
    if gib <= svmlight_parser.SPARSE_DENSE_GIB or fill >= svmlight_parser.SPARSE_FILL:
        return
    line, cause = parser.width_cause()
    raise DataFormatError(path, line, f"{cause}: read it in memory with dense=False for a sparse X; dense "
                          f"{dtype} on disk, the {parser.n_rows:,} document(s) read so far need {gib:.3g} GiB with "
                          f"{100 * fill:.2g}% of the cells in the file")
