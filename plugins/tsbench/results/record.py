"""The base of every record a run writes: a JSON object with declared keys (``Record``).

``from_json`` accepts every results folder written so far (keys a record does not declare are kept
verbatim, keys an older run did not write keep their defaults) and ``to_json`` gives back exactly
the JSON that was read: only the keys that were present (or set by the writer), unknown ones
included. Units are in the key names (``_s`` seconds, ``_ms`` milliseconds, ``_bytes`` bytes,
``_per_s`` per second).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

Number = int | float  # as written: an int stays an int, a float a float


class Record(BaseModel):
    """A JSON object with declared keys; undeclared keys are kept (``extra``) and written back."""

    model_config = ConfigDict(frozen=True, extra="allow")

    @classmethod
    def from_json(cls, body: Any) -> Self:
        return cls.model_validate(body)

    def to_json(self) -> dict[str, Any]:
        """The keys that were read or set, nested records as JSON objects."""
        return self.model_dump(exclude_unset=True)

    def has(self, key: str) -> bool:
        """Whether the JSON had ``key`` (a declared key keeps its default when absent)."""
        return key in self.model_fields_set

    def written(self, key: str) -> Any:
        """``key``'s value as the JSON had it: None when absent (not the declared default)."""
        return getattr(self, key) if self.has(key) else None
