"""iot: a fleet of trucks reporting ``readings`` and ``diagnostics`` every epoch, imperfectly.

Each truck has fixed tags (fleet, driver, model, device version) and its model fixes
``load_capacity``, ``fuel_capacity`` and ``nominal_fuel_consumption``. Per epoch:

- velocity (km/h, [0, 100]) is a bounded walk, grade (%, [−10, 10]) a bounded mean-reverting one;
  heading (°, [0, 360)) turns by a normal step and wraps;
- the truck moves ``velocity × interval``: latitude ([−90, 90]) and longitude (wrapping in
  [−180, 180)) follow heading and distance, elevation (m, [0, 5000]) climbs by grade × distance;
- current_load ([0, load_capacity]) changes only while the truck stands (velocity < 5 km/h);
- fuel_consumption (l/100 km) is the nominal one raised by load and grade, times a slow walk;
  fuel_state ([0, 1]) falls by the fuel burnt and jumps back to a full tank at a per-truck threshold;
- status is 0 (normal) or a fault code 1–5 that lasts a few epochs.

Imperfections, as in TSBS (which keeps about 90 % of the points): a truck is sometimes offline for a
burst of epochs (both measurements lost), single points are lost independently per measurement,
some kept points miss single fields, a few carry no field at all, some arrive late (``delay`` ≥ 1
epoch, so out of order), and a few lose their ``name`` tag (``nameless``: TSBS clears one of the five
truck tags of 1 % of its points, so the name of 0.2 %; such a point belongs to no truck). Every draw
comes from ``stream(seed, "iot-…")``.
"""

from __future__ import annotations

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, ClampedWalk, choose, stream
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator
from tsbench.workload.usecases import IOT_FLEETS, IOT_MEASUREMENTS

FLEETS = IOT_FLEETS
DRIVERS = ("Derek", "Rodney", "Albert", "Andy", "Seth", "Trish")
DEVICE_VERSIONS = ("v1.0", "v1.5", "v2.0", "v2.3")
# model → (load_capacity kg, fuel_capacity l, nominal_fuel_consumption l/100 km)
MODELS: dict[str, tuple[float, float, float]] = {
    "F-150": (2000.0, 200.0, 15.0),
    "G-2000": (5000.0, 300.0, 19.0),
    "H-2": (1500.0, 150.0, 12.0),
}

KM_PER_DEGREE = 111.2
STAND_KMH = 5.0  # below this a truck counts as standing (loading and unloading happen)
IDLE_LITRES_PER_HOUR = 2.0
FAULT_CODES = 5
GRADE_MAX = 10.0  # %
GRADE_MEMORY = 0.95  # per epoch: slopes last about 20 epochs
GRADE_SD = 0.8  # % per epoch
GRADE_PULL_PER_M = 2.5e-5  # per epoch; steady bias −0.5 % of grade per 1000 m above home
ELEVATION_MAX = 5000.0

# Imperfections. Kept share ≈ (1 − OFFLINE_SHARE) × (1 − LOSS) ≈ 0.905 (TSBS: 0.90–0.91).
OFFLINE_SHARE = 0.045  # stationary share of epochs a truck is offline (bursts)
OFFLINE_MEAN_EPOCHS = 6.0  # mean length of an offline burst
LOSS = {"readings": 0.048, "diagnostics": 0.054}  # independent loss of single points
EMPTY_SHARE = 0.01  # kept points that carry no field at all
FIELD_MISSING = 0.005  # chance that one field of a kept point is missing
LATE_SHARE = 0.03  # points that arrive late
LATE_MEAN_EPOCHS = 2.5  # mean delay of a late point (≥ 1)
# TSBS (pkg/data/usecases/iot/batch_config.go): zeroTagChance 0.01 per point, one of the 5 tags
NAMELESS_SHARE = 0.01 / 5

FIELDS = {m.name: m.field_names for m in IOT_MEASUREMENTS}


