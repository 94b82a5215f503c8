"""The host's own devops measurements: diskio, disk, kernel, mem and net."""

from __future__ import annotations

import numpy as np

from tsbench.workload.generate.common import Chunk, choose
from tsbench.workload.generate.devops.kinds import (
    GIB,
    KIB,
    Clock,
    Counters,
    Part,
    Tally,
    Walk,
    host_columns,
    to_int64,
)
from tsbench.workload.generate.simulator import MeasurementChunk

DISK_SIZES_GIB = (128, 256, 512, 1024, 2048, 4096)
FSTYPES = ("ext3", "ext4", "btrfs", "xfs")
BYTES_PER_INODE = {"ext3": 16 * KIB, "ext4": 16 * KIB, "btrfs": 32 * KIB, "xfs": 64 * KIB}
MEM_SIZES_GIB = (2, 4, 8, 16, 32, 64, 128, 256)
INTERFACES = ("eth0", "eth1", "eth2", "eth3")


class DiskIO(Part):
    """Block-device counters: operations, the bytes they moved and the time they took."""

    name = "diskio"

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        digits = self.tag_rng.integers(0, (1000, 1000, 10000), size=(hosts, 3))
        self.tags = {"serial": np.array([f"{a:03d}-{b:03d}-{c:04d}" for a, b, c in digits], dtype=object)}
        rng = self.rng
        self.ops = Counters(rng, [25.0, 60.0], clock.dt, clock.uptime, self.busy)  # reads, writes
        # bytes per operation and milliseconds per operation (gauges), read then write
        self.size = Walk(rng, hosts, 4 * KIB, [256 * KIB, 128 * KIB], 512.0, 2, 8 * KIB, 64 * KIB)
        self.latency = Walk(rng, hosts, [0.1, 0.05], [20.0, 10.0], [0.1, 0.05], 2, 0.3, 4.0)
        self.overlap = rng.uniform(0.4, 0.9, hosts)  # device busy time / summed operation time
        ops = self.ops.current()
        op_time = ops * self.latency.state
        self.bytes = Tally(ops * self.size.state)
        self.time = Tally(op_time)
        self.io_time = Tally(np.minimum(clock.uptime * 1000.0, op_time.sum(axis=0) * self.overlap))

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        rng = self.rng
        ops, steps = self.ops.advance(rng, chunk)
        size = self.size.advance(rng, chunk)
        latency = self.latency.advance(rng, chunk)
        nbytes = self.bytes.add(steps * size, chunk)
        op_time = steps * latency
        time = self.time.add(op_time, chunk)
        busy = op_time.sum(axis=0) * self.overlap[host_columns(chunk)]
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


class Disk(Part):
    """A file system: fixed size, used share and inode share as slow walks; the rest derived."""

    name = "disk"

    def __init__(self, seed: int, clock: Clock, hosts: int):
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
        self.share = Walk(
            rng, hosts, [0.01, 0.0005], [0.99, 0.95], [2e-4, 1e-4], 2, [0.05, 0.005], [0.85, 0.3]
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        share = self.share.advance(self.rng, chunk)
        cols = host_columns(chunk)
        total = np.broadcast_to(self.total[cols], (chunk.ne, chunk.nh))
        inodes_total = np.broadcast_to(self.inodes_total[cols], (chunk.ne, chunk.nh))
        used = to_int64(share[0] * total)
        inodes_used = to_int64(share[1] * inodes_total)
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


class Kernel(Part):
    """Kernel counters since boot; ``boot_time`` (Unix seconds) is fixed per host."""

    name = "kernel"
    FIELDS = ("interrupts", "context_switches", "processes_forked", "disk_pages_in", "disk_pages_out")

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        self.counts = Counters(
            self.rng, [1200.0, 3500.0, 2.5, 40.0, 110.0], clock.dt, clock.uptime, self.busy
        )

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        counts, _ = self.counts.advance(self.rng, chunk)
        boot = np.broadcast_to(self.clock.boot_time[host_columns(chunk)], (chunk.ne, chunk.nh)).copy()
        return MeasurementChunk({"boot_time": boot} | {name: counts[i] for i, name in enumerate(self.FIELDS)})


class Mem(Part):
    """Memory: fixed total; used share, cached and buffered shares of the rest as walks.

    ``used + cached + buffered + free = total``; ``available = free + buffered + reclaimable cache``
    (a fixed share of ``cached`` per host), so ``used + available ≤ total``.
    """

    name = "mem"

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        rng = self.rng
        self.total = (
            np.asarray(MEM_SIZES_GIB, dtype=np.int64)[rng.integers(0, len(MEM_SIZES_GIB), hosts)] * GIB
        )
        self.reclaimable = rng.uniform(0.7, 0.95, hosts)
        self.share = Walk(
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
        cols = host_columns(chunk)
        total = np.broadcast_to(self.total[cols], (chunk.ne, chunk.nh))
        used = to_int64(share[0] * total)
        rest = total - used
        cached = to_int64(share[1] * rest)
        buffered = to_int64(share[2] * rest)
        free = rest - cached - buffered
        available = free + buffered + to_int64(cached * self.reclaimable[cols])
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


class Net(Part):
    """Interface counters: packets (counters), bytes = packets × packet size (a walk), rare faults."""

    name = "net"

    def __init__(self, seed: int, clock: Clock, hosts: int):
        super().__init__(seed, clock, hosts)
        self.tags = {"interface": choose(self.tag_rng, INTERFACES, hosts)}
        rng = self.rng
        self.packets = Counters(rng, [350.0, 450.0], clock.dt, clock.uptime, self.busy)  # sent, recv
        self.size = Walk(rng, hosts, 64.0, 1500.0, 8.0, 2, [200.0, 300.0], [1200.0, 1400.0])
        self.bytes = Tally(self.packets.current() * self.size.state)
        # err_in, err_out, drop_in, drop_out
        self.faults = Counters(rng, [2e-5, 1e-5, 3e-4, 5e-5], clock.dt, clock.uptime, self.busy, rare=True)

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
