"""AWS runtime: one benchmark host per target instance, provisioned with Terraform (``infra/envs/aws``).

``provision`` applies the root module with the run's ``AwsOptions`` (instance type, volumes, who may
connect) plus the target's install script, ports and per-instance secrets, then waits until the node
agent answers and the database accepts connections. ``teardown`` runs ``terraform destroy`` whenever
anything may have been created — also after a failed or interrupted apply — and only then forgets the
instance. Terraform's output streams line by line into the log (the Airflow task log).

Where an instance's state lives:

- its record (target, stage applying / applied / destroyed, Terraform outputs; no secrets): in the
  ``handoff`` folder (the target's folder of the run, which the run store carries between workers),
  else in ``<state root>/aws/<instance>/instance.json``;
- Terraform's state: with ``backend_config``, in S3 under ``tsbench/<cloud name>/terraform.tfstate``
  (one key per instance), so whichever worker runs teardown destroys what another applied; else
  local in ``<state root>/aws/<instance>/terraform/`` (one worker only);
- secrets (node agent token, database password): the orchestrator's environment where it names them,
  else derived from the deployment key ``$TSBENCH_SECRET_KEY`` (every worker derives the same, nothing
  is stored), else random and kept in ``<state root>/aws/<instance>/secrets.json`` (0600; one worker).

The run store's ``AWS_ENDPOINT_URL*`` (e.g. MinIO) never reaches Terraform: the AWS endpoint is the
options' ``endpoint_url`` or AWS's own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets as tokens
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tsbench.results.files import write_json_atomic, write_private_json
from tsbench.runtimes.cloud_install import target_script, write_install_script
from tsbench.runtimes.container_spec import ContainerSpec, pick_container
from tsbench.runtimes.contract import ServedTarget, TargetError
from tsbench.runtimes.definition import load_definition
from tsbench.runtimes.handoff import read_shared_record, write_shared_record
from tsbench.runtimes.local import REPO, state_root
from tsbench.runtimes.options import AwsOptions
from tsbench.runtimes.remote import AgentClient, RemoteServer
from tsbench.runtimes.secret_key import deployment_key, derived_secret, instance_secret_values
from tsbench.runtimes.terraform import Terraform

log = logging.getLogger("tsbench.aws")
ENV_ROOT = REPO / "infra" / "envs" / "aws"
AGENT_PORT = 9700
SECRETS_FILE = "secrets.json"
RECORD = "cloud_instance.json"  # in the handoff folder
RUN_STORE_ENDPOINTS = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")  # the run store's, not AWS's


def state_key(instance: str) -> str:
    """Where the instance's Terraform state lives in a remote backend: one key per instance."""
    return f"tsbench/{cloud_name(instance)}/terraform.tfstate"


def default_container(target_name: str) -> ContainerSpec:
    """The target's default container spec: its ports and client login are the VM's too."""
    return pick_container(target_name)[1]


def cloud_name(instance: str) -> str:
    """The instance name as cloud resources take it (tags, names): lowercase letters, digits and
    ``-``, at most 48 characters; shortened names keep a hash of the whole so they stay unique."""
    name = re.sub(r"[^a-z0-9-]+", "-", instance.lower()).strip("-") or "tsbench"
    if len(name) <= 48:
        return name
    digest = hashlib.sha256(instance.encode()).hexdigest()[:8]
    return f"{name[:39].rstrip('-')}-{digest}"


def install_script(target_name: str, folder: Path) -> Path:
    """The script the host runs: rendered from the target's definition into ``folder``
    (``runtimes/cloud_install.py``), else the target's ``cloud_install.sh`` as it is."""
    definition = load_definition(target_name)
    if definition is not None:
        return write_install_script(definition, folder)
    return target_script(target_name)


