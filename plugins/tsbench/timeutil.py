"""Time parsing and formatting helpers.

All instants inside tsbench are integers: nanoseconds since the Unix epoch, UTC.
All durations are integers: nanoseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

NS_PER_SECOND = 1_000_000_000
NS_PER_MINUTE = 60 * NS_PER_SECOND
NS_PER_HOUR = 60 * NS_PER_MINUTE
NS_PER_DAY = 24 * NS_PER_HOUR

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "ms": 1_000_000,
    "s": NS_PER_SECOND,
    "m": NS_PER_MINUTE,
    "min": NS_PER_MINUTE,
    "h": NS_PER_HOUR,
    "d": NS_PER_DAY,
}
_DURATION = re.compile(r"^\s*(\d+)\s*(ns|us|ms|s|min|m|h|d)\s*$")


def parse_duration(text: str | int) -> int:
    """Parse ``"10s"``, ``"1h"``, ``"3d"``, ``"250ms"`` (or an int of ns) into nanoseconds.

    Raises ValueError with the accepted forms when the text is not a duration.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a duration: {text!r}")
    if isinstance(text, int):
        return text
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(
            f"not a duration: {text!r} (use an integer and a unit: ns, us, ms, s, m, h, d; e.g. '10s')"
        )
    return int(match.group(1)) * _UNITS[match.group(2)]


def format_duration(ns: int) -> str:
    """Shortest exact text for a duration in ns (``10_000_000_000`` → ``"10s"``)."""
    for unit in ("d", "h", "m", "s", "ms", "us"):
        size = _UNITS[unit]
        if ns and ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def parse_instant(text: str | datetime | int) -> int:
    """Parse an ISO-8601 instant (``2016-01-01T00:00:00Z``) into ns since the epoch (UTC).

    A naive text or datetime is taken as UTC. An int is taken as ns already.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a timestamp: {text!r}")
    if isinstance(text, int):
        return text
    if isinstance(text, datetime):
        moment = text
    else:
        try:
            moment = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"not an ISO-8601 timestamp: {text!r} (e.g. '2016-01-01T00:00:00Z')") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.timestamp())
    return seconds * NS_PER_SECOND + moment.microsecond * 1_000


def format_instant(ns: int) -> str:
    """ns since the epoch → ``2016-01-01T00:00:00Z`` (sub-second digits only when present)."""
    seconds, rest = divmod(ns, NS_PER_SECOND)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if rest:
        text += f".{rest:09d}".rstrip("0")
    return text + "Z"