class Iot(Simulator):
    """Trucks ``truck_0 …``: readings (position and driving) and diagnostics (fuel, load, status)."""

    use_case_name = "iot"

    def __init__(self, spec: DatasetSpec):
        super().__init__(spec)
        n, seed = self.entities, spec.seed
        self.dt_hours = spec.interval / 3.6e12
        tags = stream(seed, "iot-tags")
        self.tags = {
            "name": self.entity_names(),
            "fleet": choose(tags, FLEETS, n),
            "driver": choose(tags, DRIVERS, n),
            "model": choose(tags, tuple(MODELS), n),
            "device_version": choose(tags, DEVICE_VERSIONS, n),
        }
        specs = np.array([MODELS[m] for m in self.tags["model"]], dtype=np.float64).reshape(n, 3)
        self.load_capacity, self.fuel_capacity, self.nominal = specs.T

        self.motion_rng = stream(seed, "iot-motion")
        rng = self.motion_rng
        # velocity km/h and consumption factor (driving style, wind, tyres …), as unit-step walks of
        # value / sd (clamping commutes with the scale)
        self.walk_sd = np.array([4.0, 0.005])
        lo, hi = np.array([0.0, 0.8]), np.array([100.0, 1.25])
        start_lo, start_hi = np.array([0.0, 0.9]), np.array([100.0, 1.1])
        sd = self.walk_sd
        self.walks = ClampedWalk(rng, n, lo / sd, hi / sd, 1.0, 2, start_lo / sd, start_hi / sd)
        self.heading = rng.uniform(0.0, 360.0, n)
        self.latitude = rng.uniform(-60.0, 70.0, n)
        self.longitude = rng.uniform(-180.0, 180.0, n)
        self.home = rng.uniform(0.0, 1500.0, n)  # the altitude of the truck's region
        self.elevation = self.home.copy()
        self.grade = rng.uniform(-3.0, 3.0, n)

        self.cargo_rng = stream(seed, "iot-cargo")
        rng = self.cargo_rng
        self.load = rng.uniform(0.0, 1.0, n) * self.load_capacity
        self.fuel = rng.uniform(0.3, 1.0, n)
        self.refuel_at = rng.uniform(0.05, 0.2, n)
        self.status = np.zeros(n, dtype=np.int64)

        self.link_rng = stream(seed, "iot-link")
        self.offline = self.link_rng.random(n) < OFFLINE_SHARE
        self.gap_rngs = {name: stream(seed, f"iot-{name}-gaps") for name in FIELDS}
        self.nameless_rngs = {name: stream(seed, f"iot-{name}-nameless") for name in FIELDS}

    def entity_tags(self) -> dict[str, np.ndarray]:
        return dict(self.tags)

    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        cols = slice(chunk.h0, chunk.h0 + chunk.nh)
        shape = (chunk.ne, chunk.nh)
        fixed = {
            "load_capacity": np.broadcast_to(self.load_capacity[cols], shape).copy(),
            "fuel_capacity": np.broadcast_to(self.fuel_capacity[cols], shape).copy(),
            "nominal_fuel_consumption": np.broadcast_to(self.nominal[cols], shape).copy(),
        }
        readings, drive = self._drive(chunk, cols)
        diagnostics, readings["fuel_consumption"] = self._cargo(chunk, cols, drive)
        online = self._link(chunk, cols)
        return {
            "readings": self._imperfect("readings", fixed | readings, online, chunk),
            "diagnostics": self._imperfect("diagnostics", fixed | diagnostics, online, chunk),
        }

    def _drive(self, chunk: Chunk, cols: slice) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Motion: the readings fields, plus distance and grade for the cargo and fuel model."""
        rng, ne, nh = self.motion_rng, chunk.ne, chunk.nh
        walks = self.walks.advance(rng, ne, chunk.h0, nh).astype(np.float64) * self.walk_sd[:, None, None]
        velocity, factor = walks
        turns = rng.normal(0.0, 6.0, (ne, nh))
        heading = np.cumsum(turns, axis=0)
        heading += self.heading[cols]
        np.mod(heading, 360.0, out=heading)
        heading[heading >= 360.0] = 0.0  # mod of a tiny negative number can round up to 360
        self.heading[cols] = heading[-1]
        km = velocity * self.dt_hours
        radians = np.radians(heading)
        latitude = _bounded_sum(self.latitude, km * np.cos(radians) / KM_PER_DEGREE, -90.0, 90.0, cols)
        east = km * np.sin(radians) / (KM_PER_DEGREE * np.maximum(np.cos(np.radians(latitude)), 0.01))
        longitude = np.cumsum(east, axis=0)
        longitude += self.longitude[cols]
        longitude = np.mod(longitude + 180.0, 360.0) - 180.0
        self.longitude[cols] = longitude[-1]
        grade, elevation = self._terrain(km, rng.standard_normal((ne, nh)), cols)
        readings = {
            "latitude": latitude,
            "longitude": longitude,
            "elevation": elevation,
            "velocity": velocity,
            "heading": heading,
            "grade": grade,
        }
        return readings, {"km": km, "grade": grade, "factor": factor, "velocity": velocity}

    def _terrain(self, km: np.ndarray, noise: np.ndarray, cols: slice) -> tuple[np.ndarray, np.ndarray]:
        """Grade (%) and elevation (m) along the road.

        The grade is a bounded, mean-reverting walk (a slope lasts a few minutes) with a slight pull
        back towards the truck's home altitude; the elevation climbs by grade × distance.
        """
        grade, elevation = np.empty_like(km), np.empty_like(km)
        slope, height, home = self.grade[cols], self.elevation[cols], self.home[cols]
        for e in range(km.shape[0]):
            pull = (height - home) * GRADE_PULL_PER_M
            slope = np.clip(GRADE_MEMORY * slope + GRADE_SD * noise[e] - pull, -GRADE_MAX, GRADE_MAX)
            height = np.clip(height + slope * 10.0 * km[e], 0.0, ELEVATION_MAX)  # % × km → m
            grade[e], elevation[e] = slope, height
        self.grade[cols], self.elevation[cols] = slope, height
        return grade, elevation

    def _cargo(
        self, chunk: Chunk, cols: slice, drive: dict[str, np.ndarray]
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Load, fuel and status (the diagnostics fields), and fuel consumption (it needs the load)."""
        rng, ne, nh = self.cargo_rng, chunk.ne, chunk.nh
        capacity = self.load_capacity[cols]
        standing = drive["velocity"] < STAND_KMH
        moves = np.where(standing, rng.normal(0.0, 0.1, (ne, nh)) * capacity, 0.0)
        load = _bounded_sum(self.load, moves, 0.0, capacity, cols)
        consumption = (
            self.nominal[cols]
            * (1.0 + 0.35 * load / capacity)
            * np.maximum(1.0 + 0.06 * drive["grade"], 0.3)
            * drive["factor"]
        )
        litres = consumption * drive["km"] / 100.0 + IDLE_LITRES_PER_HOUR * self.dt_hours * standing
        burnt = litres / self.fuel_capacity[cols]
        refill = rng.uniform(0.9, 1.0, (ne, nh))
        fault = rng.random((ne, nh)) < 0.002
        repaired = rng.random((ne, nh)) < 0.1
        codes = rng.integers(1, FAULT_CODES + 1, (ne, nh))
        fuel = np.empty((ne, nh))
        status = np.empty((ne, nh), dtype=np.int64)
        level, state, threshold = self.fuel[cols], self.status[cols], self.refuel_at[cols]
        for e in range(ne):
            level = np.maximum(level - burnt[e], 0.0)
            level = np.where(level < threshold, refill[e], level)
            fuel[e] = level
            state = np.where(state == 0, np.where(fault[e], codes[e], 0), np.where(repaired[e], 0, state))
            status[e] = state
        self.fuel[cols], self.status[cols] = level, state
        return {"fuel_state": fuel, "current_load": load, "status": status}, consumption

    def _link(self, chunk: Chunk, cols: slice) -> np.ndarray:
        """Whether each truck is online, a two-state Markov chain per truck: bool ``(ne, nh)``."""
        leave = OFFLINE_SHARE / (1.0 - OFFLINE_SHARE) / OFFLINE_MEAN_EPOCHS
        draws = self.link_rng.random((chunk.ne, chunk.nh))
        online = np.empty((chunk.ne, chunk.nh), dtype=bool)
        offline = self.offline[cols]
        for e in range(chunk.ne):
            offline = np.where(offline, draws[e] >= 1.0 / OFFLINE_MEAN_EPOCHS, draws[e] < leave)
            online[e] = ~offline
        self.offline[cols] = offline
        return online

    def _imperfect(
        self, name: str, values: dict[str, np.ndarray], online: np.ndarray, chunk: Chunk
    ) -> MeasurementChunk:
        """Order the fields as the schema does and add lost, partial, empty and late points."""
        rng, shape = self.gap_rngs[name], (chunk.ne, chunk.nh)
        fields = {field: values[field] for field in FIELDS[name]}
        keep = online & (rng.random(shape) >= LOSS[name])
        empty = rng.random(shape) < EMPTY_SHARE
        nulls = {field: empty | (rng.random(shape) < FIELD_MISSING) for field in fields}
        late = rng.random(shape) < LATE_SHARE
        delay = np.where(late, rng.geometric(1.0 / LATE_MEAN_EPOCHS, shape), 0)
        nameless = self.nameless_rngs[name].random(shape) < NAMELESS_SHARE
        return MeasurementChunk(fields, nulls, keep, delay, nameless)


def _bounded_sum(
    state: np.ndarray, steps: np.ndarray, lo: float, hi: float | np.ndarray, cols: slice
) -> np.ndarray:
    """Running sum of ``steps`` ``(ne, nh)`` from ``state[cols]``, clamped to ``[lo, hi]`` at every step.

    ``state`` is updated in place; ``hi`` may be one bound per entity.
    """
    out = np.empty_like(steps)
    value = state[cols]
    for e in range(steps.shape[0]):
        value = np.clip(value + steps[e], lo, hi)
        out[e] = value
    state[cols] = value
    return out
