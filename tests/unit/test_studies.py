"""Study files: the five presets parse, every size expands within its limits, small sizes use the
local servers, paper sizes the study machines' tfvars, and a bad file is refused by name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tsbench.runtimes.definition import local_targets
from tsbench.spec import SpecError
from tsbench.studies import all_studies, load_study

ROOT = Path(__file__).resolve().parents[2]
CIDR = {"aws": {"orchestrator_cidr": ["203.0.113.7/32"]}}  # what a user adds for runtime aws
TFVARS_OPTIONS = {  # tfvars variable → AwsOptions field
    "instance_type": "instance_type",
    "data_volume_type": "data_volume_type",
    "data_volume_size_gb": "data_volume_gb",
    "data_volume_iops": "data_volume_iops",
    "data_volume_throughput": "data_volume_throughput",
}


def test_one_preset_per_published_study() -> None:
    studies = all_studies()
    assert sorted(s.mirrors for s in studies if s.mirrors) == ["A", "B", "C", "D", "E"]
    assert [s.name for s in studies if not s.mirrors] == ["production"]  # not a published study
    assert len({s.dag_id for s in studies}) == len(studies)


def plan_or_fit_refusal(study, size: str):
    """The size's plan; None where only its fit on this machine (the orchestrator) refuses it, which
    the size's description must then say (a paper size needs more disk than a CI machine has)."""
    try:
        return study.plan(size, CIDR)
    except SpecError as refused:
        problems = [text for _, text in refused.problems if "point(s) over" not in text]
        assert size.startswith("paper"), refused
        assert all(text.startswith(("disk:", "memory:")) for text in problems), refused
        assert "orchestrator" in study.size(size).description, "say what the orchestrator needs"
        return None


@pytest.mark.parametrize("study", all_studies(), ids=lambda s: s.name)
def test_every_size_expands_within_its_limits(study) -> None:
    for size in ("small", "paper"):
        plan = plan_or_fit_refusal(study, size)
        specs = [point.spec for point in (plan or study.plan(size, CIDR, fit=False)).points]
        fewer = any(spec.trials < 3 for spec in specs)
        said = any("trial" in text for text in study.differences)  # e.g. A's paper size: once
        assert not fewer or said, (size, "presets run at least 3 trials, or say why not")
        assert all(spec.hot_runs >= 3 for spec in specs), (size, "3 hot passes: every query figure has a CV")
        if size == "small":
            assert {spec.runtime for spec in specs} == {"local"}
            assert set(specs[0].targets) <= set(local_targets()), "small sizes use the local servers"
        else:
            assert {spec.runtime for spec in specs} == {"aws"}


@pytest.mark.parametrize("study", all_studies(), ids=lambda s: s.name)
def test_paper_sizes_use_the_study_machines_tfvars(study) -> None:
    """Where a paper size (``paper``, ``paper-…``) names a study machine's tfvars, its AWS options
    are that file's."""
    for name in [size for size in study.sizes if size.startswith("paper")]:
        named = re.search(r"infra/envs/aws/examples/[\w-]+\.tfvars", study.size(name).description)
        if named is None:
            assert study.mirrors in ("C", "E"), "only the laptop studies have no study machine"
            continue
        text = (ROOT / named.group(0)).read_text()
        tfvars = dict(re.findall(r"^(\w+)\s*=\s*\"?([\w.]+)\"?", text, re.MULTILINE))
        spec = study.plan(name, CIDR, fit=False).points[0].spec
        for variable, option in TFVARS_OPTIONS.items():
            if variable in tfvars:
                assert str(getattr(spec.aws, option)) == tfvars[variable], (name, variable, named.group(0))


def test_a_paper_size_over_the_default_limits_is_refused_without_its_own() -> None:
    from tsbench.sweep.plan import expand_sweep

    study = load_study(ROOT / "studies" / "a_fixstars_2023.yaml")
    with pytest.raises(SpecError, match="exceed the limit") as refused:
        expand_sweep(study.params_for("paper", CIDR))
    assert "point(s) over" in str(refused.value)  # the plan's numbers come with the refusal
    try:
        assert study.plan("paper", CIDR).points
    except SpecError as by_fit:  # within its own limits, at most its fit on this machine refuses it
        assert "exceed the limit" not in str(by_fit), by_fit


def test_a_bad_study_file_names_every_bad_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad Name\ntitle: t\nsizes: {small: {params: {}, colour: red}}\nmirrors: Z\n")
    with pytest.raises(SpecError) as refused:
        load_study(bad)
    text = str(refused.value)
    assert "bad.yaml: name" in text and "bad.yaml: sizes.small.colour" in text
    good = load_study(ROOT / "studies" / "e_athens_2022.yaml")
    with pytest.raises(SpecError, match="has no size 'huge'"):
        good.params_for("huge")


def test_the_command_line_shows_a_study_plan_and_refuses_bad_overrides() -> None:
    env = {"PYTHONPATH": str(ROOT / "plugins")}
    run = [sys.executable, "-m", "tsbench", "study", str(ROOT / "studies" / "b_questdb_tsbs.yaml")]
    shown = subprocess.run([*run, "--plan-only"], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "9 point(s) over scales, workers; 3 dataset(s)" in shown.stdout
    bad = subprocess.run([*run, "--plan-only", "--workers", "0,2"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "workers (0):" in bad.stderr
