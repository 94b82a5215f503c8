"""VictoriaMetrics as a container: the official image ``victoriametrics/victoria-metrics`` at the
local runtime's version.

The image's entrypoint is the server; its command is the flags: the one table (``definition.py``),
the data path (the volume that counts as the footprint on disk), the listener on the container's
8428 and the login. The password reaches the server as the variable ``httpAuth_password``, which
``-envflag.enable`` reads as ``-httpAuth.password`` (generated per instance, never on the command
line); the client gets the same one.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.victoriametrics.definition import DEFINITION, FLAGS, flag_arguments
from tsbench.targets.victoriametrics.server import USER

VERSION = DEFINITION.version
DATA_PATH = "/victoria-metrics-data"
PORT = 8428
PASSWORD_VARIABLE = "TSBENCH_VICTORIAMETRICS_PASSWORD"

CONTAINERS: dict[str, ContainerSpec] = {
    VERSION: ContainerSpec(
        image=f"victoriametrics/victoria-metrics:v{VERSION}",
        ports={"http": PORT},
        data_paths=(DATA_PATH,),
        # /health answers without the login; the image is Alpine-based and has busybox wget.
        healthcheck=HealthCheck(("wget", "-q", "-O", "/dev/null", f"http://127.0.0.1:{PORT}/health")),
        command=(
            f"-storageDataPath={DATA_PATH}",
            f"-httpListenAddr=:{PORT}",
            f"-httpAuth.username={USER}",
            "-envflag.enable",
            *flag_arguments(FLAGS),
        ),
        secret_env={"httpAuth_password": PASSWORD_VARIABLE},
        client_user=USER,
        client_secrets={"password": PASSWORD_VARIABLE},
        note=(
            f"official image victoriametrics/victoria-metrics:v{VERSION} (upstream's release build; the "
            "local runtime builds the same version from its Go module with this machine's Go); the same flags"
        ),
    ),
}
