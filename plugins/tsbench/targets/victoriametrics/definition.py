"""VictoriaMetrics' server definition: version, command-line flags and install recipe for every runtime.

``tuning`` is the one table of the server's flags (``-<flag>=<value>``): the local recipe
(``server.py``) passes them on the command line, the container (``container.py``) as the image's
command, and the cloud host's unit (``cloud_install.sh``) as its ``ExecStart`` (``cloud_files``:
``vm_flags`` prints them). Listeners, the data path and the login are each runtime's own. Reasons for
each value in README.md ("Configuration").
"""

from __future__ import annotations

from collections.abc import Mapping

from tsbench.runtimes.definition import ServerDefinition

# Plain values (no rule scaled by the machine): the same flags on every host.
FLAGS: dict[str, str] = {
    # TSBS data starts on 2016-01-01: the default retention (1 month) would drop every sample.
    "retentionPeriod": "100y",
    # Every sample is kept, copies included (no deduplication interval: the default, said aloud).
    "dedup.minScrapeInterval": "0s",
    # No response cache: a hot run measures the query, not a cached answer (it also stops VictoriaMetrics
    # from moving a range query's start and end onto multiples of its step).
    "search.disableCache": "true",
    # Samples are visible to queries as soon as /internal/force_flush returns (the default hides the
    # last 30 s, which the live phase reads).
    "search.latencyOffset": "0s",
    # The harness's query timeout (the default 30 s cancels all-host queries at large scales).
    "search.maxQueryDuration": "600s",
    # Limits sized for 100,000 hosts × 101 fields, not for a shared multi-tenant server.
    "search.maxUniqueTimeseries": "20000000",
    "search.maxSamplesPerQuery": "100000000000",
    "search.maxDeleteSeries": "20000000",
    # Recent samples sit in in-memory parts until written to disk at this interval (the default, said
    # aloud): the footprint waits for that write (target.py), so it counts bytes on disk.
    "inmemoryDataFlushInterval": "5s",
    # The self-monitoring scrape stays off (default): no series of its own in the benchmark's data.
    "selfScrapeInterval": "0s",
}


def flag_arguments(settings: Mapping[str, str]) -> list[str]:
    """``-flag=value`` arguments of the flags table."""
    return [f"-{flag}={value}" for flag, value in settings.items()]


DEFINITION = ServerDefinition(
    name="victoriametrics",
    # Go module github.com/VictoriaMetrics/VictoriaMetrics (local build, install.sh), image
    # victoriametrics/victoria-metrics:v<version> and the release binary (cloud) of the same version.
    version="1.151.0",
    tuning=FLAGS,
    cloud_files={"vm_flags": "".join(f"{argument}\n" for argument in flag_arguments(FLAGS))},
    local_build_minutes=3,
)
