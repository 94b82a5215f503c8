"""The presets against the studies as published: every claim of ``../shared/studies/published.json``
is quoted by its study's preset, word for word with its line, in the study's order; none is dropped,
reworded, renumbered or added. Where ``../shared`` is absent (a clone made elsewhere), the repository's
copy of the claims (``tests/data/published_claims.json``) stands in; where both exist they must agree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tsbench.studies import PUBLISHED_STUDIES, REPO, all_studies

SNAPSHOT = REPO / "tests" / "data" / "published_claims.json"


def _shared_published() -> Path:
    return Path(os.environ.get("TSBENCH_SHARED") or REPO.parent / "shared") / "studies" / "published.json"


def published_claims() -> dict[str, list[str]]:
    """Study id → its claims as published: ``../shared`` when present (checked against the copy)."""
    copy: dict[str, list[str]] = json.loads(SNAPSHOT.read_text())["claims"]
    source = _shared_published()
    if source.is_file():
        shared = {s["id"]: s["claims"] for s in json.loads(source.read_text())["studies"]}
        assert shared == copy, f"{SNAPSHOT} differs from {source}: copy the claims again"
    return copy


def test_every_study_has_its_preset() -> None:
    mirrored = sorted(s.mirrors for s in all_studies() if s.mirrors)
    assert mirrored == sorted(PUBLISHED_STUDIES) == sorted(published_claims())


@pytest.mark.parametrize("study", [s for s in all_studies() if s.mirrors], ids=lambda s: s.name)
def test_a_preset_quotes_every_claim_of_its_study_word_for_word(study) -> None:
    expected = published_claims()[study.mirrors]
    quoted = [claim.text for claim in study.published.claims]
    dropped = [text for text in expected if text not in quoted]
    foreign = [text for text in quoted if text not in expected]
    assert not dropped, f"{study.name} drops or rewords: {dropped}"
    assert not foreign, f"{study.name} quotes what the study does not say (or with a wrong line): {foreign}"
    assert quoted == expected, f"{study.name}: claims out of the study's order or repeated"


CIDR = {"aws": {"orchestrator_cidr": ["203.0.113.7/32"]}}


@pytest.mark.parametrize("study", [s for s in all_studies() if s.mirrors], ids=lambda s: s.name)
def test_every_claim_that_can_be_measured_has_a_size_that_measures_it(study) -> None:
    """A claim with a comparison tsbench can make is judged by some size of its preset (or would be,
    on a cloud machine with the cores or memory it needs); the others say, in every check, why no run
    can judge them."""
    from tsbench.verdicts.coverage import Coverage

    per_size = {
        size: study.claims_coverage(size, CIDR if study.params_for(size).get("runtime") == "aws" else None)
        for size in study.sizes
    }
    for index, claim in enumerate(study.published.claims):
        reached = {found[index] for found in per_size.values()}
        if all(check.not_comparable for check in claim.checks):
            assert reached == {Coverage.NOT}
            assert all(len(check.not_comparable or "") > 30 for check in claim.checks), claim.text
        else:
            assert reached - {Coverage.NOT}, f"{study.name}: no size can judge {claim.text[:80]}"
