"""Compiled kernels of the SVMlight/LETOR parser (see :mod:`plboost.data.svmlight`).

A chunk of whole lines (LF line ends) is cut into parts that start at line starts, and read in two
passes over the parts, each part on a thread (the kernels release the GIL). The first counts the line ends
and colons of each part (:func:`count_bytes`): bounds on its documents and ``index:value`` pairs. The
second reads each part's documents into flat arrays (labels, query ids, and the features as row sizes,
indices and values) at the offsets these bounds give (:func:`fill_part`); the parts are then moved
together. The kernels are serial: Numba's ``parallel=True`` loops take seconds to compile.

A line is split as scikit-learn splits it: the text from the first ``#`` on is a comment (unless a NUL byte
comes before it: scikit-learn finds ``#`` with C's ``strchr``, which stops there), tokens are separated by
ASCII whitespace, the first token is the label, a second token starting with ``qid`` is the query id, and
every other token is ``index:value``. The kernels read only the plain spellings: decimals
``[+-]digits[.digits][(e|E)[+-]digits]`` with at most 19 significant digits, ``nan``, ``inf`` and
``infinity`` (any case, signed), indices of at most 10 digits, and ``qid:`` with at most 18 digits. A line
with anything else (another spelling that Python accepts, such as ``1_000``, ``+3:1`` or a 30-digit
mantissa, or an error) is flagged, to be read again in Python, which accepts it exactly as scikit-learn
does or finds what is wrong with it.

Decimals are rounded correctly, as Python's ``float()`` rounds them (the value is then cast to the output
type, as scikit-learn casts it). A mantissa ``w < 2**53`` scaled by ``10**q`` with ``|q| <= 22`` takes one
multiplication or division of exact doubles, which is correctly rounded (Clinger's fast path). Otherwise
``w * 10**q = w * 5**q * 2**q`` is computed with a 128-bit truncation of ``5**q``: the exact product lies
less than ``2**64`` units above the 192-bit product computed, so when no rounding boundary of a double lies
in that interval the rounding is decided. When one does (a tie, or too close to one to tell), or when the
result is not a normal double, the line is flagged like any other unusual spelling.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import helper, kernel

_MIN_Q, _MAX_Q = -342, 308  # decimal exponents of the table of powers of five


def _powers_of_five() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``5**q`` for q in [_MIN_Q, _MAX_Q] as ``(hi, lo, e)``: ``T = hi * 2**64 + lo`` in [2**127, 2**128) is
    ``5**q * 2**(127 - e)`` rounded down, where ``2**e <= 5**q < 2**(e + 1)``."""
    count = _MAX_Q - _MIN_Q + 1
    hi, lo, exponent = np.zeros(count, np.uint64), np.zeros(count, np.uint64), np.zeros(count, np.int64)
    for i, q in enumerate(range(_MIN_Q, _MAX_Q + 1)):
        if q >= 0:
            e = (5 ** q).bit_length() - 1
            mantissa = 5 ** q << (127 - e) if e <= 127 else 5 ** q >> (e - 127)
        else:
            e = -(5 ** -q).bit_length()  # 2**(L - 1) < 5**-q < 2**L, L its bit length
            mantissa = (1 << (127 - e)) // 5 ** -q
        hi[i], lo[i], exponent[i] = mantissa >> 64, mantissa & (2**64 - 1), e
    return hi, lo, exponent


_POW5_HI, _POW5_LO, _POW5_E = _powers_of_five()
_POW10 = np.array([10.0 ** k for k in range(23)])  # exact doubles
_NAN, _INFINITY = np.frombuffer(b"nan", dtype=np.uint8), np.frombuffer(b"infinity", dtype=np.uint8)
# uint64 constants: Numba types an expression that mixes uint64 and int64 as float64
_U0, _U1, _U10, _U32, _U63 = (np.uint64(k) for k in (0, 1, 10, 32, 63))
_LOW32, _ALL64, _TWO53 = np.uint64(2**32 - 1), np.uint64(2**64 - 1), np.uint64(2**53)


