"""Building blocks shared by the simulators: seeded streams, chunk plans, random walks.

Determinism contract: for one ``DatasetSpec`` and one ``GENERATOR_VERSION`` the generated rows are
identical, because every random draw comes from a stream derived from ``(seed, purpose)`` and the
chunk plan is a pure function of the spec.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

GENERATOR_VERSION = "3"  # 3: iot points without a name tag
ROWS_PER_CHUNK = 1 << 18


def stream(seed: int, purpose: str) -> np.random.Generator:
    """An independent PCG64 stream for one purpose ("tags", "walk", …) of one seed."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(purpose.encode())])))


@dataclass(frozen=True)
class Chunk:
    """A block of epochs ``[e0, e0 + ne)`` for entities ``[h0, h0 + nh)``."""

    e0: int
    ne: int
    h0: int
    nh: int

    @property
    def rows(self) -> int:
        return self.ne * self.nh


def plan_chunks(
    epochs: int, entities: int, run_length: int = 1, target_rows: int = ROWS_PER_CHUNK
) -> list[Chunk]:
    """Split ``epochs × entities`` into chunks of about ``target_rows`` rows.

    Epoch blocks are a multiple of ``run_length`` (so per-entity runs never straddle chunks); when one
    block of ``run_length`` epochs already exceeds ``target_rows``, entities are split into slices.
    """
    per_block = max(1, target_rows // max(1, entities * run_length)) * run_length
    slice_size = entities if entities * run_length <= target_rows else max(1, target_rows // run_length)
    chunks = []
    for e0 in range(0, epochs, per_block):
        ne = min(per_block, epochs - e0)
        for h0 in range(0, entities, slice_size):
            chunks.append(Chunk(e0, ne, h0, min(slice_size, entities - h0)))
    return chunks


def row_order(ne: int, nh: int, run_length: int) -> np.ndarray | None:
    """Permutation from interleaved order (epoch-major) to runs of ``run_length`` rows per entity.

    Returns None when the interleaved order is kept (``run_length`` 1).
    """
    if run_length <= 1:
        return None
    index = np.arange(ne * nh, dtype=np.int64).reshape(ne, nh)
    parts = []
    for b0 in range(0, ne, run_length):
        block = index[b0 : b0 + run_length]  # (n, nh)
        parts.append(block.T.reshape(-1))  # entity-major inside the block
    return np.concatenate(parts)


class ClampedWalk:
    """Independent random walks, one per (column, entity), each clamped to ``[lo, hi]`` at every step.

    ``x[t] = clamp(x[t-1] + sd * N(0, 1), lo, hi)``; the start is uniform in ``[start_lo, start_hi)``.
    ``lo``, ``hi`` and ``sd`` are scalars or per-column arrays of length ``k``. Values are float32
    (enough for bounded walks) in column-major layout so every column converts contiguously.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        entities: int,
        lo: np.ndarray | float,
        hi: np.ndarray | float,
        sd: np.ndarray | float = 1.0,
        k: int = 1,
        start_lo: np.ndarray | float | None = None,
        start_hi: np.ndarray | float | None = None,
    ):
        self.lo = _per_column(lo, k)
        self.hi = _per_column(hi, k)
        self.sd = _per_column(sd, k)
        low = self.lo if start_lo is None else _per_column(start_lo, k)
        high = self.hi if start_hi is None else _per_column(start_hi, k)
        self.state = rng.uniform(low, high, size=(entities, k)).T.astype(np.float32)  # (k, entities)

    def advance(self, rng: np.random.Generator, ne: int, h0: int, nh: int) -> np.ndarray:
        """Next ``ne`` values for entities ``[h0, h0+nh)``: float32 array ``(k, ne, nh)``."""
        k = self.state.shape[0]
        values = rng.standard_normal((k, ne, nh), dtype=np.float32)
        if not np.all(self.sd == 1.0):
            values *= self.sd.astype(np.float32)[:, None, None]
        uniform = np.all(self.lo == self.lo[0]) and np.all(self.hi == self.hi[0])
        lo = self.lo[0] if uniform else self.lo.astype(np.float32)[:, None]
        hi = self.hi[0] if uniform else self.hi.astype(np.float32)[:, None]
        previous = self.state[:, h0 : h0 + nh]
        for e in range(ne):
            row = values[:, e, :]
            row += previous
            np.clip(row, lo, hi, out=row)
            previous = row
        self.state[:, h0 : h0 + nh] = previous
        return values


class Counter:
    """Monotonic counters per (column, entity): each step adds ``max(0, N(mean, sd))``.

    ``mean`` and ``sd`` are scalars or per-column arrays of length ``k``; values are float64 in
    column-major layout ``(k, ne, nh)``. Counters start uniform in ``[0, start_max)``.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        entities: int,
        mean: np.ndarray | float,
        sd: np.ndarray | float,
        k: int = 1,
        start_max: float = 0.0,
    ):
        self.mean = _per_column(mean, k)[:, None, None]
        self.sd = _per_column(sd, k)[:, None, None]
        self.state = rng.uniform(0.0, start_max, size=(k, entities)) if start_max else np.zeros((k, entities))

    def advance(self, rng: np.random.Generator, ne: int, h0: int, nh: int) -> np.ndarray:
        """Next ``ne`` values for entities ``[h0, h0+nh)``: float64 array ``(k, ne, nh)``."""
        steps = rng.standard_normal((self.state.shape[0], ne, nh)) * self.sd + self.mean
        np.maximum(steps, 0.0, out=steps)
        np.cumsum(steps, axis=1, out=steps)
        steps += self.state[:, None, h0 : h0 + nh]
        self.state[:, h0 : h0 + nh] = steps[:, -1, :]
        return steps


def _per_column(value: np.ndarray | float, k: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (k,)).copy()


def choose(rng: np.random.Generator, options: tuple[str, ...] | list[str], n: int) -> np.ndarray:
    """``n`` uniform picks from ``options`` as an object array of str."""
    return np.asarray(options, dtype=object)[rng.integers(0, len(options), size=n)]
