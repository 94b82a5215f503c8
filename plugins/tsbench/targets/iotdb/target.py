"""Apache IoTDB (2.0.1-beta, tree model) through its own session protocol: aligned tablets in
(``writer.py``), SQL out (``dialect.py``, ``answers.py``), the client of the server's version.

Schema: database ``root.tsbs``; one aligned schema template per measurement (its fields with their
types), set on ``root.tsbs.<measurement>``; each entity is a device below it whose series the
template declares, activated by its first write. ``flush()`` runs ``FLUSH``: every memtable is
written to sealed TsFiles, the form queries then read and the footprint counts."""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa

from tsbench.targets.base import Capabilities, Endpoint, Footprint, Target, TargetError
from tsbench.targets.iotdb import dialect
from tsbench.targets.iotdb.answers import rows_of
from tsbench.targets.iotdb.client import endpoint_session, query
from tsbench.targets.iotdb.definition import DEFINITION
from tsbench.targets.iotdb.server import IoTDBServer
from tsbench.targets.iotdb.writer import TYPE_NAMES, IoTDBWriter, series_type
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import Measurement, UseCase

IOT = (
    "TSBS iot types are not rendered for IoTDB yet: tsbench has no IoTDB SQL for their sessions, "
    "stationary periods and fleet joins (iot data loads: its nameless trucks share one device)"
)
UNSUPPORTED = {name: IOT for name, q in QUERY_TYPES.items() if q.family == "iot"}
FOOTPRINT_NOTE = (
    "IoTDB's own accounting after FLUSH: TsFileSize of every data region of root.tsbs (SHOW REGIONS, "
    "printed to 2 decimals of its unit); the WAL, the schema regions and the consensus logs are not counted"
)
SIZE_UNITS = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
REGION_SIZE_WAIT_S = 15.0  # region sizes reach the ConfigNode with the DataNode's heartbeats (~1 s)


def size_bytes(text: str) -> int | None:
    """Bytes of a size as the server prints it (``938 B``, ``1.21 MB``; 1024-based units), None for
    ``Unknown`` or nothing."""
    number, _, unit = text.strip().partition(" ")
    if unit not in SIZE_UNITS:
        return None
    return round(float(number) * SIZE_UNITS[unit])


def template_name(measurement: str) -> str:
    return f"tsbench_{measurement}"


class IoTDBSession:
    """One query worker on its own session: ``fetch`` runs a rendering's SQL and receives the whole
    result as the client's data frame; ``decode`` turns it into the answer's rows."""

    def __init__(self, endpoint: Endpoint):
        self.session = endpoint_session(endpoint)

    def fetch(self, text: str) -> tuple[dialect.AnswerHeader, list[str], list[list[Any]]]:
        header, sql = dialect.parse(text)
        return (header, *query(self.session, sql))

    def decode(self, raw: tuple[dialect.AnswerHeader, list[str], list[list[Any]]]) -> list[tuple[Any, ...]]:
        return rows_of(*raw)

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        self.session.close()


