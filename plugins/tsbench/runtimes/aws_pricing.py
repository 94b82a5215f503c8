"""The on-demand price per hour of one ``runtime=aws`` host, from the price table beside this module
(``aws_prices.toml``: the only place prices live, with their source and date).

A host is what ``infra/envs/aws`` creates for one target instance, read from the same Terraform
variables the runtime passes (``AwsOptions.tf_variables``) over the root module's declared defaults
(``variables.tf``): the benchmark instance, its root and data volumes, its public IPv4 address, and
with ``client_host`` the client instance, its root volume and address. Anything the table does not
price makes the whole host unpriced (``MachinePrice.no_price``: ``no price for <what> in <region>
(table of <date>)``); nothing is estimated from a neighbour.
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tsbench.results.cost_records import MachinePrice, PriceLine
from tsbench.runtimes.options import AwsOptions

TABLE = Path(__file__).with_name("aws_prices.toml")
VARIABLES = Path(__file__).resolve().parents[3] / "infra" / "envs" / "aws" / "variables.tf"
NOT_COUNTED = (
    "not counted: data transfer, S3 (run store, results bucket), EBS snapshots, taxes, and the machine "
    "running tsbench itself (the orchestrator); EC2 bills per second with a 60 s minimum, EBS per "
    "second of a volume's life"
)


class VolumePrice(BaseModel):
    """One EBS volume type in one region: USD per GB-month; per provisioned IOPS-month above
    ``iops_included`` in tiers (``[up to IOPS, USD]``, ascending); per MiB/s-month above
    ``throughput_included`` (None: the type takes no throughput)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gb_month: float = Field(gt=0)
    iops_included: int = Field(0, ge=0)
    iops: list[tuple[int, float]] = []
    throughput_included: int = Field(0, ge=0)
    throughput_month: float | None = None


class RegionPrices(BaseModel):
    """One region: instance types (USD per hour), volume types, a public IPv4 address (USD/hour)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    public_ipv4_per_h: float = Field(ge=0)
    instances: dict[str, float]
    volumes: dict[str, VolumePrice]


class PriceTable(BaseModel):
    """``aws_prices.toml``: the date the prices were taken, their source, the hours in a month (to
    prorate GB-month prices) and the prices per region."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    date: date
    source: str
    hours_per_month: float = Field(gt=0)
    regions: dict[str, RegionPrices]


class NoPrice(LookupError):
    """The table has no price for this item (its text says which, e.g. ``io2 volumes``)."""


@cache
def price_table(path: Path = TABLE) -> PriceTable:
    """The price table (read once per process; a malformed table fails loudly here)."""
    return PriceTable.model_validate(tomllib.loads(path.read_text()))


@cache
def terraform_defaults(path: Path = VARIABLES) -> dict[str, Any]:
    """The scalar defaults declared in the root module's ``variables.tf`` (``default = null`` →
    None); variables without one, or with a list or map, are left out."""
    found: dict[str, Any] = {}
    for name, body in re.findall(r'^variable "(\w+)" \{(.*?)^\}', path.read_text(), re.M | re.S):
        value = re.search(r"^\s*default\s*=\s*(\S.*?)\s*$", body, re.M)
        if value is not None:
            try:
                parsed = json.loads(value.group(1))
            except json.JSONDecodeError:
                continue
            if not isinstance(parsed, list | dict):
                found[name] = parsed
    return found


def host_price(options: AwsOptions, table: PriceTable | None = None) -> MachinePrice:
    """One host's price per hour for ``options`` (every billed item a line), or why there is none."""
    table = table or price_table()
    variables = {**terraform_defaults(), **options.tf_variables()}
    region = variables["region"]
    try:
        lines = _host_lines(variables, _region(table, region, variables["instance_type"]), table)
    except NoPrice as missing:
        return MachinePrice.none("aws", f"no price for {missing} in {region} (table of {table.date})")
    return MachinePrice(
        runtime="aws",
        priced=True,
        usd_per_h=sum(line.usd_per_h for line in lines),
        lines=lines,
        table=f"AWS on-demand, Linux, {region}, as published on {table.date} ({table.source}); verify them",
        table_date=str(table.date),
        not_counted=NOT_COUNTED,
    )