@helper
def _scale(w, q):
    """``(w * 10**q correctly rounded, True)`` for an integer 0 < w < 2**64, or ``(0.0, False)`` where this
    cannot decide the rounding or the result is not a normal double.

    With ``w' = w * 2**z`` in [2**63, 2**64) and ``5**q = (T + d) * 2**(e - 127)``, 0 <= d < 1 (d = 0 for
    0 <= q <= 55), the 192-bit ``P = w' * T`` is at most ``w' * d < 2**64`` below the exact product. Its top
    53 bits are the mantissa; the remainder below them, R, decides the rounding against half of its range,
    H. The exact remainder lies in [R, R + 2**64): below H if ``R <= H - 2**64``, above it if ``R >= H``
    and d > 0 (a carry past the remainder rounds up as well); anything between is left undecided.
    """
    if q < _MIN_Q or q > _MAX_Q:
        return 0.0, False
    i = q - _MIN_Q
    z = 0
    while not w >> _U63:
        w = w << _U1
        z += 1
    # the 128-bit products w * T_hi = high1 * 2**64 + low1 and w * T_lo = high2 * 2**64 + low2, by halves
    w_lo, w_hi = w & _LOW32, w >> _U32
    high1 = low1 = high2 = low2 = _U0
    for part in range(2):
        t = _POW5_HI[i] if part == 0 else _POW5_LO[i]
        t_lo, t_hi = t & _LOW32, t >> _U32
        ll, lh, hl, hh = w_lo * t_lo, w_lo * t_hi, w_hi * t_lo, w_hi * t_hi
        middle = (ll >> _U32) + (lh & _LOW32) + (hl & _LOW32)
        low = (middle << _U32) | (ll & _LOW32)
        high = hh + (lh >> _U32) + (hl >> _U32) + (middle >> _U32)
        if part == 0:
            high1, low1 = high, low
        else:
            high2, low2 = high, low
    mid = low1 + high2  # P = top * 2**128 + mid * 2**64 + low2
    top = high1 + (_U1 if mid < low1 else _U0)
    lead = 63 if top >> _U63 else 62  # the leading bit of top (P >= 2**190)
    below = np.uint64(lead - 52)  # bits of top below the mantissa
    mantissa = top >> below
    rest = top & ((_U1 << below) - _U1)  # R = rest * 2**128 + mid * 2**64 + low2
    half = _U1 << (below - _U1)  # H = half * 2**128
    if 0 <= q <= 55:  # P is exact
        if rest != half:
            up = rest > half
        elif mid != _U0 or low2 != _U0:
            up = True
        else:  # a tie: to even
            up = (mantissa & _U1) == _U1
    elif rest < half - _U1 or (rest == half - _U1 and mid != _ALL64):
        up = False
    elif rest >= half:
        up = True
    else:
        return 0.0, False
    if up:
        mantissa += _U1
        if mantissa == _TWO53:
            mantissa = mantissa >> _U1
            lead += 1
    # w * 10**q = mantissa * 2**(lead - 52 + 128) * 2**(e - 127) * 2**q / 2**z
    exponent = lead - 52 + 128 + _POW5_E[i] - 127 + q - z
    if exponent + 52 < -1022 or exponent + 52 > 1023:
        return 0.0, False
    return math.ldexp(float(mantissa), int(exponent)), True


@helper
def _is_blank(c):
    """ASCII whitespace, as ``bytes.split()`` has it (the line end included)."""
    return c == 32 or 9 <= c <= 13


@helper
def read_digits(buf, s, end, most):
    """``(value, stop)`` of the decimal digits from buf[s] on, ``most`` at most: they end before buf[stop]."""
    value = 0
    i = s
    while i < end and 48 <= buf[i] <= 57 and i - s < most:
        value = value * 10 + (int(buf[i]) - 48)  # int: interpreted, uint8 arithmetic would wrap
        i += 1
    return value, i


@helper
def read_float(buf, s, end):
    """``(value, stop)`` for the plain decimal that starts at buf[s] and ends before buf[stop], or
    ``(0.0, -1)`` if none starts there (see the module doc for what is read here)."""
    i = s
    negative = False
    if i < end and (buf[i] == 45 or buf[i] == 43):  # - +
        negative = buf[i] == 45
        i += 1
    if i == end:
        return 0.0, -1
    if buf[i] | 32 == 110 or buf[i] | 32 == 105:  # nan, inf or infinity, in any case
        word = _NAN if buf[i] | 32 == 110 else _INFINITY
        k = 0
        while k < word.size and i + k < end and buf[i + k] | 32 == word[k]:
            k += 1
        if k < 3:
            return 0.0, -1
        value = np.nan if word.size == 3 else np.inf
        return (math.copysign(value, -1.0) if negative else value), i + (8 if k == 8 else 3)
    # digits[.digits]: the mantissa w has no leading zeros; more than 19 digits in it overflow, and are left
    # to Python
    first = i
    while i < end and buf[i] == 48:  # leading zeros
        i += 1
    w = _U0
    digits = i  # where w starts
    while i < end and 48 <= buf[i] <= 57:
        w = w * _U10 + (buf[i] - np.uint8(48))
        i += 1
    seen = i > first
    exponent = 0
    if i < end and buf[i] == 46:  # .
        i += 1
        fraction = i
        if w == _U0:
            while i < end and buf[i] == 48:
                i += 1
            digits = i
        while i < end and 48 <= buf[i] <= 57:
            w = w * _U10 + (buf[i] - np.uint8(48))
            i += 1
        exponent = fraction - i
        seen = seen or i > fraction
        digits = i - digits - 1 if digits < fraction else i - digits
    else:
        digits = i - digits
    if not seen or digits > 19:
        return 0.0, -1
    if i < end and buf[i] | 32 == 101:  # e
        i += 1
        sign = 1
        if i < end and (buf[i] == 45 or buf[i] == 43):
            sign = -1 if buf[i] == 45 else 1
            i += 1
        power, stop = read_digits(buf, i, end, np.int64(6))
        if stop == i or (stop < end and 48 <= buf[stop] <= 57):
            return 0.0, -1
        exponent += sign * power
        i = stop
    if w == _U0:
        value = 0.0
    elif w < _TWO53 and -22 <= exponent <= 22:
        value = float(w) * _POW10[exponent] if exponent >= 0 else float(w) / _POW10[-exponent]
    else:
        value, ok = _scale(w, exponent)
        if not ok:
            return 0.0, -1
    return (math.copysign(value, -1.0) if negative else value), i


