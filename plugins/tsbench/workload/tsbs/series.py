"""What an imported row belongs to: the use case, its entity and series, checked as they appear.

``ImportState`` holds what every importer knows while it reads a file: the use case (given, or
inferred and widened from the measurement names), the entities with their fixed tags, the interned
values of each measurement's extra tags, and a cache of the distinct series seen so far. It also
turns a problem into a ``TsbsFormatError`` that names the file's line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.progress import Progress
from tsbench.workload.dataset import DatasetWriter
from tsbench.workload.tsbs.formats import TIMESCALEDB_FORMAT, TsbsFormatError, tag_fields_of
from tsbench.workload.usecases import USE_CASES, UseCase, get_use_case

log = logging.getLogger("tsbench")


@dataclass
class SeriesInfo:
    """What a distinct tag set (series) of a chunk resolves to."""

    measurement: int  # index into the use case's measurements
    entity: int  # entity id, -1 when the row has no entity key (nameless, or skipped)
    extras: tuple[int, ...]  # interned ids of the measurement's extra tag values
    tag_fields: tuple[float | None, ...] = ()  # timescaledb iot: fields carried on the tags line


class Problem(Exception):
    """A problem found in a distinct value; the caller turns it into a TsbsFormatError with the line."""


class ImportState:
    """The use case, entities and series of a file being imported (see the module docstring)."""

    def __init__(self, path: Path, fmt: str, use_case: str | None, progress: Progress | None):
        self.path, self.fmt, self.progress = path, fmt, progress
        self.explicit = use_case is not None
        self.use_case: UseCase | None = get_use_case(use_case) if use_case else None
        self.writer: DatasetWriter | None = None
        self.final: Path | None = None
        # entities
        self.entity_ids: dict[str, int] = {}
        self.entity_names: list[str] = []
        self.entity_tags: list[list[str | None]] = []
        # extra tag values, interned per (measurement, tag)
        self.extra_ids: dict[tuple[str, str], dict[str, int]] = {}
        self.extra_values: dict[tuple[str, str], list[str]] = {}
        self.series_cache: dict[Any, SeriesInfo] = {}
        self.skipped = 0
        self.nameless = 0  # rows kept without an entity key (use cases with nameless rows)
        self.lines = 0

    def fail(self, line: int, message: str, text: str | None = None) -> TsbsFormatError:
        """The error to raise for 1-based ``line``, quoting up to 300 characters of its ``text``."""
        shown = f": {text[:300]!r}" if text is not None else ""
        return TsbsFormatError(f"{self.path.name} line {line}: {message}{shown}")

    def measurement_index(self, name: str) -> int:
        """Index of measurement ``name`` in the use case, inferring / widening the use case."""
        if self.use_case is None:
            for candidate in ("cpu-only", "devops", "iot"):
                if name in _names(candidate):
                    self.use_case = USE_CASES[candidate]
                    break
        names = _names(self.use_case.name) if self.use_case is not None else []
        if name in names:
            return names.index(name)
        if not self.explicit:
            if self.use_case is not None and self.use_case.name == "cpu-only" and name in _names("devops"):
                self._widen(USE_CASES["devops"])  # only cpu so far, then another devops measurement
                return _names("devops").index(name)
            if not any(name in _names(u) for u in USE_CASES):
                raise Problem(f"unknown measurement {name!r} (neither cpu, a devops nor an iot measurement)")
        assert self.use_case is not None
        raise Problem(
            f"measurement {name!r} is not part of use case {self.use_case.name} ({', '.join(names)})"
        )

    def _widen(self, use_case: UseCase) -> None:
        log.info("tsbs import: %s holds devops measurements; importing it as devops", self.path.name)
        self.use_case = use_case
        if self.writer is not None:
            self.writer.use_case = use_case
            for m in use_case.measurements:
                self.writer.rows.setdefault(m.name, 0)

    def resolve(self, measurement: str, tags: dict[str, str | None]) -> SeriesInfo:
        """Check a series' tags against the use case and the entity's known tags."""
        index = self.measurement_index(measurement)
        assert self.use_case is not None
        m = self.use_case.measurements[index]
        entity_tags = self.use_case.entity_tags
        tag_fields = tag_fields_of(self.use_case) if self.fmt == TIMESCALEDB_FORMAT else ()
        unknown = [t for t in tags if t not in entity_tags and t not in m.extra_tags and t not in tag_fields]
        if unknown:
            raise Problem(f"tag {unknown[0]!r} is not a tag of {self.use_case.name} measurement {m.name}")
        extras = []
        for tag in m.extra_tags:
            value = tags.get(tag)
            if value is None:
                raise Problem(f"measurement {m.name} needs tag {tag!r}")
            ids = self.extra_ids.setdefault((m.name, tag), {})
            if value not in ids:
                ids[value] = len(ids)
                self.extra_values.setdefault((m.name, tag), []).append(value)
            extras.append(ids[value])
        fields = tuple(_float_or_none(tags.get(t), t) for t in tag_fields)
        name = tags.get(entity_tags[0])
        if name is None:
            return SeriesInfo(index, -1, tuple(extras), fields)
        values = [tags.get(t) for t in entity_tags]
        entity = self.entity_ids.get(name)
        if entity is None:
            entity = self.entity_ids[name] = len(self.entity_names)
            self.entity_names.append(name)
            self.entity_tags.append(values)
        else:
            known = self.entity_tags[entity]
            for j, value in enumerate(values):
                if value is None:
                    continue
                if known[j] is None:
                    known[j] = value
                elif known[j] != value:
                    raise Problem(
                        f"{entity_tags[0]} {name}: tag {entity_tags[j]} changed from {known[j]!r} to "
                        f"{value!r} (an entity's tags must stay the same)"
                    )
        return SeriesInfo(index, entity, tuple(extras), fields)

    def resolve_codes(
        self, keys: list[Any], parse: Callable[[Any], SeriesInfo], rows_of: Callable[[int], tuple[int, str]]
    ) -> list[SeriesInfo]:
        """Resolve each distinct key (cached across chunks); errors name the first line using it."""
        infos = []
        for k, key in enumerate(keys):
            info = self.series_cache.get(key)
            if info is None:
                try:
                    info = parse(key)
                except Problem as problem:
                    line, text = rows_of(k)
                    raise self.fail(line, str(problem), text) from None
                if len(self.series_cache) > 2_000_000:
                    self.series_cache.clear()
                self.series_cache[key] = info
            infos.append(info)
        return infos

    def check_utf8(self, dictionary: pa.StringArray, codes: np.ndarray, numbers: np.ndarray) -> None:
        """Raise, naming the first line that uses it, if a distinct value is not valid UTF-8."""
        try:
            dictionary.validate(full=True)
        except pa.ArrowInvalid:
            for k, value in enumerate(dictionary.cast(pa.binary()).to_pylist()):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    i = int(np.argmax(codes == k))
                    raise self.fail(int(numbers[i]), "tags are not valid UTF-8") from None

    def cast(
        self, strings: pa.Array, kind: pa.DataType, what: str, row: Callable[[int], tuple[int, str]]
    ) -> pa.Array:
        """``strings`` cast to ``kind``; else an error naming the first value that does not convert
        (``what`` it is, and its line and text from ``row(index)``)."""
        try:
            return pc.cast(strings, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        low, high = 0, len(strings)  # bisect to the first value that does not convert
        while high - low > 1:
            middle = (low + high) // 2
            try:
                pc.cast(strings.slice(low, middle - low), kind)
                low = middle
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                high = middle
        line, text = row(low)
        name = "an integer" if pa.types.is_integer(kind) else "a number"
        raise self.fail(line, f"{what} {strings[low].as_py()!r} is not {name}", text)


def _names(use_case: str) -> list[str]:
    return [m.name for m in USE_CASES[use_case].measurements]


def _float_or_none(text: str | None, tag: str) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise Problem(f"tag {tag} value {text!r} is not a number") from None
