"""The run option ``compress_after_load``: refused up front (naming the field and the targets that
can) when no target of the run can compress; accepted when one can, the others then run as always."""

from __future__ import annotations

import pytest

from tsbench.spec import RunSpec
from tsbench.targets.base import TargetError
from tsbench.targets.registry import load_target


def test_a_run_whose_targets_cannot_compress_is_refused_naming_the_field() -> None:
    refused = r"compress_after_load: none of the run's targets can .*timescaledb_tsl"
    with pytest.raises(ValueError, match=refused):
        RunSpec(targets=["questdb", "postgres"], compress_after_load=True)


def test_a_run_with_one_target_that_compresses_is_accepted() -> None:
    spec = RunSpec(targets=["questdb", "timescaledb_tsl"], compress_after_load=True)
    assert spec.compress_after_load and not RunSpec(targets=["questdb"]).compress_after_load


def test_only_the_full_timescaledb_edition_declares_compression_after_the_load() -> None:
    from tsbench.targets.registry import target_names

    able = [name for name in target_names() if load_target(name).capabilities.compresses_after_load]
    assert able == ["timescaledb_tsl"]
    apache = load_target("timescaledb")
    with pytest.raises(TargetError, match="timescaledb cannot compress after the load: none: the Apache-2"):
        apache.compress(object.__new__(apache))