def _region(table: PriceTable, region: str, instance_type: str) -> RegionPrices:
    if region not in table.regions:
        raise NoPrice(instance_type)
    return table.regions[region]


def _host_lines(variables: dict[str, Any], region: RegionPrices, table: PriceTable) -> list[PriceLine]:
    """The billed items of the benchmark host (and of the client host when there is one)."""
    root_type = variables["root_volume_type"]
    lines = [
        _instance(region, variables["instance_type"], "benchmark host"),
        _volume(region, table, "benchmark host's root volume", root_type, variables["root_volume_size_gb"]),
        _volume(
            region,
            table,
            "data volume",
            variables["data_volume_type"],
            variables["data_volume_size_gb"],
            variables["data_volume_iops"],
            variables["data_volume_throughput"],
        ),
    ]
    hosts = 2 if variables["client_host"] else 1
    if variables["client_host"]:
        lines.append(_instance(region, variables["client_instance_type"], "client host"))
        size = variables["client_root_volume_size_gb"]
        lines.append(_volume(region, table, "client host's root volume", root_type, size))
    if variables["associate_public_ip"]:
        lines.append(
            PriceLine(
                item=f"public IPv4 address{'es' if hosts > 1 else ''}",
                unit=f"{hosts} × ${region.public_ipv4_per_h:g} per hour",
                usd_per_h=hosts * region.public_ipv4_per_h,
            )
        )
    return lines


def _instance(region: RegionPrices, instance_type: str, role: str) -> PriceLine:
    if instance_type not in region.instances:
        raise NoPrice(instance_type)
    usd = region.instances[instance_type]
    return PriceLine(item=f"{instance_type} {role}", unit=f"${usd:g} per hour", usd_per_h=usd)


def _volume(
    region: RegionPrices,
    table: PriceTable,
    role: str,
    kind: str,
    size_gb: int,
    iops: int | None = None,
    throughput: int | None = None,
) -> PriceLine:
    """A volume's price per hour: its GB-month, IOPS-month and MiB/s-month prices ÷ hours a month."""
    if kind not in region.volumes:
        raise NoPrice(f"{kind} volumes")
    price = region.volumes[kind]
    month = size_gb * price.gb_month
    parts = [f"{size_gb:,} GB × ${price.gb_month:g}"]
    extra_iops = max(0, (iops or 0) - price.iops_included)
    if extra_iops:
        iops_month = _tiered(price, iops or 0, kind)
        month += iops_month
        parts.append(f"{extra_iops:,} IOPS above {price.iops_included:,} × ${iops_month / extra_iops:.4g}")
    extra_throughput = max(0, (throughput or 0) - price.throughput_included)
    if extra_throughput:
        if price.throughput_month is None:
            raise NoPrice(f"throughput of {kind} volumes")
        month += extra_throughput * price.throughput_month
        parts.append(
            f"{extra_throughput:,} MiB/s above {price.throughput_included:,} × ${price.throughput_month:g}"
        )
    unit = f"{kind}: {', '.join(parts)} per month ÷ {table.hours_per_month:g} h"
    item = f"{role} ({kind}, {size_gb:,} GB)"
    return PriceLine(item=item, unit=unit, usd_per_h=month / table.hours_per_month)


def _tiered(price: VolumePrice, iops: int, kind: str) -> float:
    """USD per month for ``iops`` provisioned IOPS: each tier's IOPS above the included ones."""
    total, floor = 0.0, price.iops_included
    for up_to, usd in price.iops:
        if iops > floor:
            total += (min(iops, up_to) - floor) * usd
        floor = max(floor, up_to)
    if iops > floor:
        raise NoPrice(f"{iops:,} IOPS of {kind} volumes")
    return total
