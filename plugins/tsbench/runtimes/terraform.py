"""Run the Terraform CLI for one tsbench instance (init, validate, plan, apply, destroy, outputs, resources).

Every instance has its own ``work_dir`` (mode 0700)::

    work_dir/
      tree/…            a shadow of the repository: the root module (``config_dir``) is *copied*, every
                        other entry on the way is a *symlink* to the real file, so relative paths in the
                        configuration (``../../modules/…``, a target's ``cloud_install.sh``) resolve as
                        in the repository, while the backend file written into the copy
                        (``backend_override.tf``) never affects another instance or the repository
      .terraform/       TF_DATA_DIR: installed modules, provider links, the backend settings
      terraform.tfstate local state (no ``backend_config``); it holds secrets: keep work_dir private
      terraformrc       CLI configuration for a provider filesystem mirror (when one is used)

Remote state: with ``backend_config`` (a file of ``-backend-config`` settings for Terraform's ``s3``
backend: bucket, region, ``use_lockfile = true`` or ``dynamodb_table``, …) the copy gets
``terraform { backend "s3" {} }`` and ``init`` passes that file plus ``key = <state_key>`` (default
``tsbench/<work_dir name>/terraform.tfstate``), so instances sharing one settings file never share state.

Variables travel in a ``*.tfvars.json`` file (mode 0600) inside ``work_dir`` that exists only while a
command runs — never on the command line. Every output line of Terraform goes to ``log`` as it
arrives (``-no-color``, ``TF_IN_AUTOMATION=1``); values of variables whose names look secret
(password, token, secret, credential) are replaced by ``***`` first. A non-zero exit raises
``TerraformError`` carrying the last lines.

Offline use: ``TSBENCH_TF_PLUGIN_MIRROR=<dir>`` (or ``mirror_cli_config``) makes Terraform install
providers only from a filesystem mirror such as ``/opt/tf-plugins``.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[3]
MIRROR_ENV = "TSBENCH_TF_PLUGIN_MIRROR"
SECRET_NAME = re.compile(r"password|token|secret|credential", re.IGNORECASE)
TAIL_LINES = 25
NOT_COPIED = {".terraform", "terraform.tfstate", "terraform.tfstate.backup"}
BACKEND_FILE = "backend_override.tf"
KEPT_IN_COPY = {BACKEND_FILE, ".terraform.lock.hcl"}  # written into the copy, not taken from config_dir
# Go GC target for Terraform and its providers unless the environment sets one: the AWS provider
# builds its schema on every start and spends about a fifth of its CPU in GC at Go's default 100.
# Measured (tests/infra/test_terraform.py, 2 cores): 140 CPU-s at 100, 110 at 400 (peak RSS 640 →
# 800 MB), 134 at "off" (2.6 GB RSS, the kernel's page faults eat the gain). The orchestrator's CPU
# is shared with whatever else it runs.
DEFAULT_GOGC = "400"


class TerraformError(RuntimeError):
    """A Terraform command exited non-zero. ``tail`` holds its last output lines (secrets masked)."""

    def __init__(self, command: str, returncode: int, tail: list[str]):
        self.command, self.returncode, self.tail = command, returncode, tail
        super().__init__(f"terraform {command} failed (exit {returncode}):\n" + "\n".join(tail))


def mirror_cli_config(path: Path, mirror: Path = Path("/opt/tf-plugins")) -> Path:
    """Write a Terraform CLI configuration file at ``path`` that installs ``hashicorp/*`` providers
    only from the filesystem ``mirror`` (no registry access). Returns ``path`` (use it as
    ``TF_CLI_CONFIG_FILE``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "provider_installation {\n"
        "  filesystem_mirror {\n"
        f"    path    = {json.dumps(str(mirror))}\n"
        '    include = ["registry.terraform.io/hashicorp/*"]\n'
        "  }\n"
        "  direct {\n"
        '    exclude = ["registry.terraform.io/hashicorp/*"]\n'
        "  }\n"
        "}\n"
    )
    return path


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _replace_with_link(target: Path, link: Path) -> None:
    _remove(link)
    link.symlink_to(target)


class Terraform:
    """Terraform for one instance: root module ``config_dir``, private state and files in ``work_dir``.

    ``env`` adds to the process environment (e.g. AWS credentials, ``TF_CLI_CONFIG_FILE``); ``unset``
    names variables of the process environment Terraform must not inherit (e.g. the run store's
    ``AWS_ENDPOINT_URL``, which the AWS provider would otherwise send every API call to).
    ``tree_root`` is the directory mirrored into ``work_dir/tree`` (default: the repository when
    ``config_dir`` lies inside it, else ``config_dir`` alone). ``lock_timeout`` is how long a command
    waits for a state lock held by another process (Terraform duration, e.g. ``"120s"``). Not safe for
    two concurrent commands on the same ``work_dir``; separate instances are independent.
    """

    def __init__(
        self,
        config_dir: Path,
        work_dir: Path,
        log: Callable[[str], None] = logger.info,
        env: Mapping[str, str] | None = None,
        backend_config: Path | None = None,
        *,
        state_key: str | None = None,
        tree_root: Path | None = None,
        lock_timeout: str = "120s",
        binary: str = "terraform",
        unset: tuple[str, ...] = (),
    ):
        self.config_dir = Path(config_dir).resolve()
        self.work_dir = Path(work_dir).resolve()
        self.log = log
        self.env = dict(env or {})
        self.unset = unset
        self.backend_config = Path(backend_config).resolve() if backend_config else None
        self.state_key = state_key or f"tsbench/{self.work_dir.name}/terraform.tfstate"
        if tree_root is None:
            tree_root = REPO if self.config_dir.is_relative_to(REPO) else self.config_dir
        self.tree_root = Path(tree_root).resolve()
        self.lock_timeout = lock_timeout
        self.binary = binary
        self._secrets: list[str] = []
        self._remember_secrets({})

    # -- paths ---------------------------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self.work_dir / ".terraform"

    @property
    def state_file(self) -> Path:
        """Local state (unused with a remote backend)."""
        return self.work_dir / "terraform.tfstate"

    @property
    def root_dir(self) -> Path:
        """The instance's copy of ``config_dir``, where Terraform runs."""
        return self.work_dir / "tree" / self.config_dir.relative_to(self.tree_root)

    # -- commands ------------------------------------------------------------------------------------

    def init(self) -> None:
        """Refresh the instance's copy of the configuration and run ``terraform init`` (idempotent)."""
        self._prepare()
        args = ["init", "-input=false", "-no-color", "-reconfigure"]
        if self.backend_config:
            args += [f"-backend-config={self.backend_config}", f"-backend-config=key={self.state_key}"]
        self._stream(args)

    def validate(self) -> None:
        """``terraform validate``: the configuration is consistent (no cloud access needed)."""
        self.init()
        self._stream(["validate", "-no-color"])

    def plan(self, variables: Mapping[str, Any]) -> bool:
        """``terraform plan``; True when it would change something."""
        self.init()
        code = self._run_with_vars("plan", variables, "-detailed-exitcode", ok=(0, 2))
        return code == 2

    def apply(self, variables: Mapping[str, Any]) -> dict[str, Any]:
        """Create or update everything; returns the root module's outputs (values only)."""
        self.init()
        self._run_with_vars("apply", variables, "-auto-approve")
        return self.outputs()

    def destroy(self, variables: Mapping[str, Any], attempts: int = 2) -> None:
        """Remove everything in the state (fine when nothing was ever created). Retries a failed
        destroy ``attempts - 1`` times: cloud APIs are eventually consistent (e.g. a security group
        still "in use" for a moment after its instance terminated)."""
        self.init()
        for attempt in range(1, attempts + 1):
            try:
                self._run_with_vars("destroy", variables, "-auto-approve")
                return
            except TerraformError:
                if attempt == attempts:
                    raise
                self.log(f"terraform destroy failed (attempt {attempt} of {attempts}); trying again")

    def outputs(self) -> dict[str, Any]:
        """The root module's outputs from the state, ``{name: value}`` (empty before any apply)."""
        self._ensure_init()
        return {name: body["value"] for name, body in json.loads(self._capture(["output", "-json"])).items()}

    def resources(self) -> list[str]:
        """Resource addresses in the state (``terraform state list``); empty when there is no state."""
        self._ensure_init()
        try:
            text = self._capture(["state", "list"])
        except TerraformError as error:
            if any("No state file was found" in line for line in error.tail):
                return []
            raise
        return [line for line in text.splitlines() if line.strip()]

    # -- internals -----------------------------------------------------------------------------------

    def _run_with_vars(
        self, command: str, variables: Mapping[str, Any], *flags: str, ok: tuple[int, ...] = (0,)
    ) -> int:
        with self._var_file(variables) as var_file:
            args = [command, "-input=false", "-no-color", f"-lock-timeout={self.lock_timeout}", *flags]
            return self._stream([*args, f"-var-file={var_file}"], ok=ok)

    def _ensure_init(self) -> None:
        if not (self.data_dir / "terraform.tfstate").is_file() or not self.root_dir.is_dir():
            self.init()

    def _prepare(self) -> None:
        """Build ``work_dir/tree``: copies of the root module's files, symlinks for everything else."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.work_dir.chmod(0o700)
        source, shadow = self.tree_root, self.work_dir / "tree"
        for part in self.config_dir.relative_to(self.tree_root).parts:
            shadow.mkdir(parents=True, exist_ok=True)
            for entry in source.iterdir():
                if entry.name != part:
                    _replace_with_link(entry, shadow / entry.name)
            source, shadow = source / part, shadow / part
        if shadow.is_symlink():
            shadow.unlink()
        shadow.mkdir(parents=True, exist_ok=True)
        for stale in shadow.iterdir():  # removed from the configuration since the last run
            if not (source / stale.name).exists() and stale.name not in KEPT_IN_COPY:
                _remove(stale)
        for entry in source.iterdir():
            if entry.name in NOT_COPIED or entry.name.endswith(("_override.tf", "_override.tf.json")):
                continue  # a hand-made override or state in the repository must not leak in
            if entry.is_file() and not entry.is_symlink():
                target = shadow / entry.name
                if target.is_symlink() or target.is_dir():
                    _remove(target)
                shutil.copy2(entry, target)
            else:
                _replace_with_link(entry, shadow / entry.name)
        (shadow / BACKEND_FILE).write_text(self._backend_block())

    def _backend_block(self) -> str:
        if self.backend_config:
            return '# written by tsbench (settings: -backend-config)\nterraform {\n  backend "s3" {}\n}\n'
        return (
            "# written by tsbench: this instance's local state\n"
            f'terraform {{\n  backend "local" {{\n    path = {json.dumps(str(self.state_file))}\n  }}\n}}\n'
        )

    def _environment(self) -> dict[str, str]:
        inherited = {name: value for name, value in os.environ.items() if name not in self.unset}
        env = {"GOGC": DEFAULT_GOGC, **inherited, **self.env}
        env.update(TF_DATA_DIR=str(self.data_dir), TF_IN_AUTOMATION="1", TF_INPUT="0", CHECKPOINT_DISABLE="1")
        mirror = env.get(MIRROR_ENV)
        if mirror and "TF_CLI_CONFIG_FILE" not in self.env:
            env["TF_CLI_CONFIG_FILE"] = str(mirror_cli_config(self.work_dir / "terraformrc", Path(mirror)))
        for name in ("TF_WORKSPACE", "TF_CLI_ARGS", "TF_CLI_ARGS_apply", "TF_CLI_ARGS_destroy"):
            env.pop(name, None)  # would silently change what runs
        return env

    @contextmanager
    def _var_file(self, variables: Mapping[str, Any]) -> Iterator[Path]:
        self._remember_secrets(variables)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix="vars-", suffix=".tfvars.json", dir=self.work_dir)
        path = Path(name)  # mkstemp creates it with mode 0600
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(dict(variables), out, default=str)
            yield path
        finally:
            path.unlink(missing_ok=True)

    def _remember_secrets(self, variables: Mapping[str, Any]) -> None:
        """Values to mask in logged lines: secret-looking variables and environment entries."""
        named = [*variables.items(), *self.env.items()]
        found = {value for name, value in named if SECRET_NAME.search(name) and isinstance(value, str)}
        self._secrets = sorted(found - {""}, key=len, reverse=True)

    def _mask(self, line: str) -> str:
        for secret in self._secrets:
            line = line.replace(secret, "***")
        return line

    def _stream(self, args: list[str], ok: tuple[int, ...] = (0,)) -> int:
        """Run ``terraform <args>`` in the instance's root module, every line to ``log`` as it comes."""
        self._prepare_if_missing()
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        with subprocess.Popen(
            [self.binary, *args],
            cwd=self.root_dir,
            env=self._environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            umask=0o077,
        ) as process:
            assert process.stdout is not None
            for raw in process.stdout:
                line = self._mask(raw.rstrip("\n"))
                tail.append(line)
                self.log(line)
            code = process.wait()
        if code not in ok:
            raise TerraformError(args[0], code, list(tail))
        return code

    def _capture(self, args: list[str]) -> str:
        """Run ``terraform <args>`` and return its stdout (data, not logged); stderr goes to ``log``."""
        self._prepare_if_missing()
        done = subprocess.run(
            [self.binary, *args],
            cwd=self.root_dir,
            env=self._environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            umask=0o077,
        )
        errors = [self._mask(line) for line in done.stderr.splitlines()]
        for line in errors:
            self.log(line)
        if done.returncode:
            tail = errors + [self._mask(line) for line in done.stdout.splitlines()]
            raise TerraformError(" ".join(args), done.returncode, tail[-TAIL_LINES:])
        return done.stdout

    def _prepare_if_missing(self) -> None:
        if not self.root_dir.is_dir():
            self._prepare()
