"""The run parameter that chooses how a load's bodies are prepared: the wire cache
(``measure.wire_cache``) or a stream (``measure.wire_stream``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

WIRE_STREAM_FROM_ROWS = 50_000_000  # ``wire_bodies: auto`` streams the bodies of datasets this large


class WireBodiesOption(BaseModel):
    """``wire_bodies``, a base of ``spec.RunSpec`` (after the dataset's spec, whose rows it reads)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wire_bodies: Literal["auto", "cached", "streamed"] = Field(
        "auto",
        description="load bodies in the target's wire format: cached = encoded once before the load, "
        "outside its timed window, and stored beside the dataset for later runs; streamed = encoded "
        "during the load by worker processes and never stored (their CPU is then in the load's client "
        "CPU, and on local and docker they share the server's cores); auto = cached below "
        f"{WIRE_STREAM_FROM_ROWS:,} rows, streamed from there",
    )

    @property
    def rows_total(self) -> int:
        """The dataset's rows (``DatasetSpec.rows_total``, before this base in a run spec)."""
        raise NotImplementedError

    @property
    def streams_wire_bodies(self) -> bool:
        """Whether load bodies are encoded during the load, never stored (``wire_bodies``)."""
        auto = self.wire_bodies == "auto" and self.rows_total >= WIRE_STREAM_FROM_ROWS
        return self.wire_bodies == "streamed" or auto
