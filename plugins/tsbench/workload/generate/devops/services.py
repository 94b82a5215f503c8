"""The services' devops measurements: nginx, postgresl (TSBS's spelling) and redis."""

from __future__ import annotations

import numpy as np

from tsbench.workload.generate.common import Chunk, choose
from tsbench.workload.generate.devops.kinds import (
    GIB,
    KIB,
    MIB,
    Clock,
    Counters,
    Part,
    Tally,
    Walk,
    carry_forward,
    host_columns,
    to_int64,
)
from tsbench.workload.generate.simulator import MeasurementChunk

NGINX_PORTS = ("80", "8080", "8081", "8000")
REDIS_PORTS = ("6379", "6380", "6381", "6382")
REDIS_MAXMEMORY_GIB = (1, 2, 4, 8, 16)
REDIS_BACKLOG_MIB = (1, 1, 16, 64)


class Nginx(Part):
    """nginx stub_status: connection counters and connection-state gauges.

    ``accepts = handled + refused`` (refused is rare), ``requests = handled + keep-alive reuses``,
    ``active = reading + writing + waiting``.
    """

    name = "nginx"

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        numbers = self.tag_rng.integers(0, 100_000, hosts).astype(str).astype(object)
        self.tags = {"port": choose(self.tag_rng, NGINX_PORTS, hosts), "server": "nginx_" + numbers}
        rng = self.rng
        self.connections = Counters(rng, [20.0, 30.0], clock.dt, clock.uptime, self.busy)  # handled, reuses
        self.refused = Counters(rng, [2e-4], clock.dt, clock.uptime, self.busy, rare=True)
        self.states = Walk(
            rng, hosts, 0.0, [40.0, 120.0, 600.0], [1.0, 2.5, 8.0], 3, 0.0, [10.0, 30.0, 200.0]
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        connections, _ = self.connections.advance(rng, chunk)
        refused, _ = self.refused.advance(rng, chunk)
        reading, writing, waiting = to_int64(self.states.advance(rng, chunk))
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


class Postgres(Part):
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

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        rng = self.rng
        self.backends = Walk(rng, hosts, 1.0, 300.0, 2.0, 1, 5.0, 80.0)
        rates = [120.0, 1.2, 60.0, 6000.0, 2500.0, 15000.0, 50.0, 35.0, 8.0, 3.0]
        self.work = Counters(rng, rates, clock.dt, clock.uptime, self.busy)
        self.rare = Counters(rng, [2e-3, 1e-6, 1e-5], clock.dt, clock.uptime, self.busy, rare=True)
        self.read_ms = rng.uniform(0.02, 0.5, hosts)  # milliseconds per block read
        self.temp_size = rng.lognormal(np.log(16 * MIB), 0.7, hosts)  # mean bytes per temp file
        blocks = self.work.current()[2]
        self.read_time = Tally(blocks * self.read_ms)
        self.temp_bytes = Tally(self.rare.current()[0] * self.temp_size)

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        cols = host_columns(chunk)
        backends = to_int64(self.backends.advance(rng, chunk)[0])
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


class Redis(Part):
    """Redis INFO: a server started after boot, with traffic counters, memory gauges and snapshots.

    ``uptime_in_seconds`` follows the clock; ``instantaneous_ops_per_sec`` is the epoch's hits + misses +
    writes per second, the kbps fields that rate × request/reply size; ``used_memory_rss =
    used_memory × mem_fragmentation_ratio``; ``used_memory_peak`` is the running maximum; snapshots
    every few minutes reset ``rdb_changes_since_last_save`` and set ``latest_fork_usec`` (∝ memory);
    ``master_repl_offset`` counts written bytes; ``repl_backlog_histlen ≤ repl_backlog_size``;
    sync counters move only on hosts with replicas.
    """

    name = "redis"

    def __init__(self, seed: int, clock: Clock, hosts: int):
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
        self.traffic = Counters(rng, [4.0, 1.5, 900.0, 90.0, 300.0], dt, uptime, self.busy)
        # evicted keys, sync_full, sync_partial_ok, sync_partial_err
        self.rare = Counters(rng, [0.02, 2e-5, 1e-5, 2e-6], dt, uptime, self.busy, rare=True)
        self.rare.scale[1:] *= self.slaves > 0
        # cpu seconds: sys, user, sys of children, user of children
        self.cpu = Counters(rng, [0.03, 0.06, 0.002, 0.006], dt, uptime, self.busy)
        # clients, memory share of maxmemory, fragmentation, channels, patterns, request and reply bytes
        self.gauges = Walk(
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
        self.peak = to_int64(np.minimum(memory * rng.uniform(1.0, 1.3, hosts), self.maxmemory))
        self.fork_usec = rng.uniform(8.0, 25.0, hosts)  # per MiB of used memory
        self.save_period = np.maximum(1, np.round(rng.uniform(300.0, 3600.0, hosts) / dt)).astype(np.int64)
        self.save_phase = rng.integers(0, 1 << 30, hosts) % self.save_period
        writes = self.traffic.current()[4]
        pending = rng.uniform(0.0, 1.0, hosts) * self.save_period * dt * self.traffic.scale[4]
        self.writes_at_save = np.maximum(0, writes - np.floor(pending)).astype(np.int64)
        self.last_fork = np.floor(memory / MIB * self.fork_usec + 100.0)
        self.command_size = rng.uniform(30.0, 200.0, hosts)  # replication bytes per write
        self.offset = Tally(writes * self.command_size)

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng, dt, cols, ne, nh = self.rng, self.clock.dt, host_columns(chunk), chunk.ne, chunk.nh
        traffic, steps = self.traffic.advance(rng, chunk)
        rare, _ = self.rare.advance(rng, chunk)
        cpu, _ = self.cpu.advance(rng, chunk)
        clients, share, fragmentation, channels, patterns, request, reply = self.gauges.advance(rng, chunk)
        uptime = to_int64(np.floor(self.clock.seconds(chunk)) - self.started[cols])
        ops = (steps[2] + steps[3] + steps[4]) / dt
        memory = to_int64(share * self.maxmemory[cols])
        rss = to_int64(memory * fragmentation)
        peak = np.maximum(np.maximum.accumulate(memory, axis=0), self.peak[cols])
        self.peak[cols] = peak[-1]
        epoch = chunk.e0 + np.arange(ne)[:, None]
        saved = (epoch + self.save_phase[cols]) % self.save_period[cols] == 0
        at_save = carry_forward(saved, traffic[4], self.writes_at_save[cols])
        self.writes_at_save[cols] = at_save[-1]
        fork = carry_forward(
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
                "instantaneous_ops_per_sec": to_int64(ops),
                "instantaneous_input_kbps": to_int64(ops * request / KIB),
                "instantaneous_output_kbps": to_int64(ops * reply / KIB),
                "connected_clients": to_int64(clients),
                "used_memory": memory,
                "used_memory_rss": rss,
                "used_memory_peak": peak,
                "used_memory_lua": np.broadcast_to(self.lua[cols], (ne, nh)).copy(),
                "rdb_changes_since_last_save": traffic[4] - at_save,
                "sync_full": rare[1],
                "sync_partial_ok": rare[2],
                "sync_partial_err": rare[3],
                "pubsub_channels": to_int64(channels),
                "pubsub_patterns": to_int64(patterns),
                "latest_fork_usec": to_int64(fork),
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