class AwsRuntime:
    """Creates, finds and removes benchmark hosts on AWS (or an AWS-compatible endpoint)."""

    name = "aws"

    def __init__(
        self,
        options: AwsOptions,
        root: Path | None = None,
        log_line: Callable[[str], None] | None = None,
        environment: Mapping[str, str] | None = None,
        handoff: Path | None = None,
    ):
        self.options = options
        self.root = root or state_root() / "aws"
        self.log_line = log_line or log.info
        self.environment = dict(environment or {})  # credentials for Terraform (never logged)
        self.handoff = handoff  # the target's run folder: the record every worker reads

    # -- state -----------------------------------------------------------------------------------
    def _home(self, instance: str) -> Path:
        return self.root / instance

    def _state(self, instance: str) -> dict[str, Any] | None:
        """The instance's record (the run folder's when there is a ``handoff``); None when it was
        never provisioned or is destroyed."""
        if self.handoff is not None:
            record = read_shared_record(self.handoff, RECORD, instance)
            body = record.state if record is not None else None
        else:
            path = self._home(instance) / "instance.json"
            body = json.loads(path.read_text()) if path.is_file() else None
        return None if body is None or body.get("stage") == "destroyed" else body

    def _save(self, instance: str, body: dict[str, Any]) -> None:
        if self.handoff is not None:
            write_shared_record(self.handoff, RECORD, instance, body)
        else:
            write_json_atomic(self._home(instance) / "instance.json", body)

    def _secrets(self, instance: str, spec: ContainerSpec) -> dict[str, str]:
        """Per-instance secrets, the same in every later task (see the module's docstring)."""
        key = deployment_key()
        path = self._home(instance) / SECRETS_FILE
        if not key and path.is_file():
            return json.loads(path.read_text())
        values, _ = instance_secret_values(spec, instance, os.environ.get)
        if key:
            return {**values, "node_agent_token": derived_secret(key, instance, "node_agent_token")}
        values["node_agent_token"] = tokens.token_urlsafe(32)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
        write_private_json(path, values)
        return values

    def _terraform(self, instance: str) -> Terraform:
        backend = Path(self.options.backend_config) if self.options.backend_config else None
        return Terraform(
            ENV_ROOT,
            self._home(instance) / "terraform",
            log=self.log_line,
            env=self.environment,
            backend_config=backend,
            state_key=state_key(instance),
            unset=RUN_STORE_ENDPOINTS,
        )

    def _variables(self, instance: str, target_name: str, values: Mapping[str, str]) -> dict[str, Any]:
        spec = default_container(target_name)
        password_var = spec.client_secrets.get("password") or spec.client_secrets.get("token")
        return {
            **self.options.tf_variables(),
            "name": cloud_name(instance),
            "database": target_name,
            "server_install_script": str(install_script(target_name, self._home(instance))),
            "db_ports": sorted(set(spec.ports.values())),
            "agent_port": AGENT_PORT,
            "node_agent_token": values["node_agent_token"],
            "db_password": values.get(password_var, "") if password_var else "",
        }

    def _nothing_local(self) -> bool:
        """True when no task needs this worker's files of an instance: its record travels in the run
        folder, Terraform's state is remote and its secrets are derived."""
        shared = self.handoff is not None and self.options.backend_config
        return bool(shared and deployment_key())

    # -- the Runtime protocol ----------------------------------------------------------------------
    def provision(self, target_type: type[ServedTarget], instance: str) -> RemoteServer:
        script = target_script(target_type.name)
        if not script.is_file():
            raise TargetError(f"{target_type.name}: no cloud install script at {script}")
        home = self._home(instance)
        if self._state(instance) is not None:
            self.teardown(instance)  # a retried provision starts from nothing
        home.mkdir(parents=True, exist_ok=True)
        home.chmod(0o700)
        values = self._secrets(instance, default_container(target_type.name))
        # Recorded before apply: whatever apply creates, teardown will know to destroy it.
        self._save(instance, {"target": target_type.name, "stage": "applying"})
        variables = self._variables(instance, target_type.name, values)
        try:
            outputs = self._terraform(instance).apply(variables)  # apply runs init itself
        finally:
            if self._nothing_local():
                shutil.rmtree(home, ignore_errors=True)  # Terraform's working copy: rebuilt on demand
        self._save(instance, {"target": target_type.name, "stage": "applied", "outputs": outputs})
        server = self.attach(instance)
        self.log_line(f"{instance}: waiting for the node agent and the database ports")
        host = outputs["benchmark_host"]
        address = host.get("public_ip") or host.get("private_ip")
        facts = f"{host.get('instance_id')} {host.get('instance_type')} at {address}"
        try:
            waited = server.wait_ready()
        except TargetError as error:  # the error (and so the report) says which host never came up
            raise type(error)(f"benchmark host {facts}: {error}") from None
        self.log_line(f"{instance}: {facts} ready after {waited:.0f} s")
        return server

    def attach(self, instance: str) -> RemoteServer:
        state = self._state(instance)
        if state is None or state.get("stage") != "applied":
            raise TargetError(f"no provisioned AWS instance {instance!r} under {self.root}")
        spec = default_container(state["target"])
        values = self._secrets(instance, spec)
        outputs = state["outputs"]
        host = outputs["benchmark_host"]
        address = host.get("public_ip") or host["private_ip"]
        agent = AgentClient(
            outputs.get("agent_url") or f"http://{address}:{AGENT_PORT}", values["node_agent_token"]
        )
        placement = {
            "provider": "aws",
            "region": outputs.get("region", self.options.region),
            "benchmark_host": host,
            "client_host": outputs.get("client_host"),
            "results_bucket": outputs.get("results_bucket"),
            "image_or_package": spec.image,
        }
        return RemoteServer(
            instance,
            spec.endpoint(address, spec.ports, values),
            agent,
            placement,
            self.options.ready_timeout_s,
        )

    def teardown(self, instance: str) -> None:
        """``terraform destroy`` when anything may exist, then forget the instance. Raises
        TargetError when destroy fails: resources would be left running (and billed)."""
        state = self._state(instance)
        home = self._home(instance)
        if state is None:
            shutil.rmtree(home, ignore_errors=True)
            return
        values = self._secrets(instance, default_container(state["target"]))
        terraform = self._terraform(instance)
        try:
            terraform.destroy(self._variables(instance, state["target"], values))  # runs init itself
            left = terraform.resources()
        except Exception as error:
            raise TargetError(
                f"{instance}: terraform destroy failed ({error}); resources tagged "
                f"tsbench:run={cloud_name(instance)} may still exist — state kept in {home}, "
                "run the teardown again or destroy by hand"
            ) from error
        if left:
            raise TargetError(f"{instance}: still in Terraform state after destroy: {', '.join(left)}")
        if self.handoff is not None:
            self._save(instance, {"target": state["target"], "stage": "destroyed"})
        shutil.rmtree(home, ignore_errors=True)
