"""devops: TSBS's full host use case — cpu plus eight more measurements per host per epoch.

cpu is exactly the cpu-only simulation (same stream, same host tags). Every other measurement draws
from its own ``stream(seed, "devops-<name>")`` (its extra tags from ``"devops-<name>-tags"``), so
adding or changing one never moves another. Each field is one of four kinds:

- fact: fixed per host for the whole run (memory size, disk size, kernel boot time, redis port …);
- counter: cumulative and never decreasing (a ``Counter`` scaled by a per-host rate). Counters start
  near rate × uptime, as on a machine running since its ``boot_time``; rare events (errors, drops,
  deadlocks …) step in a few epochs only;
- gauge: a bounded random walk (``ClampedWalk``, one step per epoch);
- derived: computed from the others so parts and wholes agree (``disk.used + disk.free = total``,
  ``mem.used_percent = 100·used/total``, ``nginx.active = reading + writing + waiting``,
  ``diskio.read_bytes`` grows only with ``reads`` …).

Rates are per second and scale with the interval; walk steps are per epoch.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from tsbench.spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, ClampedWalk, Counter, choose, stream
from tsbench.workload.generate.cpu import CpuWalk, host_tags
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
DAY = 86_400.0

DISK_SIZES_GIB = (128, 256, 512, 1024, 2048, 4096)
FSTYPES = ("ext3", "ext4", "btrfs", "xfs")
BYTES_PER_INODE = {"ext3": 16 * KIB, "ext4": 16 * KIB, "btrfs": 32 * KIB, "xfs": 64 * KIB}
MEM_SIZES_GIB = (2, 4, 8, 16, 32, 64, 128, 256)
INTERFACES = ("eth0", "eth1", "eth2", "eth3")
NGINX_PORTS = ("80", "8080", "8081", "8000")
REDIS_PORTS = ("6379", "6380", "6381", "6382")
REDIS_MAXMEMORY_GIB = (1, 2, 4, 8, 16)
REDIS_BACKLOG_MIB = (1, 1, 16, 64)

_NORMAL = NormalDist()


class _Clock:
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


def _cols(chunk: Chunk) -> slice:
    return slice(chunk.h0, chunk.h0 + chunk.nh)


class _Counters:
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
        cols = _cols(chunk)
        scale = self.scale[:, None, cols]
        previous = np.floor(self.counter.state[:, cols] * scale[:, 0])
        counts = np.floor(self.counter.advance(rng, chunk.ne, chunk.h0, chunk.nh) * scale)
        steps = np.diff(counts, axis=1, prepend=previous[:, None, :])
        return counts.astype(np.int64), steps.astype(np.int64)


class _Tally:
    """Running sums of non-negative increments per (field, host): counters derived from others."""

    def __init__(self, start: np.ndarray):
        self.state = np.array(start, dtype=np.float64, ndmin=2)  # (k, hosts)

    def add(self, steps: np.ndarray, chunk: Chunk) -> np.ndarray:
        """Add ``steps`` ``(k, ne, nh)`` (or ``(ne, nh)`` for k = 1); returns the int64 running sums."""
        steps = np.asarray(steps, dtype=np.float64).reshape(self.state.shape[0], chunk.ne, chunk.nh)
        cols = _cols(chunk)
        sums = np.cumsum(steps, axis=1)
        sums += self.state[:, None, cols]
        self.state[:, cols] = sums[:, -1, :]
        return np.floor(sums).astype(np.int64)


class _Walk:
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


def _carry_forward(mark: np.ndarray, values: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """``values`` at the latest marked epoch (inclusive) per host; ``carry`` before the first mark.

    ``mark`` and ``values`` are ``(ne, nh)``, ``carry`` is ``(nh,)``; the last row is the next carry.
    """
    ne, nh = mark.shape
    last = np.where(mark, np.arange(ne)[:, None], -1)
    np.maximum.accumulate(last, axis=0, out=last)
    return np.where(last >= 0, values[np.maximum(last, 0), np.arange(nh)], carry[None, :])


def _int(values: np.ndarray) -> np.ndarray:
    """Non-negative values truncated to int64."""
    return values.astype(np.int64)


class _Part:
    """One devops measurement (other than cpu): its stream, its extra tags, its per-chunk values."""

    name = ""

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        self.rng = stream(seed, f"devops-{self.name}")
        self.tag_rng = stream(seed, f"devops-{self.name}-tags")
        self.clock = clock
        self.hosts = hosts
        self.tags: dict[str, np.ndarray] = {}
        self.busy = self.rng.lognormal(0.0, 0.5, hosts)  # how loaded this host's service is

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        raise NotImplementedError


class _DiskIO(_Part):
    """Block-device counters: operations, the bytes they moved and the time they took."""

    name = "diskio"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        digits = self.tag_rng.integers(0, (1000, 1000, 10000), size=(hosts, 3))
        self.tags = {"serial": np.array([f"{a:03d}-{b:03d}-{c:04d}" for a, b, c in digits], dtype=object)}
        rng = self.rng
        self.ops = _Counters(rng, [25.0, 60.0], clock.dt, clock.uptime, self.busy)  # reads, writes
        # bytes per operation and milliseconds per operation (gauges), read then write
        self.size = _Walk(rng, hosts, 4 * KIB, [256 * KIB, 128 * KIB], 512.0, 2, 8 * KIB, 64 * KIB)
        self.latency = _Walk(rng, hosts, [0.1, 0.05], [20.0, 10.0], [0.1, 0.05], 2, 0.3, 4.0)
        self.overlap = rng.uniform(0.4, 0.9, hosts)  # device busy time / summed operation time
        ops = self.ops.current()
        op_time = ops * self.latency.state
        self.bytes = _Tally(ops * self.size.state)
        self.time = _Tally(op_time)
        self.io_time = _Tally(np.minimum(clock.uptime * 1000.0, op_time.sum(axis=0) * self.overlap))

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        ops, steps = self.ops.advance(rng, chunk)
        size = self.size.advance(rng, chunk)
        latency = self.latency.advance(rng, chunk)
        nbytes = self.bytes.add(steps * size, chunk)
        op_time = steps * latency
        time = self.time.add(op_time, chunk)
        busy = op_time.sum(axis=0) * self.overlap[_cols(chunk)]
        io_time = self.io_time.add(np.minimum(busy, self.clock.dt * 1000.0), chunk)
        return MeasurementChunk(
            {
                "reads": ops[0],
                "writes": ops[1],
                "read_bytes": nbytes[0],
                "write_bytes": nbytes[1],
                "read_time": time[0],
                "write_time": time[1],
                "io_time": io_time[0],
            }
        )


class _Disk(_Part):
    """A file system: fixed size, used share and inode share as slow walks; the rest derived."""

    name = "disk"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        letters = choose(self.tag_rng, ("a", "b", "c", "d"), hosts)
        partitions = self.tag_rng.integers(1, 4, hosts).astype(str).astype(object)
        fstypes = choose(self.tag_rng, FSTYPES, hosts)
        self.tags = {"path": "/dev/sd" + letters + partitions, "fstype": fstypes}
        rng = self.rng
        self.total = (
            np.asarray(DISK_SIZES_GIB, dtype=np.int64)[rng.integers(0, len(DISK_SIZES_GIB), hosts)] * GIB
        )
        per_inode = np.array([BYTES_PER_INODE[f] for f in fstypes], dtype=np.int64)
        self.inodes_total = self.total // per_inode
        # used share of the bytes, used share of the inodes
        self.share = _Walk(
            rng, hosts, [0.01, 0.0005], [0.99, 0.95], [2e-4, 1e-4], 2, [0.05, 0.005], [0.85, 0.3]
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        share = self.share.advance(self.rng, chunk)
        cols = _cols(chunk)
        total = np.broadcast_to(self.total[cols], (chunk.ne, chunk.nh))
        inodes_total = np.broadcast_to(self.inodes_total[cols], (chunk.ne, chunk.nh))
        used = _int(share[0] * total)
        inodes_used = _int(share[1] * inodes_total)
        return MeasurementChunk(
            {
                "total": total.copy(),
                "free": total - used,
                "used": used,
                "used_percent": 100.0 * used / total,
                "inodes_total": inodes_total.copy(),
                "inodes_free": inodes_total - inodes_used,
                "inodes_used": inodes_used,
            }
        )


class _Kernel(_Part):
    """Kernel counters since boot; ``boot_time`` (Unix seconds) is fixed per host."""

    name = "kernel"
    FIELDS = ("interrupts", "context_switches", "processes_forked", "disk_pages_in", "disk_pages_out")

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        self.counts = _Counters(
            self.rng, [1200.0, 3500.0, 2.5, 40.0, 110.0], clock.dt, clock.uptime, self.busy
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        counts, _ = self.counts.advance(self.rng, chunk)
        boot = np.broadcast_to(self.clock.boot_time[_cols(chunk)], (chunk.ne, chunk.nh)).copy()
        return MeasurementChunk({"boot_time": boot} | {name: counts[i] for i, name in enumerate(self.FIELDS)})


class _Mem(_Part):
    """Memory: fixed total; used share, cached and buffered shares of the rest as walks.

    ``used + cached + buffered + free = total``; ``available = free + buffered + reclaimable cache``
    (a fixed share of ``cached`` per host), so ``used + available ≤ total``.
    """

    name = "mem"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        rng = self.rng
        self.total = (
            np.asarray(MEM_SIZES_GIB, dtype=np.int64)[rng.integers(0, len(MEM_SIZES_GIB), hosts)] * GIB
        )
        self.reclaimable = rng.uniform(0.7, 0.95, hosts)
        self.share = _Walk(
            rng,
            hosts,
            [0.03, 0.0, 0.0],
            [0.97, 0.85, 0.1],
            [2e-3, 3e-3, 5e-4],
            3,
            [0.1, 0.1, 0.005],
            [0.8, 0.7, 0.05],
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        share = self.share.advance(self.rng, chunk)
        cols = _cols(chunk)
        total = np.broadcast_to(self.total[cols], (chunk.ne, chunk.nh))
        used = _int(share[0] * total)
        rest = total - used
        cached = _int(share[1] * rest)
        buffered = _int(share[2] * rest)
        free = rest - cached - buffered
        available = free + buffered + _int(cached * self.reclaimable[cols])
        return MeasurementChunk(
            {
                "total": total.copy(),
                "available": available,
                "used": used,
                "free": free,
                "cached": cached,
                "buffered": buffered,
                "used_percent": 100.0 * used / total,
                "available_percent": 100.0 * available / total,
                "buffered_percent": 100.0 * buffered / total,
            }
        )


class _Net(_Part):
    """Interface counters: packets (counters), bytes = packets × packet size (a walk), rare faults."""

    name = "net"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        self.tags = {"interface": choose(self.tag_rng, INTERFACES, hosts)}
        rng = self.rng
        self.packets = _Counters(rng, [350.0, 450.0], clock.dt, clock.uptime, self.busy)  # sent, recv
        self.size = _Walk(rng, hosts, 64.0, 1500.0, 8.0, 2, [200.0, 300.0], [1200.0, 1400.0])
        self.bytes = _Tally(self.packets.current() * self.size.state)
        # err_in, err_out, drop_in, drop_out
        self.faults = _Counters(rng, [2e-5, 1e-5, 3e-4, 5e-5], clock.dt, clock.uptime, self.busy, rare=True)

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        packets, steps = self.packets.advance(rng, chunk)
        size = self.size.advance(rng, chunk)
        nbytes = self.bytes.add(steps * size, chunk)
        faults, _ = self.faults.advance(rng, chunk)
        return MeasurementChunk(
            {
                "bytes_sent": nbytes[0],
                "bytes_recv": nbytes[1],
                "packets_sent": packets[0],
                "packets_recv": packets[1],
                "err_in": faults[0],
                "err_out": faults[1],
                "drop_in": faults[2],
                "drop_out": faults[3],
            }
        )


class _Nginx(_Part):
    """nginx stub_status: connection counters and connection-state gauges.

    ``accepts = handled + refused`` (refused is rare), ``requests = handled + keep-alive reuses``,
    ``active = reading + writing + waiting``.
    """

    name = "nginx"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        numbers = self.tag_rng.integers(0, 100_000, hosts).astype(str).astype(object)
        self.tags = {"port": choose(self.tag_rng, NGINX_PORTS, hosts), "server": "nginx_" + numbers}
        rng = self.rng
        self.connections = _Counters(rng, [20.0, 30.0], clock.dt, clock.uptime, self.busy)  # handled, reuses
        self.refused = _Counters(rng, [2e-4], clock.dt, clock.uptime, self.busy, rare=True)
        self.states = _Walk(
            rng, hosts, 0.0, [40.0, 120.0, 600.0], [1.0, 2.5, 8.0], 3, 0.0, [10.0, 30.0, 200.0]
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        connections, _ = self.connections.advance(rng, chunk)
        refused, _ = self.refused.advance(rng, chunk)
        reading, writing, waiting = _int(self.states.advance(rng, chunk))
        handled = connections[0]
        return MeasurementChunk(
            {
                "accepts": handled + refused[0],
                "active": reading + writing + waiting,
                "handled": handled,
                "reading": reading,
                "requests": handled + connections[1],
                "waiting": waiting,
                "writing": writing,
            }
        )


class _Postgres(_Part):
    """pg_stat_database: backends (gauge), work counters, rare temp files / conflicts / deadlocks.

    ``tup_returned ≥ tup_fetched``, ``blk_read_time`` grows with ``blks_read`` (per-host latency), and
    ``temp_bytes`` grows only when ``temp_files`` does.
    """

    name = "postgresl"
    WORK = (
        "xact_commit",
        "xact_rollback",
        "blks_read",
        "blks_hit",
        "tup_fetched",
        "tup_scanned",  # returned but not fetched: tup_returned = tup_fetched + tup_scanned
        "tup_inserted",
        "tup_updated",
        "tup_deleted",
        "blk_write_time",
    )

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        rng = self.rng
        self.backends = _Walk(rng, hosts, 1.0, 300.0, 2.0, 1, 5.0, 80.0)
        rates = [120.0, 1.2, 60.0, 6000.0, 2500.0, 15000.0, 50.0, 35.0, 8.0, 3.0]
        self.work = _Counters(rng, rates, clock.dt, clock.uptime, self.busy)
        self.rare = _Counters(rng, [2e-3, 1e-6, 1e-5], clock.dt, clock.uptime, self.busy, rare=True)
        self.read_ms = rng.uniform(0.02, 0.5, hosts)  # milliseconds per block read
        self.temp_size = rng.lognormal(np.log(16 * MIB), 0.7, hosts)  # mean bytes per temp file
        blocks = self.work.current()[2]
        self.read_time = _Tally(blocks * self.read_ms)
        self.temp_bytes = _Tally(self.rare.current()[0] * self.temp_size)

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        cols = _cols(chunk)
        backends = _int(self.backends.advance(rng, chunk)[0])
        work, steps = self.work.advance(rng, chunk)
        rare, rare_steps = self.rare.advance(rng, chunk)
        read_time = self.read_time.add(steps[2] * self.read_ms[cols], chunk)
        file_sizes = self.temp_size[cols] * rng.lognormal(-0.125, 0.5, (chunk.ne, chunk.nh))
        temp_bytes = self.temp_bytes.add(rare_steps[0] * file_sizes, chunk)
        w = dict(zip(self.WORK, work, strict=True))
        return MeasurementChunk(
            {
                "numbackends": backends,
                "xact_commit": w["xact_commit"],
                "xact_rollback": w["xact_rollback"],
                "blks_read": w["blks_read"],
                "blks_hit": w["blks_hit"],
                "tup_returned": w["tup_fetched"] + w["tup_scanned"],
                "tup_fetched": w["tup_fetched"],
                "tup_inserted": w["tup_inserted"],
                "tup_updated": w["tup_updated"],
                "tup_deleted": w["tup_deleted"],
                "conflicts": rare[1],
                "temp_files": rare[0],
                "temp_bytes": temp_bytes[0],
                "deadlocks": rare[2],
                "blk_read_time": read_time[0],
                "blk_write_time": w["blk_write_time"],
            }
        )


class _Redis(_Part):
    """Redis INFO: a server started after boot, with traffic counters, memory gauges and snapshots.

    ``uptime_in_seconds`` follows the clock; ``instantaneous_ops_per_sec`` is the epoch's hits + misses +
    writes per second, the kbps fields that rate × request/reply size; ``used_memory_rss =
    used_memory × mem_fragmentation_ratio``; ``used_memory_peak`` is the running maximum; snapshots
    every few minutes reset ``rdb_changes_since_last_save`` and set ``latest_fork_usec`` (∝ memory);
    ``master_repl_offset`` counts written bytes; ``repl_backlog_histlen ≤ repl_backlog_size``;
    sync counters move only on hosts with replicas.
    """

    name = "redis"

    def __init__(self, seed: int, clock: _Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        numbers = self.tag_rng.integers(0, 100_000, hosts).astype(str).astype(object)
        self.tags = {"port": choose(self.tag_rng, REDIS_PORTS, hosts), "server": "redis_" + numbers}
        rng, dt = self.rng, clock.dt
        self.started = clock.boot_time + np.floor(rng.uniform(0.0, 0.9, hosts) * clock.uptime).astype(
            np.int64
        )
        uptime = clock.start - self.started
        self.maxmemory = np.asarray(REDIS_MAXMEMORY_GIB, dtype=np.int64)[rng.integers(0, 5, hosts)] * GIB
        self.slaves = rng.choice(np.array([0, 0, 1, 2], dtype=np.int64), hosts)
        self.backlog_size = np.asarray(REDIS_BACKLOG_MIB, dtype=np.int64)[rng.integers(0, 4, hosts)] * MIB
        self.lua = 37 * KIB + KIB * rng.integers(0, 64, hosts)
        # connections received, expired keys, keyspace hits, keyspace misses, write commands
        self.traffic = _Counters(rng, [4.0, 1.5, 900.0, 90.0, 300.0], dt, uptime, self.busy)
        # evicted keys, sync_full, sync_partial_ok, sync_partial_err
        self.rare = _Counters(rng, [0.02, 2e-5, 1e-5, 2e-6], dt, uptime, self.busy, rare=True)
        self.rare.scale[1:] *= self.slaves > 0
        # cpu seconds: sys, user, sys of children, user of children
        self.cpu = _Counters(rng, [0.03, 0.06, 0.002, 0.006], dt, uptime, self.busy)
        # clients, memory share of maxmemory, fragmentation, channels, patterns, request and reply bytes
        self.gauges = _Walk(
            rng,
            hosts,
            [1.0, 0.005, 1.0, 0.0, 0.0, 40.0, 40.0],
            [2000.0, 0.98, 2.5, 64.0, 16.0, 4096.0, 16384.0],
            [4.0, 1e-3, 2e-3, 0.3, 0.1, 8.0, 16.0],
            7,
            [5.0, 0.05, 1.02, 0.0, 0.0, 60.0, 80.0],
            [300.0, 0.7, 1.4, 10.0, 4.0, 600.0, 2000.0],
        )
        memory = self.gauges.state[1] * self.maxmemory
        self.peak = _int(np.minimum(memory * rng.uniform(1.0, 1.3, hosts), self.maxmemory))
        self.fork_usec = rng.uniform(8.0, 25.0, hosts)  # per MiB of used memory
        self.save_period = np.maximum(1, np.round(rng.uniform(300.0, 3600.0, hosts) / dt)).astype(np.int64)
        self.save_phase = rng.integers(0, 1 << 30, hosts) % self.save_period
        writes = self.traffic.current()[4]
        pending = rng.uniform(0.0, 1.0, hosts) * self.save_period * dt * self.traffic.scale[4]
        self.writes_at_save = np.maximum(0, writes - np.floor(pending)).astype(np.int64)
        self.last_fork = np.floor(memory / MIB * self.fork_usec + 100.0)
        self.command_size = rng.uniform(30.0, 200.0, hosts)  # replication bytes per write
        self.offset = _Tally(writes * self.command_size)

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng, dt, cols, ne, nh = self.rng, self.clock.dt, _cols(chunk), chunk.ne, chunk.nh
        traffic, steps = self.traffic.advance(rng, chunk)
        rare, _ = self.rare.advance(rng, chunk)
        cpu, _ = self.cpu.advance(rng, chunk)
        clients, share, fragmentation, channels, patterns, request, reply = self.gauges.advance(rng, chunk)
        uptime = _int(np.floor(self.clock.seconds(chunk)) - self.started[cols])
        ops = (steps[2] + steps[3] + steps[4]) / dt
        memory = _int(share * self.maxmemory[cols])
        rss = _int(memory * fragmentation)
        peak = np.maximum(np.maximum.accumulate(memory, axis=0), self.peak[cols])
        self.peak[cols] = peak[-1]
        epoch = chunk.e0 + np.arange(ne)[:, None]
        saved = (epoch + self.save_phase[cols]) % self.save_period[cols] == 0
        at_save = _carry_forward(saved, traffic[4], self.writes_at_save[cols])
        self.writes_at_save[cols] = at_save[-1]
        fork = _carry_forward(
            saved, np.floor(memory / MIB * self.fork_usec[cols] + 100.0), self.last_fork[cols]
        )
        self.last_fork[cols] = fork[-1]
        offset = self.offset.add(steps[4] * self.command_size[cols], chunk)[0]
        active = np.broadcast_to((self.slaves[cols] > 0).astype(np.int64), (ne, nh))
        backlog = np.broadcast_to(self.backlog_size[cols], (ne, nh))
        return MeasurementChunk(
            {
                "uptime_in_seconds": uptime,
                "total_connections_received": traffic[0],
                "expired_keys": traffic[1],
                "evicted_keys": rare[0],
                "keyspace_hits": traffic[2],
                "keyspace_misses": traffic[3],
                "instantaneous_ops_per_sec": _int(ops),
                "instantaneous_input_kbps": _int(ops * request / KIB),
                "instantaneous_output_kbps": _int(ops * reply / KIB),
                "connected_clients": _int(clients),
                "used_memory": memory,
                "used_memory_rss": rss,
                "used_memory_peak": peak,
                "used_memory_lua": np.broadcast_to(self.lua[cols], (ne, nh)).copy(),
                "rdb_changes_since_last_save": traffic[4] - at_save,
                "sync_full": rare[1],
                "sync_partial_ok": rare[2],
                "sync_partial_err": rare[3],
                "pubsub_channels": _int(channels),
                "pubsub_patterns": _int(patterns),
                "latest_fork_usec": _int(fork),
                "connected_slaves": np.broadcast_to(self.slaves[cols], (ne, nh)).copy(),
                "master_repl_offset": offset,
                "repl_backlog_active": active.copy(),
                "repl_backlog_size": backlog.copy(),
                "repl_backlog_histlen": active * np.minimum(offset, backlog),
                "mem_fragmentation_ratio": rss / np.maximum(memory, 1),
                "used_cpu_sys": cpu[0],
                "used_cpu_user": cpu[1],
                "used_cpu_sys_children": cpu[2],
                "used_cpu_user_children": cpu[3],
            }
        )


PARTS: tuple[type[_Part], ...] = (_DiskIO, _Disk, _Kernel, _Mem, _Net, _Nginx, _Postgres, _Redis)


class Devops(Simulator):
    """cpu (identical to cpu-only) plus diskio, disk, kernel, mem, net, nginx, postgresl and redis."""

    use_case_name = "devops"

    def __init__(self, spec: DatasetSpec):
        super().__init__(spec)
        self.cpu = CpuWalk(spec.seed, self.entities)
        clock = _Clock(spec, self.entities)
        self.parts = {cls.name: cls(spec.seed, clock, self.entities) for cls in PARTS}

    def entity_tags(self) -> dict[str, np.ndarray]:
        return host_tags(self.spec.seed, self.entities, self.entity_names())

    def extra_tags(self, measurement: str) -> dict[str, np.ndarray]:
        part = self.parts.get(measurement)
        return dict(part.tags) if part is not None else {}

    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        values = {"cpu": self.cpu.chunk(chunk)}
        for name, part in self.parts.items():
            values[name] = part.chunk(chunk)
        return values