class IoTDBTarget(Target):
    name = "iotdb"
    title = "IoTDB"
    colour = "#B15928"
    client_packages = ("apache-iotdb",)
    capabilities = Capabilities(
        durable=True,  # FLUSH seals every memtable into TsFiles on disk
        keeps=Keeps.LAST,  # a point is keyed by series and time: a later write replaces its value
        compression="per series in TsFiles: TS_2DIFF timestamps, GORILLA/TS_2DIFF values, LZ4 pages",
        rollups="none in the server (continuous queries were removed in 1.x)",
        unsupported=UNSUPPORTED,
        restartable=True,
        schema_note=(
            "tree model: database root.tsbs, one aligned schema template per measurement, a device per "
            "entity (its extra tags as further levels), a series per field; instants in ms"
        ),
        stores_fieldless_rows=False,
        merges_nameless_instants=True,  # nameless rows share one device per measurement (writer.py)
        row_model_note=(
            "an aligned device stores no row whose fields are all null; rows without an entity share "
            "one device per measurement, so those of one instant are one row"
        ),
    )

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._admin_session: Any = None

    @staticmethod
    def server_recipe() -> type:
        return IoTDBServer

    def _admin(self) -> Any:
        if self._admin_session is None:
            self._admin_session = endpoint_session(self.endpoint)
        return self._admin_session

    def _statement(self, sql: str, tolerate: bool = False) -> None:
        try:
            self._admin().execute_non_query_statement(sql)
        except Exception as error:  # the client raises RuntimeError("<status>: <message>")
            if not tolerate:
                raise TargetError(f"iotdb: {error}\n{sql}") from None

    def _column(self, sql: str, name: str) -> list[Any]:
        """One named column of a statement's result."""
        names, columns = query(self._admin(), sql)
        return columns[names.index(name)]

    # ---- load ----------------------------------------------------------------------------------

    def create_schema(self) -> None:
        """Drop ``root.tsbs`` and the templates (a retry's rows with them), then declare them anew.
        The drops of what does not exist fail and are let pass; the creates must succeed."""
        self._statement(f"DROP DATABASE {dialect.DATABASE}", tolerate=True)
        for measurement in self.use_case.measurements:
            path = dialect.measurement_path(measurement.name)
            self._statement(
                f"UNSET SCHEMA TEMPLATE {template_name(measurement.name)} FROM {path}", tolerate=True
            )
            self._statement(f"DROP SCHEMA TEMPLATE {template_name(measurement.name)}", tolerate=True)
        self._statement(f"CREATE DATABASE {dialect.DATABASE}")
        for measurement in self.use_case.measurements:
            self._statement(self._template(measurement))
            path = dialect.measurement_path(measurement.name)
            self._statement(f"SET SCHEMA TEMPLATE {template_name(measurement.name)} TO {path}")

    @staticmethod
    def _template(measurement: Measurement) -> str:
        series = ", ".join(
            f"{dialect.node(name)} {TYPE_NAMES[series_type(arrow_type)]}"
            for name, arrow_type in measurement.fields
        )
        return f"CREATE SCHEMA TEMPLATE {template_name(measurement.name)} ALIGNED ({series})"

    def writer(self) -> IoTDBWriter:
        return IoTDBWriter(self.endpoint, self.use_case)

    def flush(self) -> None:
        """``FLUSH``: the memtables of every database are written to sealed TsFiles."""
        self._statement("FLUSH")

    def row_count(self, measurement: str) -> int:
        """Rows of every device of ``measurement`` (``count_time(*)``: instants holding any field)."""
        path = dialect.device_path(measurement)
        return sum(
            int(count)
            for count in self._column(f"SELECT count_time(*) FROM {path} ALIGN BY DEVICE", "count_time(*)")
        )

    def remove_rows_from(self, measurement: str, start_ns: int) -> None:
        """``DELETE`` every point of ``measurement``'s devices at or after ``start_ns``."""
        path = dialect.device_path(measurement)
        self._statement(f"DELETE FROM {path} WHERE time >= {dialect.ms(start_ns)}")

    # ---- queries -------------------------------------------------------------------------------

    def render(self, query: LogicalQuery) -> str:
        if query.type in UNSUPPORTED:
            raise NotImplementedError(UNSUPPORTED[query.type])
        extra = bool(self.use_case.measurement(query.measurement).extra_tags)
        return dialect.render(query, extra)

    def session(self) -> IoTDBSession:
        return IoTDBSession(self.endpoint)

    # ---- facts ---------------------------------------------------------------------------------

    def footprint(self) -> Footprint:
        """TsFileSize of each data region of ``root.tsbs``, as the ConfigNode reports it: it learns the
        sizes from the DataNode's heartbeat, so this waits (up to ``REGION_SIZE_WAIT_S``) until every
        region has one."""
        deadline = time.monotonic() + REGION_SIZE_WAIT_S
        while (sizes := self._region_sizes()) and None in sizes.values() and time.monotonic() < deadline:
            time.sleep(0.5)
        parts = {region: size or 0 for region, size in sizes.items()}
        note = FOOTPRINT_NOTE + "".join(
            f"; {r} reported no size" for r, size in sizes.items() if size is None
        )
        return Footprint(bytes=sum(parts.values()), note=note, parts=parts)

    def _region_sizes(self) -> dict[str, int | None]:
        """The data regions of ``root.tsbs`` and their TsFile bytes (None: not reported yet)."""
        names, columns = query(self._admin(), "SHOW REGIONS")
        sizes: dict[str, int | None] = {}
        for row in zip(*columns, strict=True):
            region = dict(zip(names, row, strict=True))
            if region["Type"] == "DataRegion" and region["Database"] == dialect.DATABASE:
                sizes[f"DataRegion {region['RegionId']}"] = size_bytes(str(region["TsFileSize"]))
        return sizes

    def version(self) -> str:
        return str(self._column("SHOW VERSION", "Version")[0])

    def settings(self) -> dict[str, Any]:
        heaps = DEFINITION.process_settings()
        return {
            **DEFINITION.settings(),
            "confignode heap": heaps["confignode_heap"],
            "datanode heap": heaps["datanode_heap"],
            "write": "session protocol insertTablets: one aligned tablet per device, a call per batch",
            "query": "SQL (tree model) over the session protocol; results fetched 10,000 rows at a time",
            "authentication": "user root with the instance's own password (the stock root/root refused)",
        }

    def close(self) -> None:
        if self._admin_session is not None:
            self._admin_session.close()
            self._admin_session = None


TARGET = IoTDBTarget
