"""infra/ for real: ``terraform fmt``, offline ``init`` and ``validate``, then plan / apply / destroy
of ``infra/envs/aws`` against a local moto server (EC2, S3, STS), driven through
``tsbench.runtimes.terraform.Terraform``, checked with boto3 against the same server.

The runs share one moto server and go in parallel threads (the AWS provider's waiters sleep about
10 s per resource even against moto, so serial runs would take minutes):

* ``complete``: client host + results bucket + key pair, state in moto's S3 with ``use_lockfile``;
  a second Terraform must be refused while the apply holds the lock; then destroy.
* ``broken``: an instance type EC2 rejects (moto validates types here), so apply fails after the
  security group, data volume and bucket exist; destroy must still remove them.
* ``plan``: no key, no client, a bucket with a lifecycle rule: exactly 10 resources planned.
* ``init`` / ``validate``: the committed lock file and every module, offline.

Afterwards nothing may remain: no live instance, volume, non-default security group, key pair or
bucket (except the state bucket). Needs ``terraform`` on PATH and the AWS provider in a filesystem
mirror (``TSBENCH_TF_PLUGIN_MIRROR``, default ``/opt/tf-plugins``).
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import secrets
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tsbench.runtimes.terraform import Terraform, TerraformError

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
ENV_ROOT = INFRA / "envs" / "aws"
MODULES = sorted(path for path in (INFRA / "modules").iterdir() if path.is_dir())
MIRROR = Path(os.environ.get("TSBENCH_TF_PLUGIN_MIRROR") or "/opt/tf-plugins")
REGION = "us-east-1"
STATE_BUCKET = "tsbench-tfstate"
ORCHESTRATOR = "203.0.113.7/32"

pytest_plugins = ("integration.moto",)  # the moto_url fixture: a moto server for this module
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH"),
    pytest.mark.skipif(
        not (MIRROR / "registry.terraform.io").is_dir(), reason=f"no provider mirror {MIRROR}"
    ),
]


def aws_client(service: str, url: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def tf_env() -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_EC2_METADATA_DISABLED": "true",
        "TSBENCH_TF_PLUGIN_MIRROR": str(MIRROR),
    }


def ssh_public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


@dataclass
class Run:
    """What one scenario saw; ``error`` is an unexpected exception (re-raised by the tests)."""

    name: str
    log: list[str] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    after_apply: dict[str, Any] = field(default_factory=dict)
    resources_after_apply: list[str] = field(default_factory=list)
    resources_after_destroy: list[str] = field(default_factory=lambda: ["(destroy not reached)"])
    apply_error: str = ""
    lock_seen_during_apply: bool = False
    lock_refusal: str = ""
    state_keys: list[str] = field(default_factory=list)
    user_data: str = ""
    user_data_bytes: int = 0
    work_dir: Path | None = None
    planned_changes: bool = False
    ingress_refusal: str = ""
    seconds: float = 0.0
    error: BaseException | None = None

    def check(self) -> Run:
        if self.error is not None:
            raise self.error
        return self


def tagged(ec2: Any, run: str) -> dict[str, Any]:
    """Everything moto holds that carries tsbench:run = ``run``."""
    tag = [{"Name": "tag:tsbench:run", "Values": [run]}]
    live = [{"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}]
    instances = [
        instance
        for reservation in ec2.describe_instances(Filters=tag + live)["Reservations"]
        for instance in reservation["Instances"]
    ]
    return {
        "instances": instances,
        "volumes": ec2.describe_volumes(Filters=tag)["Volumes"],
        "security_groups": ec2.describe_security_groups(Filters=tag)["SecurityGroups"],
        "key_pairs": ec2.describe_key_pairs(Filters=tag)["KeyPairs"],
    }


def base_variables(name: str, url: str, ami: str) -> dict[str, Any]:
    return {
        "name": name,
        "aws_endpoint_url": url,
        "skip_aws_validation": True,
        "ami_id": ami,
        "orchestrator_cidr": [ORCHESTRATOR],
        "instance_type": "m5.large",
        "data_volume_size_gb": 10,
        "database": "questdb",  # required: the runtime always names the target and its ports
        "db_ports": [9000, 8812],
    }


SECRETS = {"node_agent_token": "tok-" + secrets.token_hex(12), "db_password": "pw-" + secrets.token_hex(8)}


def run_complete(url: str, ami: str, work: Path, creating: threading.Event) -> Run:
    """Everything on, remote state in moto's S3 with S3-native locking. Sets ``creating`` once the
    apply starts creating resources (from then on it mostly waits on the provider's pollers)."""
    run = Run("complete")

    def log(line: str) -> None:
        run.log.append(line)
        if line.endswith("Creating..."):
            creating.set()

    s3, ec2 = aws_client("s3", url), aws_client("ec2", url)
    backend = work / "backend.hcl"
    backend.parent.mkdir(parents=True, exist_ok=True)
    backend.write_text(
        f'bucket = "{STATE_BUCKET}"\nregion = "{REGION}"\nuse_lockfile = true\nuse_path_style = true\n'
        "skip_credentials_validation = true\nskip_requesting_account_id = true\n"
        "skip_metadata_api_check = true\nskip_region_validation = true\n"
        f'endpoints = {{\n  s3 = "{url}"\n  sts = "{url}"\n  iam = "{url}"\n}}\n'
    )
    run.work_dir = work / "complete"
    tf = Terraform(ENV_ROOT, run.work_dir, log=log, env=tf_env(), backend_config=backend)
    lock_key = f"{tf.state_key}.tflock"
    variables = {
        **base_variables("tsb-complete", url, ami),
        **SECRETS,
        "database": "timescaledb",
        "db_ports": [5432],
        "ssh_public_key": ssh_public_key(),
        "client_host": True,
        "client_instance_type": "m5.large",
        # no lifecycle rule here: against moto the provider polls it for ~55 s (see the plan run)
        "results_bucket": True,
        "data_volume_iops": 4000,
        "data_volume_throughput": 200,
    }

    # A second Terraform (its own work dir, the same remote state) tries to plan while the apply holds
    # the lock: it must be refused at once, neither wait nor break the lock.
    contender = Terraform(
        ENV_ROOT,
        work / "complete-contender",
        log=run.log.append,
        env=tf_env(),
        backend_config=backend,
        state_key=tf.state_key,
        lock_timeout="0s",
    )
    applying = threading.Event()

    def contend_when_locked() -> None:
        while applying.is_set():
            listed = s3.list_objects_v2(Bucket=STATE_BUCKET, Prefix=lock_key).get("Contents", [])
            if any(item["Key"] == lock_key for item in listed):
                run.lock_seen_during_apply = True
                try:
                    contender.plan(variables)
                except TerraformError as error:
                    run.lock_refusal = str(error)
                return
            time.sleep(0.2)

    applying.set()
    watcher = threading.Thread(target=contend_when_locked)
    watcher.start()
    try:
        run.outputs = tf.apply(variables)
    finally:
        applying.clear()
        watcher.join()
    run.after_apply = tagged(ec2, "tsb-complete")
    bucket = run.outputs["results_bucket"]["name"]
    run.after_apply["bucket"] = {
        "versioning": s3.get_bucket_versioning(Bucket=bucket).get("Status"),
        "encryption": s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"],
        "public_access_block": s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"],
        "tags": {tag["Key"]: tag["Value"] for tag in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]},
    }
    run.resources_after_apply = tf.resources()
    instance_id = run.outputs["benchmark_host"]["instance_id"]
    encoded = ec2.describe_instance_attribute(InstanceId=instance_id, Attribute="userData")["UserData"][
        "Value"
    ]
    run.user_data_bytes = len(base64.b64decode(encoded))
    run.user_data = gzip.decompress(base64.b64decode(encoded)).decode()
    run.state_keys = [item["Key"] for item in s3.list_objects_v2(Bucket=STATE_BUCKET).get("Contents", [])]

    tf.destroy(variables)
    run.resources_after_destroy = tf.resources()
    return run


