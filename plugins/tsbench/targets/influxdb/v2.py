"""InfluxDB 2 behind the 1.x compatibility API: token, bucket and footprint (the ``2.7`` container).

The target writes and queries an InfluxDB 2 server exactly as a 1.x one (``/write``, ``/query``,
database ``benchmark``): every request carries ``Authorization: Token <token>`` (``Endpoint.secrets
["token"]``), and the bucket ``benchmark`` answers as database ``benchmark``, retention policy
``autogen``, through the virtual DBRP mapping InfluxDB 2 gives every bucket. What 1.x does in InfluxQL
and 2.x does not accept goes through the 2.x API here: dropping and creating the database is
deleting and creating the bucket (``/api/v2/buckets``), and ``SHOW STATS`` is ``/metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import requests

from tsbench.targets.base import Endpoint, Footprint, TargetError

TIMEOUT_S = 60
# /metrics families that measure a bucket's files, by the part they are reported as
FOOTPRINT_FAMILIES = {
    "storage_tsm_files_disk_bytes": "tsm",
    "storage_wal_size": "wal",
}


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric_samples(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """``(name, labels, value)`` of every sample in Prometheus text format (comments skipped)."""
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match:
            name, labels, value = match.groups()
            yield name, dict(_LABEL.findall(labels or "")), float(value)


def is_v2(endpoint: Endpoint) -> bool:
    """True for an InfluxDB 2 server (its container spec says ``api: v2``)."""
    return endpoint.extra.get("api") == "v2"


def _call(
    http: requests.Session, method: str, url: str, missing_ok: bool = False, **kwargs: Any
) -> requests.Response:
    """The response (TargetError for a failure or a status >= 300; ``missing_ok``: but 404)."""
    try:
        response = http.request(method, url, timeout=TIMEOUT_S, **kwargs)
    except requests.RequestException as error:
        raise TargetError(f"influxdb: {method} {url} failed: {error}") from error
    if response.status_code >= 300 and not (missing_ok and response.status_code == 404):
        path = url.split("/", 3)[-1]
        raise TargetError(
            f"influxdb: {method} /{path} answered {response.status_code}: {response.text[:300]}"
        )
    return response


def org_id(http: requests.Session, url: str, org: str) -> str:
    orgs = _call(http, "GET", f"{url}/api/v2/orgs", params={"org": org}).json().get("orgs") or []
    if not orgs:
        raise TargetError(f"influxdb: organisation {org!r} does not exist")
    return orgs[0]["id"]


def bucket_id(http: requests.Session, url: str, org: str, bucket: str) -> str | None:
    params = {"org": org, "name": bucket}
    # 2.7 answers 404 for a name no bucket has
    found = _call(http, "GET", f"{url}/api/v2/buckets", missing_ok=True, params=params)
    buckets = found.json().get("buckets") or []
    return buckets[0]["id"] if buckets else None


def recreate_bucket(http: requests.Session, url: str, org: str, bucket: str) -> str:
    """Delete ``bucket`` with everything in it (when it exists) and create it empty, infinite
    retention (as 1.x's ``autogen``); returns its new id."""
    existing = bucket_id(http, url, org, bucket)
    if existing:
        _call(http, "DELETE", f"{url}/api/v2/buckets/{existing}", missing_ok=True)
    body = {"orgID": org_id(http, url, org), "name": bucket, "retentionRules": []}
    return _call(http, "POST", f"{url}/api/v2/buckets", json=body).json()["id"]


def bucket_footprint(http: requests.Session, url: str, org: str, bucket: str) -> Footprint:
    """The bucket's TSM and WAL bytes from the server's Prometheus metrics (per shard, summed)."""
    found = bucket_id(http, url, org, bucket)
    if found is None:
        raise TargetError(f"influxdb: bucket {bucket!r} does not exist")
    text = _call(http, "GET", f"{url}/metrics").text
    parts = dict.fromkeys(FOOTPRINT_FAMILIES.values(), 0)
    shards = set()
    for name, labels, value in metric_samples(text):
        part = FOOTPRINT_FAMILIES.get(name)
        if part is not None and labels.get("bucket") == found:
            parts[part] += int(value)
            shards.add(labels.get("id"))
    return Footprint(
        bytes=sum(parts.values()),
        note=(
            f"bucket {bucket!r}, {len(shards)} shard(s): TSM files (storage_tsm_files_disk_bytes) + WAL "
            "(storage_wal_size) from /metrics; the series file and the TSI index are not counted "
            "(InfluxDB 2 reports them per engine, not per bucket)"
        ),
        parts=parts,
    )
