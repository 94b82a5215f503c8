"""The claims of a study as a plain-text table (the CLI prints it after a study's run): one row per
claim — its line, verdict, how many of its checks were made — and the counts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tabulate import tabulate

from tsbench.results.model import RunResult
from tsbench.verdicts.claims import StudyCheck, check_study
from tsbench.verdicts.published import Published

QUOTE_CHARS = 72


def counts_line(checked: StudyCheck) -> str:
    """``14 claims: reproduced 2 · tie 3 · … (2 judged on part of their checks)``."""
    return f"{len(checked.verdicts)} claims: {checked.tally()}"


def claims_table(published: Published, runs: Sequence[RunResult]) -> str:
    """Each claim's verdict over ``runs`` (a comparison's points), then the counts."""
    checked = check_study(published, runs)
    rows = []
    for item in checked.verdicts:
        line = re.match(r"(lines? [\d-]+|[Tt]able \w+)", item.claim.text)
        quote = item.claim.text[line.end() if line else 0 :].lstrip(": ")
        made = f"{item.made}/{len(item.checks)}"
        short = quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…"
        rows.append([line.group() if line else "", item.verdict.value, made, short])
    table = tabulate(rows, ["claim", "verdict", "checks made", "quote"], tablefmt="github")
    return f"{table}\n\n{counts_line(checked)}"