def run_broken(url: str, ami: str, work: Path) -> Run:
    """Apply fails at the instance (a type EC2 rejects) after other resources exist; then destroy."""
    run = Run("broken")
    run.work_dir = work / "broken"
    ec2 = aws_client("ec2", url)
    tf = Terraform(ENV_ROOT, run.work_dir, log=run.log.append, env=tf_env())
    variables = {
        **base_variables("tsb-broken", url, ami),
        **SECRETS,
        "instance_type": "m5.tsbench-typo",
        "availability_zone": f"{REGION}b",  # given, so the zone lookup does not reject the type at plan
        "results_bucket": True,
    }
    try:
        tf.apply(variables)
    except TerraformError as error:
        run.apply_error = str(error)
    run.after_apply = tagged(ec2, "tsb-broken")
    run.resources_after_apply = tf.resources()
    tf.destroy(variables)
    run.resources_after_destroy = tf.resources()
    return run


def run_plan(url: str, ami: str, work: Path) -> Run:
    run = Run("plan")
    run.work_dir = work / "plan"
    tf = Terraform(ENV_ROOT, run.work_dir, log=run.log.append, env=tf_env())
    variables = {
        **base_variables("tsb-plan", url, ami),
        **SECRETS,
        "database": "postgres",
        "db_ports": [5432],
        "results_bucket": True,
        "results_noncurrent_version_expiration_days": 30,
    }
    try:  # Terraform's own check refuses the whole internet without a reason, before any change
        tf.plan({**variables, "orchestrator_cidr": ["0.0.0.0/0"]})
    except TerraformError as refused:
        run.ingress_refusal = str(refused)
    run.planned_changes = tf.plan(variables)
    run.resources_after_destroy = tf.resources()
    return run


