"""TSBS's 12 iot query types: what each computes, its parameters and its answer columns.

The semantics are those of TSBS's reference texts for TimescaleDB (``cmd/tsbs_generate_queries/
databases/timescaledb/iot.go`` at 37fced7; read, not copied), restated on our schema, where a
truck's ``name, fleet, driver, model, device_version`` are its tags and ``load_capacity``,
``fuel_capacity`` and ``nominal_fuel_consumption`` are fields of every row (TSBS: truck tags).
Rules every target follows (the oracle, ``iot_oracle.py``, is the reference):

* **Nameless rows never count**: every type reads only rows with a ``name`` (TSBS filters
  ``name IS NOT NULL`` in eleven of them; avg-daily-driving-duration does not, and there a nameless
  point's other tags would form groups of their own — our model keeps no tags for a nameless row,
  so it reads named rows too; see the README).
* A **fleet** type reads the trucks of one fleet drawn uniformly from ``IOT_FLEETS`` per query.
* **10-minute buckets and days** are aligned to the Unix epoch (``floor(t / width) * width``);
  windows are half-open ``[start, end)``; a truck's "last" row is its row with the greatest time.
* Fields may be missing (NULL): aggregates skip them; a comparison with a missing value is not
  true, so such a row never passes a filter; a bucket whose ``avg`` is missing is neither driving
  nor stopped.
* Integer arithmetic where TSBS's text has it (noted per type): ``count / 6`` and
  ``count(status = 0) / count(*)`` are integer divisions in PostgreSQL; ``sum(count) / 144`` is not.

Per kind (answer columns in order; key columns identify a row):

* LAST_LOC (last-loc): each named truck of the fleet, its last ``readings`` row's longitude and
  latitude → ``name, driver, longitude, latitude``.
* LOW_FUEL (low-fuel): each named truck of the fleet whose last ``diagnostics`` row has
  ``fuel_state < 0.1`` → ``name, driver, fuel_state``.
* HIGH_LOAD (high-load): … whose last ``diagnostics`` row has ``current_load / load_capacity > 0.9``
  (both of that row) → ``name, driver, current_load``.
* STATIONARY (stationary-trucks): trucks of the fleet whose ``avg(velocity) < 1`` over the rows in a
  random 10-minute window → ``name, driver``.
* LONG_SESSIONS (long-driving-sessions / long-daily-sessions): trucks of the fleet with more than
  ``limit`` (22 / 60) 10-minute buckets of ``avg(velocity) > 1`` in a random 4 h / 24 h window →
  ``name, driver``.
* FLEET_FUEL (avg-vs-projected-fuel-consumption): per fleet, over all readings with
  ``velocity > 1``: ``avg(fuel_consumption)``, ``avg(nominal_fuel_consumption)`` →
  ``fleet, avg_fuel_consumption, projected_fuel_consumption``.
* DAILY_DRIVING (avg-daily-driving-duration): per truck, its 10-minute buckets of
  ``avg(velocity) > 1`` counted per day, ``count // 6`` (integer hours); the mean over the truck's
  days → ``fleet, name, driver, avg_daily_hours``.
* DRIVING_SESSION (avg-daily-driving-session): per truck, 10-minute buckets with
  ``driving = avg(velocity) > 5``; the buckets where ``driving`` differs from the previous bucket's
  (a bucket without a previous one, or with a missing ``driving`` on either side, is no change);
  each such change's ``stop`` is the next change's bucket; per truck and day of ``start``, the mean
  ``stop − start`` in seconds over the changes to driving (a change without a next one has no
  duration; a day with only such changes has a missing mean) → ``name, day, avg_session_s``.
* FLEET_LOAD (avg-load): per truck ``avg(current_load)`` and its ``load_capacity`` (the greatest
  value its rows carry; one value per truck); per ``fleet, model, load_capacity`` the mean of
  ``avg_load / load_capacity`` → ``fleet, model, load_capacity, avg_load_share``.
* DAILY_ACTIVITY (daily-activity): per truck, 10-minute bucket and day, the rows of buckets with
  ``avg(status) < threshold`` (1: every status 0); per ``fleet, model, day`` the sum of those row counts / 144
  (real division; TSBS's label says hours, its text counts rows) →
  ``fleet, model, day, daily_activity``.
* BREAKDOWNS (breakdown-frequency): per truck and 10-minute bucket
  ``broken_down = count(status = 0) // count(*) >= 0.5`` — in TSBS's integer text this is true
  exactly when every row of the bucket has a ``status`` (its label says breakdowns); per model, the
  number of buckets whose ``broken_down`` is false and the truck's next bucket's is true →
  ``model, breakdowns``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tsbench.timeutil import NS_PER_HOUR, NS_PER_MINUTE
from tsbench.workload.query_kinds import Kind


class IotQuery(Protocol):
    """What these helpers read of a query (``tsbench.workload.queries.LogicalQuery`` has it; that
    module imports this one through ``query_types``, so this one names no class of it)."""

    @property
    def id(self) -> str: ...
    @property
    def fleet(self) -> str | None: ...
    @property
    def start_ns(self) -> int | None: ...
    @property
    def end_ns(self) -> int | None: ...


FAMILY = "iot"
TEN_MINUTES_NS = 10 * NS_PER_MINUTE
DAY_NS = 24 * NS_PER_HOUR
LOW_FUEL_BELOW = 0.1
HIGH_LOAD_ABOVE = 0.9
STATIONARY_BELOW = 1.0  # km/h, avg(velocity) over the window
DRIVING_ABOVE = 1.0  # km/h, avg(velocity) of a 10-minute bucket (sessions, durations, fuel)
SESSION_DRIVING_ABOVE = 5.0  # km/h, avg(velocity) of a bucket in avg-daily-driving-session
ACTIVE_BELOW = 1.0  # avg(status) of a 10-minute bucket in daily-activity: every status 0 (codes are 0–5)
BUCKETS_PER_HOUR = 6
ACTIVITY_DIVISOR = 144  # TSBS's "sum(ten_mins_per_day) / 144"


IOT_KINDS = (
    Kind.LAST_LOC,
    Kind.LOW_FUEL,
    Kind.HIGH_LOAD,
    Kind.STATIONARY,
    Kind.LONG_SESSIONS,
    Kind.FLEET_FUEL,
    Kind.DAILY_DRIVING,
    Kind.DRIVING_SESSION,
    Kind.FLEET_LOAD,
    Kind.DAILY_ACTIVITY,
    Kind.BREAKDOWNS,
)


def function_name(kind: Kind, prefix: str = "") -> str:
    """The name a dialect gives its renderer of ``kind``: ``Kind.LAST_LOC`` → ``last_loc``."""
    return prefix + kind.name.lower()


def by_kind(functions: Mapping[str, Any], prefix: str = "") -> dict[Kind, Any]:
    """A module's iot renderers by kind, found by name (``function_name``) in ``functions`` (its
    ``globals()``); a kind the module has no function for is left out (a target declares it
    unsupported, and the contract test holds it to that)."""
    return {
        kind: functions[function_name(kind, prefix)]
        for kind in IOT_KINDS
        if function_name(kind, prefix) in functions
    }


def fleet_of(query: IotQuery) -> str:
    """The fleet a fleet type's query reads; ``ValueError`` naming the query when it has none."""
    if query.fleet is None:
        raise ValueError(f"{query.id}: a fleet query needs a fleet")
    return str(query.fleet)