@kernel
def count_bytes(buf, start, end):
    """(line ends, colons) in buf[start:end]: bounds on the documents and ``index:value`` pairs there."""
    part = buf[start:end]  # indices from 0: Numba then knows them non-negative, and the loop is vectorised
    line_ends = colons = 0
    for i in range(part.size):
        line_ends += part[i] == 10
        colons += part[i] == 58
    return line_ends, colons


@kernel
def fill_part(buf, start, end, line, row, entry, entry_end, labels, qids, has_qid, flags, lines, line_starts, sizes,
              indices, values):
    """Read the documents of buf[start:end], writing them from document ``row`` and entry ``entry`` on (up to
    ``entry_end``); the first line is number ``line``. Returns the numbers of documents and entries written.

    Per document: its label, query id (0 if none), whether it has a ``qid`` token, a flag (1: its line is to
    be read again in Python, and its label, id and entries are placeholders), its line number, the offset
    of its line in ``buf``, and its number of entries. A flagged line with a token that cannot be
    ``index:value`` (no colon) gets no entries: scikit-learn refuses it.
    """
    first_row, first_entry = row, entry
    offset = start
    buf = buf[start:end]  # indices from 0: Numba then knows them non-negative
    end -= start
    i = 0
    while i < end:
        line_start = offset + i
        row_entry = entry
        tokens = 0
        nul = False  # a NUL byte: no comment from here on, and a line for Python
        flag = colonless = False
        previous = -1
        while True:
            while i < end and buf[i] != 10 and _is_blank(buf[i]):
                i += 1
            if i >= end or buf[i] == 10:
                break
            if buf[i] == 35 and not nul:  # a comment: to the end of the line
                while i < end and buf[i] != 10:
                    i += 1
                break
            s = i
            stop = -1  # where the token ends if read here, else -1
            tokens += 1
            if tokens == 1:
                lines[row] = line
                line_starts[row] = line_start
                qids[row] = 0
                has_qid[row] = False
                label, stop = read_float(buf, s, end)
                labels[row] = label
            elif tokens == 2 and end - s >= 3 and buf[s] == 113 and buf[s + 1] == 105 and buf[s + 2] == 100:  # qid
                has_qid[row] = True
                j = s + 3
                if not flag and j < end and buf[j] == 58:  # :[+-]digits, 18 at most
                    j += 1
                    negative = j < end and buf[j] == 45
                    if j < end and (buf[j] == 45 or buf[j] == 43):
                        j += 1
                    qid, after = read_digits(buf, j, end, np.int64(18))
                    if after > j:
                        qids[row] = -qid if negative else qid
                        stop = after
            else:
                index, value = 0, 0.0
                if not flag:
                    number, j = read_digits(buf, s, end, np.int64(10))  # digits:value
                    if j > s and j < end and buf[j] == 58 and previous < number < 2**31:
                        index = previous = number
                        value, stop = read_float(buf, j + 1, end)
                if entry < entry_end:
                    indices[entry] = index
                    values[entry] = value
                entry += 1
            if stop >= 0 and (stop == end or _is_blank(buf[stop]) or buf[stop] == 35):
                i = stop  # read; nul is False here, so # starts a comment
            else:  # not read here: find the token's end as bytes.split() would
                flag = True
                colon = False
                while i < end:
                    c = buf[i]
                    if _is_blank(c) or (c == 35 and not nul):
                        break
                    nul = nul or c == 0
                    colon = colon or c == 58
                    i += 1
                if tokens > 2 or (tokens == 2 and not has_qid[row]):
                    colonless = colonless or not colon
        if tokens:
            if colonless:
                entry = row_entry
            flags[row] = flag or nul
            sizes[row] = entry - row_entry
            row += 1
        if i < end:
            i += 1
        line += 1
    return row - first_row, entry - first_entry


@kernel
def scatter(X, first_row, sizes, columns, values):
    """Add rows given as (sizes, columns, values) to the zero rows of dense ``X`` from ``first_row`` on
    (0 + v, as scipy's ``toarray`` adds: a stored -0.0 becomes 0)."""
    k = 0
    for r in range(sizes.size):
        for _ in range(sizes[r]):
            X[first_row + r, columns[k]] += values[k]
            k += 1
