"""``tsbench.runtimes.terraform.Terraform`` with the real terraform binary on a tiny configuration
that needs no provider (``terraform_data`` is built in), so each test takes a second or two: the
per-instance copy, local state, outputs, masking of secrets, errors and cleanup."""

from __future__ import annotations

import secrets
import shutil
import stat
from pathlib import Path

import pytest

from tsbench.runtimes.terraform import DEFAULT_GOGC, Terraform, TerraformError

pytestmark = pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH")

CONFIG = """
variable "db_password" {
  type        = string
  description = "deliberately not sensitive: Terraform prints it, the wrapper must mask it"
}

variable "size" {
  type = number
  validation {
    condition     = var.size > 0
    error_message = "size must be positive."
  }
}

resource "terraform_data" "thing" {
  input = var.size
}

output "echo" {
  value = var.db_password
}

output "size" {
  value = terraform_data.thing.output
}
"""


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    root = tmp_path / "config"
    (root / "sub").mkdir(parents=True)
    (root / "main.tf").write_text(CONFIG)
    (root / "sub" / "data.txt").write_text("linked, not copied\n")
    # left in the repository by a hand run: must not leak into an instance's copy
    (root / "backend_override.tf").write_text('terraform {\n  backend "s3" {}\n}\n')
    (root / "terraform.tfstate").write_text("not ours\n")
    return root


def test_apply_outputs_resources_destroy_with_private_local_state(config_dir: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    password = "pw-" + secrets.token_hex(8)
    work = tmp_path / "instance"
    tf = Terraform(config_dir, work, log=lines.append)

    assert tf.outputs() == {} and tf.resources() == []
    assert tf.apply({"db_password": password, "size": 3}) == {"echo": password, "size": 3}
    assert tf.resources() == ["terraform_data.thing"]
    assert tf.plan({"db_password": password, "size": 3}) is False  # nothing left to change

    log = "\n".join(lines)
    assert password not in log and 'echo = "***"' in log  # printed by Terraform, masked by the wrapper
    assert "Apply complete! Resources: 1 added" in log
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    assert stat.S_IMODE(tf.state_file.stat().st_mode) == 0o600
    assert not list(work.glob("*.tfvars.json"))
    assert (config_dir / "terraform.tfstate").read_text() == "not ours\n"  # the repository's is untouched

    copy = tf.root_dir
    assert copy != config_dir and (copy / "main.tf").is_file() and not (copy / "main.tf").is_symlink()
    assert (copy / "sub").is_symlink() and (copy / "sub").resolve() == (config_dir / "sub").resolve()
    assert not (copy / "terraform.tfstate").exists()
    assert 'backend "local"' in (copy / "backend_override.tf").read_text()

    tf.destroy({"db_password": password, "size": 3})
    assert tf.resources() == []


def test_failure_raises_with_the_last_lines_and_no_secret(config_dir: Path, tmp_path: Path) -> None:
    password = "pw-" + secrets.token_hex(8)
    tf = Terraform(config_dir, tmp_path / "instance", log=lambda line: None)
    with pytest.raises(TerraformError) as caught:
        tf.apply({"db_password": password, "size": -1})
    error = caught.value
    assert error.command == "apply" and error.returncode == 1
    assert any("size must be positive." in line for line in error.tail)
    assert password not in str(error)
    assert not list((tmp_path / "instance").glob("*.tfvars.json"))


def test_the_copy_follows_the_configuration(config_dir: Path, tmp_path: Path) -> None:
    tf = Terraform(config_dir, tmp_path / "instance", log=lambda line: None)
    (config_dir / "extra.tf").write_text('output "extra" {\n  value = "one"\n}\n')
    tf.init()
    assert (tf.root_dir / "extra.tf").is_file()
    (config_dir / "extra.tf").unlink()
    (config_dir / "main.tf").write_text(CONFIG.replace("var.size > 0", "var.size > 10"))
    with pytest.raises(TerraformError, match="size must be positive"):
        tf.plan({"db_password": "x", "size": 3})  # the edited file is what runs
    assert not (tf.root_dir / "extra.tf").exists()


def test_go_gc_target_is_raised_unless_the_environment_sets_one(
    config_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    tf = Terraform(config_dir, tmp_path / "instance", log=lambda line: None)
    assert tf._environment()["GOGC"] == DEFAULT_GOGC
    monkeypatch.setenv("GOGC", "150")
    assert tf._environment()["GOGC"] == "150"
    assert Terraform(config_dir, tmp_path / "other", env={"GOGC": "50"})._environment()["GOGC"] == "50"


def test_unset_variables_never_reach_terraform(
    config_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``unset`` names is not inherited (the AWS runtime so keeps the run store's endpoint from
    the AWS provider): shown with a ``TF_VAR_`` variable, which Terraform would otherwise take."""
    monkeypatch.setenv("TF_VAR_db_password", "from-the-environment")
    inherits = Terraform(config_dir, tmp_path / "inherits", log=lambda line: None)
    assert inherits.apply({"size": 3})["echo"] == "from-the-environment"
    kept_out = Terraform(
        config_dir, tmp_path / "kept-out", log=lambda line: None, unset=("TF_VAR_db_password",)
    )
    with pytest.raises(TerraformError, match="db_password"):
        kept_out.apply({"size": 3})
