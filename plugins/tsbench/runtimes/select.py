"""The runtime a RunSpec asks for (``local``, ``docker`` or ``aws``), built with the spec's options.

Heavy or optional dependencies (the Docker SDK, Terraform) are imported only for the runtime asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tsbench.runtimes.base import Runtime
from tsbench.spec import RunSpec


def runtime_for(
    spec: RunSpec,
    log_line: Callable[[str], None] | None = None,
    environment: Mapping[str, str] | None = None,
) -> Runtime:
    """``environment`` carries credentials for the runtime's tools (e.g. AWS keys for Terraform)."""
    if spec.runtime == "aws":
        from tsbench.runtimes.aws import AwsRuntime

        return AwsRuntime(spec.aws, log_line=log_line, environment=environment)
    if spec.runtime == "docker":
        from tsbench.runtimes.docker import DockerRuntime

        return DockerRuntime.from_options(spec.docker)
    from tsbench.runtimes.local import LocalRuntime

    return LocalRuntime()