def window_of(query: IotQuery) -> tuple[int, int]:
    """The ``[start_ns, end_ns)`` window of a windowed type's query; ``ValueError`` without one."""
    if query.start_ns is None or query.end_ns is None:
        raise ValueError(f"{query.id}: a windowed iot query needs start_ns and end_ns")
    return int(query.start_ns), int(query.end_ns)


def long_session_buckets(rest_minutes_per_hour: int, window_ns: int) -> int:
    """TSBS's threshold: the 10-minute buckets of the window less ``rest`` minutes per hour
    (4 h, 5 min/h → 22; 24 h, 35 min/h → 60)."""
    minutes = window_ns // NS_PER_MINUTE
    return int((minutes - rest_minutes_per_hour * window_ns / NS_PER_HOUR) // 10)


# kind → (answer columns, key columns)
IOT_ANSWER_COLUMNS: dict[Kind, tuple[list[str], list[str]]] = {
    Kind.LAST_LOC: (["name", "driver", "longitude", "latitude"], ["name"]),
    Kind.LOW_FUEL: (["name", "driver", "fuel_state"], ["name"]),
    Kind.HIGH_LOAD: (["name", "driver", "current_load"], ["name"]),
    Kind.STATIONARY: (["name", "driver"], ["name"]),
    Kind.LONG_SESSIONS: (["name", "driver"], ["name"]),
    Kind.FLEET_FUEL: (["fleet", "avg_fuel_consumption", "projected_fuel_consumption"], ["fleet"]),
    Kind.DAILY_DRIVING: (["fleet", "name", "driver", "avg_daily_hours"], ["name"]),
    Kind.DRIVING_SESSION: (["name", "day", "avg_session_s"], ["name", "day"]),
    Kind.FLEET_LOAD: (
        ["fleet", "model", "load_capacity", "avg_load_share"],
        ["fleet", "model", "load_capacity"],
    ),
    Kind.DAILY_ACTIVITY: (["fleet", "model", "day", "daily_activity"], ["fleet", "model", "day"]),
    Kind.BREAKDOWNS: (["model", "breakdowns"], ["model"]),
}

IOT_DESCRIPTIONS = {
    Kind.LAST_LOC: "the last location of every truck of a random fleet",
    Kind.LOW_FUEL: "trucks of a random fleet whose last diagnostic has fuel_state < {q.threshold}",
    Kind.HIGH_LOAD: "trucks of a random fleet whose last diagnostic has current_load / load_capacity "
    "> {q.threshold}",
    Kind.STATIONARY: "trucks of a random fleet with avg(velocity) < {q.threshold} km/h in a "
    "{q.window_text} window",
    Kind.LONG_SESSIONS: "trucks of a random fleet with more than {q.limit} 10-min buckets of "
    "avg(velocity) > {q.threshold} km/h in a {q.window_text} window",
    Kind.FLEET_FUEL: "per fleet: avg(fuel_consumption) vs avg(nominal_fuel_consumption) while "
    "velocity > {q.threshold} km/h, all data",
    Kind.DAILY_DRIVING: "per truck: mean over days of the whole hours driven (10-min buckets of "
    "avg(velocity) > {q.threshold} km/h, count / 6), all data",
    Kind.DRIVING_SESSION: "per truck and day: mean length of driving sessions (runs of 10-min buckets of "
    "avg(velocity) > {q.threshold} km/h), all data",
    Kind.FLEET_LOAD: "per fleet, model and load capacity: mean of each truck's avg(current_load) / "
    "load_capacity, all data",
    Kind.DAILY_ACTIVITY: "per fleet, model and day: diagnostics rows in 10-min buckets with "
    "avg(status) < {q.threshold} (all 0), / 144 (TSBS's text), all data",
    Kind.BREAKDOWNS: "per model: 10-min buckets after which a truck's status turns complete "
    "(TSBS's text: count(status = 0) / count(*) >= 0.5 in integers), all data",
}


_FOUR_HOURS = 4 * NS_PER_HOUR
_VELOCITY = ("velocity",)
# name, kind, measurement, fields read, other parameters — in TSBS's order
_IOT_TYPES: tuple[tuple[str, Kind, str, tuple[str, ...], dict[str, Any]], ...] = (
    ("last-loc", Kind.LAST_LOC, "readings", ("longitude", "latitude"), {"fleet": True}),
    ("low-fuel", Kind.LOW_FUEL, "diagnostics", ("fuel_state",), {"fleet": True, "threshold": LOW_FUEL_BELOW}),
    (
        "high-load",
        Kind.HIGH_LOAD,
        "diagnostics",
        ("current_load", "load_capacity"),
        {"fleet": True, "threshold": HIGH_LOAD_ABOVE},
    ),
    (
        "stationary-trucks",
        Kind.STATIONARY,
        "readings",
        _VELOCITY,
        {"fleet": True, "window_ns": TEN_MINUTES_NS, "threshold": STATIONARY_BELOW},
    ),
    (
        "long-driving-sessions",
        Kind.LONG_SESSIONS,
        "readings",
        _VELOCITY,
        {
            "fleet": True,
            "window_ns": _FOUR_HOURS,
            "threshold": DRIVING_ABOVE,
            "limit": long_session_buckets(5, _FOUR_HOURS),
        },
    ),
    (
        "long-daily-sessions",
        Kind.LONG_SESSIONS,
        "readings",
        _VELOCITY,
        {
            "fleet": True,
            "window_ns": DAY_NS,
            "threshold": DRIVING_ABOVE,
            "limit": long_session_buckets(35, DAY_NS),
        },
    ),
    (
        "avg-vs-projected-fuel-consumption",
        Kind.FLEET_FUEL,
        "readings",
        ("fuel_consumption", "nominal_fuel_consumption", "velocity"),
        {"threshold": DRIVING_ABOVE},
    ),
    ("avg-daily-driving-duration", Kind.DAILY_DRIVING, "readings", _VELOCITY, {"threshold": DRIVING_ABOVE}),
    (
        "avg-daily-driving-session",
        Kind.DRIVING_SESSION,
        "readings",
        _VELOCITY,
        {"threshold": SESSION_DRIVING_ABOVE},
    ),
    ("avg-load", Kind.FLEET_LOAD, "diagnostics", ("current_load", "load_capacity"), {}),
    ("daily-activity", Kind.DAILY_ACTIVITY, "diagnostics", ("status",), {"threshold": ACTIVE_BELOW}),
    ("breakdown-frequency", Kind.BREAKDOWNS, "diagnostics", ("status",), {}),
)


def iot_types(make: Callable[..., Any]) -> list[Any]:
    """The 12 types in TSBS's order, built by ``make`` (``QueryType``'s constructor)."""
    return [
        make(
            name, kind, measurement=measurement, reads=reads, family=FAMILY, bucket_ns=TEN_MINUTES_NS, **more
        )
        for name, kind, measurement, reads, more in _IOT_TYPES
    ]