def init_env_root(work: Path) -> Run:
    """``init`` of infra/envs/aws from the mirror, with the committed lock file."""
    run = Run("init envs/aws")
    run.work_dir = work / "init-env"
    Terraform(ENV_ROOT, run.work_dir, log=run.log.append, env=tf_env()).init()
    return run


def validate_all(work: Path) -> Run:
    """``terraform validate`` of the env root and of every module with its defaults, all called from
    one throw-away root: one provider start instead of four (the provider takes seconds of CPU)."""
    run = Run("validate")
    root = work / "validate-root"
    root.mkdir(parents=True)
    run.work_dir = work / "validate"
    tf = Terraform(root, run.work_dir, log=run.log.append, env=tf_env())
    # Terraform runs in the instance's copy (tf.root_dir): module paths relative to that copy
    required = {ENV_ROOT: '  database = "questdb"\n  db_ports = [9000]\n'}  # no defaults: see REQUIRED
    calls = [
        f'module "{path.name}" {{\n  source = "{os.path.relpath(path, tf.root_dir)}"\n'
        f"{required.get(path, '')}}}\n"
        for path in [ENV_ROOT, *MODULES]
    ]
    root.joinpath("main.tf").write_text("".join(calls))
    tf.validate()
    return run


@pytest.fixture(scope="module")
def runs(moto_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every scenario, run in parallel; ``leftovers`` is what moto holds once all have finished."""
    work = tmp_path_factory.mktemp("terraform")
    ec2, s3 = aws_client("ec2", moto_url), aws_client("s3", moto_url)
    s3.create_bucket(Bucket=STATE_BUCKET)
    images = ec2.describe_images(Filters=[{"Name": "architecture", "Values": ["x86_64"]}])["Images"]
    ami = sorted(image["ImageId"] for image in images)[0]

    def guarded(name: str, job: Callable[[], Run]) -> Run:
        started = time.monotonic()
        try:
            run = job()
        except BaseException as error:  # reported by the tests that read this run
            run = Run(name, error=error)
        run.seconds = time.monotonic() - started
        return run

    # The other jobs start once "complete" (the longest) is past its CPU-heavy plan: on a 2-core
    # machine their provider starts then overlap its waits instead of slowing its plan down.
    creating = threading.Event()

    def complete() -> Run:
        try:
            return run_complete(moto_url, ami, work, creating)
        finally:
            creating.set()

    def after_complete_plans(job: Callable[[], Run]) -> Callable[[], Run]:
        def later() -> Run:
            creating.wait(timeout=180)
            return job()

        return later

    jobs: dict[str, Callable[[], Run]] = {
        "complete": complete,
        "broken": after_complete_plans(lambda: run_broken(moto_url, ami, work)),
        "plan": after_complete_plans(lambda: run_plan(moto_url, ami, work)),
        "init": after_complete_plans(lambda: init_env_root(work)),
        "validate": after_complete_plans(lambda: validate_all(work)),
    }
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {name: pool.submit(guarded, name, job) for name, job in jobs.items()}
        done = {name: future.result() for name, future in futures.items()}
    live = [{"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}]
    leftovers = Run("leftovers")
    leftovers.after_apply = {
        "instances": [
            instance["InstanceId"]
            for reservation in ec2.describe_instances(Filters=live)["Reservations"]
            for instance in reservation["Instances"]
        ],
        "volumes": [volume["VolumeId"] for volume in ec2.describe_volumes()["Volumes"]],
        "security_groups": [
            group["GroupId"]
            for group in ec2.describe_security_groups()["SecurityGroups"]
            if group["GroupName"] != "default"
        ],
        "key_pairs": [pair["KeyName"] for pair in ec2.describe_key_pairs()["KeyPairs"]],
        "buckets": [
            bucket["Name"] for bucket in s3.list_buckets()["Buckets"] if bucket["Name"] != STATE_BUCKET
        ],
    }
    done["leftovers"] = leftovers
    return done


# -- static checks --------------------------------------------------------------------------------


def test_terraform_files_are_formatted() -> None:
    result = subprocess.run(
        ["terraform", "fmt", "-check", "-recursive", "-diff", str(INFRA)], capture_output=True, text=True
    )
    assert result.returncode == 0, f"terraform fmt would change:\n{result.stdout}{result.stderr}"


# Variables without a default: the env root cannot guess the target (its folder name and ports come
# from the runtime, which always sets them; a default naming one database would break the rule that a
# target is described only in its own folder).
REQUIRED = {ENV_ROOT: ("database", "db_ports")}


def test_every_module_has_the_standard_files_and_documented_variables() -> None:
    for module in MODULES:
        for name in ("main.tf", "variables.tf", "outputs.tf", "versions.tf"):
            assert (module / name).is_file(), f"{module.name}/{name} missing"
    for directory in [ENV_ROOT, *MODULES]:
        blocks = (directory / "variables.tf").read_text().split('variable "')[1:]
        assert blocks, directory
        for block in blocks:
            name = block.split('"', 1)[0]
            needed = (
                ("type", "description")
                if name in REQUIRED.get(directory, ())
                else ("type", "description", "default")
            )
            for attribute in needed:
                assert f"\n  {attribute} " in block, f"{directory.name}: variable {name} has no {attribute}"
            if any(word in name for word in ("password", "token")):
                assert "sensitive   = true" in block, f"{directory.name}: {name} is not marked sensitive"


def test_examples_set_only_declared_variables_and_no_secrets() -> None:
    declared = set(
        re.findall(r'^variable "([a-z0-9_]+)"', (ENV_ROOT / "variables.tf").read_text(), re.MULTILINE)
    )
    examples = sorted((ENV_ROOT / "examples").glob("*.tfvars"))
    assert {path.stem for path in examples} >= {"study-a", "study-b", "study-d", "smoke"}
    for example in examples:
        assigned = set(re.findall(r"^([a-z0-9_]+)\s*=", example.read_text(), re.MULTILINE))
        assert assigned and assigned <= declared, f"{example.name}: unknown {sorted(assigned - declared)}"
        assert not assigned & {"node_agent_token", "db_password"}, f"{example.name} holds a secret"


def test_env_root_and_modules_validate_offline(runs: dict[str, Run]) -> None:
    run = runs["validate"].check()
    assert {path.name for path in MODULES} == {"benchmark_host", "client_host", "results_bucket"}
    assert run.work_dir is not None
    called = (run.work_dir / "tree" / "main.tf").read_text()
    assert all(f'module "{path.name}"' in called for path in [ENV_ROOT, *MODULES])
    assert "Success! The configuration is valid." in run.log


def test_committed_lock_file_covers_the_mirrored_provider(runs: dict[str, Run]) -> None:
    """``init`` from the mirror leaves the committed lock file as it is (nothing missing)."""
    run = runs["init"].check()
    assert run.work_dir is not None
    copied = run.work_dir / "tree" / ENV_ROOT.relative_to(REPO) / ".terraform.lock.hcl"
    assert copied.read_text() == (ENV_ROOT / ".terraform.lock.hcl").read_text()


# -- runs against moto ----------------------------------------------------------------------------


def test_plan_counts_exactly_what_the_toggles_ask_for(runs: dict[str, Run]) -> None:
    run = runs["plan"].check()
    assert run.planned_changes
    # host: security group, data volume, instance, attachment (no key pair: no ssh key; no client);
    # bucket: bucket, public access block, ownership, versioning, encryption, lifecycle rule
    assert "Plan: 10 to add, 0 to change, 0 to destroy." in run.log
    lifecycle = "module.results_bucket[0].aws_s3_bucket_lifecycle_configuration.this[0] will be created"
    assert any(lifecycle in line for line in run.log)
    assert not any("aws_key_pair" in line or "module.client_host" in line for line in run.log)
    assert run.resources_after_destroy == []  # a plan creates nothing


def test_terraform_itself_refuses_the_whole_internet_without_a_reason(runs: dict[str, Run]) -> None:
    refusal = runs["plan"].check().ingress_refusal
    assert "Invalid value for variable" in refusal and "state why in allow_wide_ingress" in refusal, refusal


def test_apply_creates_the_hosts_volume_and_bucket(runs: dict[str, Run]) -> None:
    run = runs["complete"].check()
    host, client, bucket = (run.outputs[key] for key in ("benchmark_host", "client_host", "results_bucket"))
    assert bucket["name"].startswith("tsbench-results-") and bucket["region"] == REGION
    found = run.after_apply
    instances = {instance["InstanceId"]: instance for instance in found["instances"]}
    assert set(instances) == {host["instance_id"], client["instance_id"]}
    assert host["availability_zone"] == client["availability_zone"]
    assert run.outputs["agent_url"] == f"http://{host['public_ip']}:9700"
    assert run.outputs["region"] == REGION

    volumes = {
        {tag["Key"]: tag["Value"] for tag in volume["Tags"]}["Name"]: volume for volume in found["volumes"]
    }
    assert set(volumes) == {"tsb-complete-data", "tsb-complete-root", "tsb-complete-client-root"}
    volume = volumes["tsb-complete-data"]
    assert volume["VolumeId"] == host["data_volume"]["id"]
    assert (volume["VolumeType"], volume["Size"], volume["Iops"], volume["Throughput"]) == (
        "gp3",
        10,
        4000,
        200,
    )
    assert volume["Encrypted"] and volume["AvailabilityZone"] == host["availability_zone"]
    assert [(a["InstanceId"], a["Device"]) for a in volume["Attachments"]] == [
        (host["instance_id"], "/dev/sdf")
    ]

    groups = {group["GroupId"]: group for group in found["security_groups"]}
    assert set(groups) == {host["security_group_id"], client["security_group_id"]}
    db_rules = groups[host["security_group_id"]]["IpPermissions"]
    from_orchestrator = {
        r["FromPort"] for r in db_rules for ip in r.get("IpRanges", []) if ip["CidrIp"] == ORCHESTRATOR
    }
    from_client = {r["FromPort"] for r in db_rules for g in r.get("UserIdGroupPairs", [])}
    assert from_orchestrator == {22, 5432, 9700}
    assert from_client == {5432, 9700}
    assert all(ip["CidrIp"] == ORCHESTRATOR for r in db_rules for ip in r.get("IpRanges", []))

    assert [pair["KeyName"] for pair in found["key_pairs"]] == [host["key_name"]]
    for instance in instances.values():
        assert instance["KeyName"] == host["key_name"]
        assert instance["MetadataOptions"]["HttpTokens"] == "required"
        tags = {tag["Key"]: tag["Value"] for tag in instance["Tags"]}
        assert tags["tsbench:run"] == "tsb-complete" and tags["tsbench:database"] == "timescaledb"

    settings = found["bucket"]
    assert settings["versioning"] == "Enabled"
    assert settings["encryption"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    assert settings["public_access_block"] == {
        "BlockPublicAcls": True,
        "IgnorePublicAcls": True,
        "BlockPublicPolicy": True,
        "RestrictPublicBuckets": True,
    }
    assert settings["tags"]["tsbench:run"] == "tsb-complete"


def test_user_data_is_a_cloud_config_that_mounts_starts_the_agent_and_installs(runs: dict[str, Run]) -> None:
    run = runs["complete"].check()
    assert 0 < run.user_data_bytes <= 16 * 1024  # EC2's limit on raw user data (here gzip-compressed)
    assert run.user_data.startswith("#cloud-config\n")
    config = yaml.safe_load(run.user_data)
    files = {entry["path"]: entry for entry in config["write_files"]}
    assert files["/etc/tsbench/agent.token"]["content"] == SECRETS["node_agent_token"]
    assert files["/etc/tsbench/agent.token"]["permissions"] == "0600"
    assert files["/etc/tsbench/db_password"]["permissions"] == "0600"
    module_files = INFRA / "modules" / "benchmark_host" / "files"
    assert files["/opt/tsbench/node_agent.py"]["content"] == (module_files / "node_agent.py").read_text()
    assert files["/opt/tsbench/bootstrap.sh"]["content"] == (module_files / "bootstrap.sh").read_text()
    install = REPO / "plugins" / "tsbench" / "targets" / "timescaledb" / "cloud_install.sh"
    assert files["/opt/tsbench/install_db.sh"]["content"] == install.read_text()
    host_env = dict(line.split("=", 1) for line in files["/etc/tsbench/host.env"]["content"].splitlines())
    assert host_env["TSBENCH_DATA_VOLUME_ID"] == run.outputs["benchmark_host"]["data_volume"]["id"]
    assert host_env["TSBENCH_AGENT_PORT"] == "9700" and host_env["TSBENCH_DB_DIR"] == "/data/db"
    assert config["runcmd"] == [["bash", "/opt/tsbench/bootstrap.sh"]]


def test_state_lives_in_s3_and_is_locked_while_terraform_works(runs: dict[str, Run]) -> None:
    run = runs["complete"].check()
    key = "tsbench/complete/terraform.tfstate"
    assert run.state_keys == [key]  # the lock object is gone once apply finished
    assert run.lock_seen_during_apply
    assert "Error acquiring the state lock" in run.lock_refusal
    assert "OperationTypeApply" in run.lock_refusal  # held by the running apply
    assert not (run.work_dir / "terraform.tfstate").exists()  # nothing local


def test_destroy_removes_everything(runs: dict[str, Run]) -> None:
    run = runs["complete"].check()
    assert len(run.resources_after_apply) >= 15
    assert run.resources_after_destroy == []


def test_failed_apply_then_destroy_leaves_nothing(runs: dict[str, Run]) -> None:
    run = runs["broken"].check()
    assert "m5.tsbench-typo" in run.apply_error
    # the failure came after other resources existed: a real partial apply
    assert run.after_apply["instances"] == []
    assert len(run.after_apply["volumes"]) == 1 and len(run.after_apply["security_groups"]) == 1
    assert "module.results_bucket[0].aws_s3_bucket.this" in run.resources_after_apply
    assert "module.benchmark_host.aws_ebs_volume.data" in run.resources_after_apply
    assert run.resources_after_destroy == []


def test_no_resource_is_left_anywhere(runs: dict[str, Run]) -> None:
    for name in ("complete", "broken", "plan"):
        runs[name].check()
    assert runs["leftovers"].after_apply == {
        "instances": [],
        "volumes": [],
        "security_groups": [],
        "key_pairs": [],
        "buckets": [],
    }


def test_secrets_never_reach_the_log_and_files_stay_private(runs: dict[str, Run]) -> None:
    for name in ("complete", "broken", "plan"):
        run = runs[name].check()
        text = "\n".join(run.log)
        assert run.log, name
        for value in SECRETS.values():
            assert value not in text, f"{name}: a secret reached the log"
        assert run.work_dir is not None
        assert stat.S_IMODE(run.work_dir.stat().st_mode) == 0o700
        assert not list(run.work_dir.glob("*.tfvars.json")), f"{name}: variables file left behind"
    state = runs["broken"].work_dir / "terraform.tfstate"
    assert state.is_file() and stat.S_IMODE(state.stat().st_mode) == 0o600
