"""GridDB's node REST interface on the *system* port (what gs_stat / gs_joincluster use).

``GET /node/stat`` (HTTP basic auth, an administrator) answers a JSON document with ``cluster``
(nodeStatus, clusterStatus, partitionStatus …), ``recovery.progressRate``, ``performance`` (store and
data-file sizes …) and ``version``; ``POST /node/join`` (form fields clusterName, minNodeNum) joins
the node to a cluster.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from tsbench.targets.base import TargetError


def _request(
    host: str, port: int, path: str, user: str, password: str, form: dict[str, Any] | None, timeout: float
) -> Any:
    credentials = base64.b64encode(f"{user}:{password}".encode()).decode()
    data = None if form is None else urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        f"http://{host}:{port}{path}", data=data, headers={"Authorization": f"Basic {credentials}"}
    )
    # No proxy: the node is on this machine or in the benchmark network.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body.strip() else {}


def node_stat(host: str, port: int, user: str, password: str, timeout: float = 5.0) -> dict[str, Any]:
    """``GET /node/stat``; TargetError when the node does not answer (or refuses the login)."""
    try:
        return _request(host, port, "/node/stat", user, password, None, timeout)
    except urllib.error.HTTPError as error:
        raise TargetError(f"griddb: GET /node/stat on {host}:{port} answered HTTP {error.code}") from None
    except (OSError, ValueError) as error:
        raise TargetError(f"griddb: GET /node/stat on {host}:{port} failed: {error}") from None


def join_cluster(host: str, port: int, user: str, password: str, cluster: str, nodes: int = 1) -> None:
    """``POST /node/join``: this node joins (or, alone, forms) ``cluster`` of ``nodes`` nodes."""
    form = {"clusterName": cluster, "minNodeNum": nodes}
    try:
        _request(host, port, "/node/join", user, password, form, 30.0)
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:300] if hasattr(error, "read") else ""
        raise TargetError(
            f"griddb: POST /node/join on {host}:{port} answered HTTP {error.code} {detail}"
        ) from None
    except (OSError, ValueError) as error:
        raise TargetError(f"griddb: POST /node/join on {host}:{port} failed: {error}") from None
