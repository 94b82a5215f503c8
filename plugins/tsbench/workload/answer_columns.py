"""A large answer held by columns: one NumPy array per column instead of a Python tuple per row.

A 1.7 M-row high-cpu-all answer (4,000 hosts) as tuples of Python floats takes ~0.8 GB; as
columns (float64 values, int64 instants, shared ``str`` objects for tags) ~0.16 GB. ``ColumnRows``
is filled part by part (each part's tuples are freed once copied, and normalised a column at a
time, which for the common kinds needs no Python call per value), sorts by key columns with a
stable ``numpy.lexsort`` (the same order as sorting the tuples), and gives the rows back as
tuples of Python values, a chunk at a time, exactly as they were normalised: a float column's
NaN is the ``None`` it stood for (``Answer``'s normalisation maps NaN to ``None`` already).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

CHUNK_ROWS = 65_536  # rows turned back into tuples at a time while iterating


def normalised_column(values: list[Any], cell: Callable[[Any], Any], texts: dict[str, str]) -> np.ndarray:
    """One column of raw values, normalised as ``cell`` normalises one value, as an array: int64
    when every value is an int, float64 when they are floats (ints and ``None`` allowed: ``None``
    becomes NaN), else objects. Tags share one ``str`` per distinct value (``texts``). The common
    kinds (all floats, all ints, all strings) are converted without a call per value."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return np.array(values, dtype=np.float64)  # NaN is what normalisation makes None
    if kinds == {int}:
        return np.array(values, dtype=np.int64)
    if kinds != {str}:
        values = [texts.setdefault(v, v) if isinstance(v, str) else cell(v) for v in values]
        kinds = set(map(type, values))
        if kinds == {int}:
            return np.array(values, dtype=np.int64)
        if float in kinds and kinds <= {float, int, type(None)}:
            return np.array(values, dtype=np.float64)
    else:
        values = [texts.setdefault(v, v) for v in values]
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


class ColumnRows(Sequence[tuple[Any, ...]]):
    """Rows of ``width`` columns stored by column; see the module docstring."""

    def __init__(self, width: int):
        self.width = width
        self._parts: list[list[np.ndarray]] = [[] for _ in range(width)]
        self._columns: list[np.ndarray] | None = None
        self._length = 0

    def extend_raw(self, rows: list[Any], cell: Callable[[Any], Any], texts: dict[str, str]) -> None:
        """Append raw rows (each of ``width`` cells), normalised column by column
        (``normalised_column``); ``rows`` is emptied as it is copied."""
        if not rows:
            return
        self._columns = None
        for index, values in enumerate(zip(*rows, strict=True)):
            self._parts[index].append(normalised_column(list(values), cell, texts))
        self._length += len(rows)
        rows.clear()

    def columns(self) -> list[np.ndarray]:
        """The columns, each one array (parts joined; mixed kinds joined as objects). Joined a
        column at a time, each column's parts freed before the next is joined."""
        if self._columns is None:
            for index, parts in enumerate(self._parts):
                self._parts[index] = [_join(parts)]
                del parts
            self._columns = [parts[0] for parts in self._parts]
        return self._columns

    def sort(self, key_index: list[int]) -> None:
        """Stable sort by the columns of ``key_index`` (the first one first); NULL keys last."""
        columns = self.columns()
        keys = [columns[i] for i in key_index]
        try:
            order = np.lexsort(tuple(reversed(keys))) if keys else None
        except TypeError:  # a NULL beside a value: Python's comparison with NULLs last
            rows = sorted(range(self._length), key=lambda row: nulls_last(column[row] for column in keys))
            order = np.array(rows, dtype=np.int64)
        keys.clear()  # the key columns are replaced below, the old ones freed
        if order is None:
            return
        for index in range(self.width):  # one column reordered at a time, the old one freed
            self._parts[index] = []
            columns[index] = columns[index][order]
            self._parts[index] = [columns[index]]

    def keys_repeat(self, key_index: list[int]) -> bool:
        """Whether two neighbouring rows have equal values in every column of ``key_index``."""
        if self._length < 2:
            return False
        columns = self.columns()
        same = np.ones(self._length - 1, dtype=bool)
        for i in key_index:
            same &= np.asarray(columns[i][1:] == columns[i][:-1], dtype=bool)
        return bool(same.any())

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for chunk in self.chunks():
            yield from chunk

    def chunks(self, size: int = CHUNK_ROWS) -> Iterator[list[tuple[Any, ...]]]:
        """The rows as tuples of Python values, ``size`` rows per list."""
        columns = self.columns()
        for start in range(0, self._length, size):
            stop = min(start + size, self._length)
            yield list(zip(*(_python_values(c[start:stop]) for c in columns), strict=True))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return tuple(_python_values(c[index : index + 1])[0] for c in self.columns())


