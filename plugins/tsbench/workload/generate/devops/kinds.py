"""The kinds of field a devops measurement is made of, and the base class of a measurement.

Each field is one of four kinds:

- fact: fixed per host for the whole run (memory size, disk size, kernel boot time, redis port …);
- counter (``Counters``): cumulative and never decreasing (a ``Counter`` scaled by a per-host rate).
  Counters start near rate × uptime, as on a machine running since its ``boot_time``; rare events
  (errors, drops, deadlocks …) step in a few epochs only;
- gauge (``Walk``): a bounded random walk (``ClampedWalk``, one step per epoch);
- derived: computed from the others so parts and wholes agree (``Tally`` sums derived increments,
  ``carry_forward`` holds a value between marked epochs).

Rates are per second and scale with the interval; walk steps are per epoch.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, ClampedWalk, Counter, stream
from tsbench.workload.generate.simulator import MeasurementChunk

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
DAY = 86_400.0

_NORMAL = NormalDist()


class Clock:
    """Run timing shared by the measurements: epoch length, and each host's boot time and uptime."""

    def __init__(self, spec: DatasetSpec, hosts: int):
        self.dt = spec.interval / 1e9  # seconds per epoch
        self.start = spec.start / 1e9  # seconds since 1970 at epoch 0
        rng = stream(spec.seed, "devops-boot")
        # hosts were booted between an hour and half a year before the data starts
        self.boot_time = np.floor(self.start - rng.uniform(3600.0, 180 * DAY, hosts)).astype(np.int64)
        self.uptime = self.start - self.boot_time  # seconds, float64

    def seconds(self, chunk: Chunk) -> np.ndarray:
        """Unix seconds of the chunk's epochs, shape ``(ne, 1)``."""
        return (self.start + (chunk.e0 + np.arange(chunk.ne)) * self.dt)[:, None]


def host_columns(chunk: Chunk) -> slice:
    """The chunk's hosts as a slice of per-host arrays."""
    return slice(chunk.h0, chunk.h0 + chunk.nh)


class Counters:
    """``k`` cumulative counters per host, as int64 counts that never decrease.

    A ``Counter`` runs in "activity" units and is scaled per (field, host): ``busy`` (per host, shared
    by the measurement's fields) × a small per-field jitter × the field's rate per second. Frequent
    counters step every epoch (mean rate·dt, relative noise ``cv``). Rare ones step in a share ``p`` of
    epochs only (a Counter with mean ``−z`` is positive with probability ``p``), ``rate·dt`` on average.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        per_second: list[float],
        dt: float,
        uptime: np.ndarray,
        busy: np.ndarray,
        cv: float = 0.4,
        rare: bool = False,
    ):
        base = np.asarray(per_second, dtype=np.float64)
        k, hosts = len(base), len(busy)
        rate = base[:, None] * busy[None, :] * rng.lognormal(0.0, 0.25, (k, hosts))  # counts per second
        if rare:
            p = np.clip(-np.expm1(-base * dt), 1e-12, 0.999)  # event probability per epoch
            z = np.array([_NORMAL.inv_cdf(1.0 - q) for q in p])
            gain = np.array([_NORMAL.pdf(x) for x in z]) - z * p  # E[max(0, N(-z, 1))]
            self.counter = Counter(rng, hosts, -z, 1.0, k)
            self.scale = rate * dt / gain[:, None]
        else:
            self.counter = Counter(rng, hosts, dt, cv * dt, k)
            self.scale = rate
        start = rate * uptime * rng.uniform(0.6, 1.0, (k, hosts))  # counted since boot, at varying rates
        self.counter.state[:] = start / self.scale

    def current(self) -> np.ndarray:
        """Counts reached so far, int64 ``(k, hosts)``."""
        return np.floor(self.counter.state * self.scale).astype(np.int64)

    def advance(self, rng: np.random.Generator, chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
        """Counts and their per-epoch increments for the chunk, both int64 ``(k, ne, nh)``."""
        cols = host_columns(chunk)
        scale = self.scale[:, None, cols]
        previous = np.floor(self.counter.state[:, cols] * scale[:, 0])
        counts = np.floor(self.counter.advance(rng, chunk.ne, chunk.h0, chunk.nh) * scale)
        steps = np.diff(counts, axis=1, prepend=previous[:, None, :])
        return counts.astype(np.int64), steps.astype(np.int64)


class Tally:
    """Running sums of non-negative increments per (field, host): counters derived from others."""

    def __init__(self, start: np.ndarray):
        self.state = np.array(start, dtype=np.float64, ndmin=2)  # (k, hosts)

    def add(self, steps: np.ndarray, chunk: Chunk) -> np.ndarray:
        """Add ``steps`` ``(k, ne, nh)`` (or ``(ne, nh)`` for k = 1); returns the int64 running sums."""
        steps = np.asarray(steps, dtype=np.float64).reshape(self.state.shape[0], chunk.ne, chunk.nh)
        cols = host_columns(chunk)
        sums = np.cumsum(steps, axis=1)
        sums += self.state[:, None, cols]
        self.state[:, cols] = sums[:, -1, :]
        return np.floor(sums).astype(np.int64)


class Walk:
    """Bounded random walks with a step size per column, values float64 ``(k, ne, nh)``.

    Runs a unit-step ``ClampedWalk`` on ``x / sd`` (clamping commutes with a positive scale) and scales
    back, so columns of very different magnitudes share one walk.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        hosts: int,
        lo: float | list[float],
        hi: float | list[float],
        sd: float | list[float],
        k: int,
        start_lo: float | list[float],
        start_hi: float | list[float],
    ):
        self.sd = np.broadcast_to(np.asarray(sd, dtype=np.float64), (k,)).copy()

        def unit(value: float | list[float]) -> np.ndarray:
            return np.broadcast_to(np.asarray(value, dtype=np.float64), (k,)) / self.sd

        self.walk = ClampedWalk(rng, hosts, unit(lo), unit(hi), 1.0, k, unit(start_lo), unit(start_hi))

    @property
    def state(self) -> np.ndarray:
        """Current values, float64 ``(k, hosts)``."""
        return self.walk.state.astype(np.float64) * self.sd[:, None]

    def advance(self, rng: np.random.Generator, chunk: Chunk) -> np.ndarray:
        values = self.walk.advance(rng, chunk.ne, chunk.h0, chunk.nh).astype(np.float64)
        values *= self.sd[:, None, None]
        return values


def carry_forward(mark: np.ndarray, values: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """``values`` at the latest marked epoch (inclusive) per host; ``carry`` before the first mark.

    ``mark`` and ``values`` are ``(ne, nh)``, ``carry`` is ``(nh,)``; the last row is the next carry.
    """
    ne, nh = mark.shape
    last = np.where(mark, np.arange(ne)[:, None], -1)
    np.maximum.accumulate(last, axis=0, out=last)
    return np.where(last >= 0, values[np.maximum(last, 0), np.arange(nh)], carry[None, :])


def to_int64(values: np.ndarray) -> np.ndarray:
    """Non-negative values truncated to int64."""
    return values.astype(np.int64)


class Part:
    """One devops measurement (other than cpu): its stream, its extra tags, its per-chunk values."""

    name = ""

    def __init__(self, seed: int, clock: Clock, hosts: int):
        self.rng = stream(seed, f"devops-{self.name}")
        self.tag_rng = stream(seed, f"devops-{self.name}-tags")
        self.clock = clock
        self.hosts = hosts
        self.tags: dict[str, np.ndarray] = {}
        self.busy = self.rng.lognormal(0.0, 0.5, hosts)  # how loaded this host's service is

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        raise NotImplementedError
