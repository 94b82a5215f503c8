"""ClickHouse's configuration, declared once for the three places its server runs: ``config_elements``
(the server's ``config.xml`` elements as dotted paths) and ``users_text`` (user ``default``). The local
recipe writes a complete ``config.xml`` and ``users.xml`` (``server.py``); the container mounts the
``config.d`` override over the image's stock configuration and leaves the user to the entrypoint
(``container.py``); the cloud host writes the override and a ``users.d`` file the AWS runtime rendered
(``definition.py``'s ``cloud_files``). A ``Form`` holds all that differs: listener, directories, log
destination and whether the file completes or overrides the stock configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from tsbench.targets.dotted import nest

# Background system log tables of ClickHouse's stock configuration. They flush every few seconds and
# would add CPU, memory and disk use (counted in the data directory's footprint) that has nothing to
# do with the workload: a complete config.xml never configures them; an override removes them.
SYSTEM_LOGS_REMOVED = (
    "query_log",
    "query_thread_log",
    "query_views_log",
    "part_log",
    "trace_log",
    "text_log",
    "metric_log",
    "latency_log",
    "query_metric_log",
    "asynchronous_metric_log",
    "asynchronous_insert_log",
    "processors_profile_log",
    "opentelemetry_span_log",
    "session_log",
    "error_log",
    "crash_log",
    "backup_log",
    "blob_storage_log",
    "s3queue_log",
    "zookeeper_log",
)
# Listeners of the stock configuration that tsbench does not use (MySQL and PostgreSQL wire
# protocols, replication): only HTTP and native stay open.
LISTENERS_REMOVED = ("mysql_port", "postgresql_port", "interserver_http_port")


@dataclass(frozen=True)
class Form:
    """What differs where the server runs. ``stock``: the file overrides the stock configuration
    (``config.d``: removes its system logs and unused listeners; the user keeps the stock profile)
    rather than being complete (console log, the users file, default profile and database).
    ``listen`` and ``ports`` (``http``, ``native``; empty: the stock ones), ``data`` (everything the
    server keeps; empty: stock), ``users`` (complete: the users file; override: the access directory)
    and ``networks`` allowed for user ``default``."""

    stock: bool
    listen: str = ""
    ports: Mapping[str, int] = field(default_factory=dict)
    data: str = ""
    users: str = ""
    networks: tuple[str, ...] = ()


# The image's stock configuration (its entrypoint sets the user); the cloud host: all interfaces at
# the container ports, everything on the data volume, user default from anywhere the group admits.
CONTAINER = Form(stock=True)
CLOUD = Form(True, "0.0.0.0", {"http": 8123, "native": 9000}, "$DATA_DIR", "$DATA_DIR/access/", ("::/0",))


def config_elements(form: Form, tuning: Mapping[str, str]) -> dict[str, str]:
    """The server's elements (dotted paths), in order: ``form``'s, then ``tuning``."""
    places: dict[str, str] = {} if form.stock else {"logger.console": "1"}  # stdout: server.log
    places |= {"listen_host": form.listen} if form.listen else {}
    roles = (("http", "http_port"), ("native", "tcp_port"))
    places |= {key: str(form.ports[role]) for role, key in roles if role in form.ports}
    if form.data:
        places |= {"path": f"{form.data}/", "tmp_path": f"{form.data}/tmp/"}
        places |= {"user_files_path": f"{form.data}/user_files/"}
        places |= {"format_schema_path": f"{form.data}/format_schemas/"}
    if form.users:
        where = "local_directory" if form.stock else "users_xml"
        places[f"user_directories.{where}.path"] = form.users
    if not form.stock:
        places |= {"default_profile": "default", "default_database": "default"}
    return {**places, **tuning}


def xml_elements(settings: Mapping[str, str], indent: str = "    ") -> list[str]:
    """Settings with dotted paths as nested elements (``logger.level`` → ``<logger><level>``), one
    per line; settings sharing a parent element go into one element, in first-seen order."""
    return _element_lines(nest(settings), indent)


def _element_lines(tree: Mapping[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in tree.items():
        if isinstance(value, Mapping):
            lines += [f"{indent}<{name}>", *_element_lines(value, indent + "    "), f"{indent}</{name}>"]
        else:
            lines.append(f"{indent}<{name}>{escape(value)}</{name}>")
    return lines


def config_text(form: Form, tuning: Mapping[str, str], writer: str) -> str:
    """``config_elements`` as ``config.xml`` (complete) or a ``config.d`` file (``form.stock``)."""
    removed = [f'    <{name} remove="1"/>' for name in (*SYSTEM_LOGS_REMOVED, *LISTENERS_REMOVED)]
    body = [*xml_elements(config_elements(form, tuning)), *(removed if form.stock else [])]
    header = f"<!-- written by tsbench ({writer}; targets/clickhouse/config.py) -->"
    return "\n".join([header, "<clickhouse>", *body, "</clickhouse>"]) + "\n"


REPLACE = ' replace="1"'


def users_text(form: Form, password_sha256: str) -> str:
    """User ``default`` with the password's SHA-256 from ``form.networks``: a complete ``users.xml``,
    or a ``users.d`` override of the stock user (``form.stock``: the stock password removed, the
    networks replaced)."""
    ip = [f"                <ip>{network}</ip>" for network in form.networks]
    user = [
        *(['            <password remove="1"/>'] if form.stock else []),
        f"            <password_sha256_hex>{password_sha256}</password_sha256_hex>",
        f"            <networks{REPLACE if form.stock else ''}>",
        *ip,
        "            </networks>",
        *(
            []
            if form.stock
            else ["            <profile>default</profile>", "            <quota>default</quota>"]
        ),
        "            <access_management>1</access_management>",
    ]
    top = [] if form.stock else ["    <profiles>", "        <default/>", "    </profiles>"]
    top += [] if form.stock else ["    <quotas>", "        <default/>", "    </quotas>"]
    lines = ["<!-- written by tsbench (targets/clickhouse/config.py) -->", "<clickhouse>", *top]
    lines += [
        "    <users>",
        "        <default>",
        *user,
        "        </default>",
        "    </users>",
        "</clickhouse>",
    ]
    return "\n".join(lines) + "\n"