def _join(parts: list[np.ndarray]) -> np.ndarray:
    if len(parts) == 1:
        return parts[0]
    if len({part.dtype for part in parts}) > 1:  # e.g. an int64 part and an object part
        parts = [part.astype(object) for part in parts]
    return np.concatenate(parts)


def _python_values(chunk: np.ndarray) -> list[Any]:
    values = chunk.tolist()
    if chunk.dtype == np.float64 and np.isnan(chunk).any():
        return [None if v != v else v for v in values]
    return values


def nulls_last(cells: Iterable[Any]) -> tuple[tuple[bool, Any], ...]:
    """A sort key over ``cells`` that orders NULLs after every value (for keys holding NULLs)."""
    return tuple((cell is None, cell if cell is not None else 0) for cell in cells)


def rows_agree(
    expected: list[Any], rows: ColumnRows, start: int, key_index: list[int], rel_tol: float, abs_tol: float
) -> np.ndarray | None:
    """Which of the ``expected`` rows (normalised, in answer order) agree with ``rows`` from
    ``start`` on, as ``Answer``'s row comparison judges them: keys equal, values within
    ``abs_tol + rel_tol * |expected|``, ``None`` only beside ``None``. A column at a time, without
    a Python call per value where both sides are numbers; None when the chunk cannot be judged by
    columns (a row of another width), so the caller compares it row by row."""
    width = rows.width
    if any(len(row) != width for row in expected):
        return None
    stop = start + len(expected)
    agree = np.ones(len(expected), dtype=bool)
    columns = rows.columns()
    for index, values in enumerate(zip(*expected, strict=True)):
        want = normalised_column(list(values), _as_is, {})
        got = columns[index][start:stop]
        agree &= _equal(want, got) if index in key_index else _close(want, got, rel_tol, abs_tol)
    return agree


def _as_is(value: Any) -> Any:
    return value


def _numeric(array: np.ndarray) -> bool:
    return array.dtype.kind in "if"


def _equal(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    if _numeric(want) and _numeric(got):
        return np.asarray(want == got)  # keys are never NaN: a NULL key makes an object column
    return np.fromiter((w == g for w, g in zip(want.tolist(), got.tolist(), strict=True)), bool, len(want))


def _close(want: np.ndarray, got: np.ndarray, rel_tol: float, abs_tol: float) -> np.ndarray:
    if not (_numeric(want) and _numeric(got)):
        pairs = zip(_python_values(want), _python_values(got), strict=True)
        return np.fromiter((values_agree(w, g, rel_tol, abs_tol) for w, g in pairs), bool, len(want))
    expected, actual = want.astype(np.float64), got.astype(np.float64)
    missing_expected, missing_actual = np.isnan(expected), np.isnan(actual)
    with np.errstate(invalid="ignore"):
        within = np.abs(actual - expected) <= abs_tol + rel_tol * np.abs(expected)
    return (missing_expected & missing_actual) | (~missing_expected & ~missing_actual & within)


def values_agree(want: Any, got: Any, rel_tol: float, abs_tol: float) -> bool:
    """One expected and one actual cell: ``None`` only beside ``None``, strings equal, numbers
    within ``abs_tol + rel_tol * |want|``."""
    if want is None or got is None:
        return want is got
    if isinstance(want, str) or isinstance(got, str):
        return bool(want == got)
    return abs(float(got) - float(want)) <= abs_tol + rel_tol * abs(float(want))
