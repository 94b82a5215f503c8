"""A ``RunSummary`` rendered into a ``Notice``: the e-mail's subject and HTML body, a plain-text
body, the chat message (Slack's mrkdwn) and the report PDF to attach.

Jinja2 templates (``templates/notice.*.j2``): the HTML one autoescaped, the text ones not. The
outputs are final text: whoever sends them must not render them as templates again (an error
message may contain ``{{``); ``tsbench.airflow.notify`` hands them to Airflow's notifiers as
context values, never as template source. Every output passes the redactor once more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tsbench.notify.summary import RunSummary
from tsbench.report import fmt

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class Notice:
    """One run's notification: ``subject`` (one line), ``text`` (plain), ``html`` (the e-mail's
    body), ``chat`` (a Slack-compatible message) and ``attachment`` (the report PDF, None: no
    report was made)."""

    subject: str
    text: str
    html: str
    chat: str
    attachment: Path | None


def _environment(autoescape: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=autoescape,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(rate=fmt.rate, ms=fmt.ms)
    return env


HTML, TEXT = _environment(autoescape=True), _environment(autoescape=False)


def subject_of(summary: RunSummary) -> str:
    """``[tsbench] tsbench_nightly passed: 20261124T023000Z-1a2b3c`` or ``… failed targets:
    postgres at scale 100 failed in load (…)``: the outcome and the first failure's place."""
    head = f"[tsbench] {summary.end.pipeline} {summary.outcome.value}"
    run = summary.run or summary.end.run_id
    if not summary.failures or summary.passed:
        return f"{head}: {run}"
    first = summary.failures[0]
    more = f" and {len(summary.failures) - 1} more" if len(summary.failures) > 1 else ""
    return f"{head}: {first.where} failed in {first.phase}{more} ({run})"


def compose(summary: RunSummary, redact: Callable[[str], str]) -> Notice:
    """The notice of ``summary``; every text passes ``redact`` after rendering."""
    values = {"s": summary, "subject": subject_of(summary)}
    return Notice(
        subject=redact(" ".join(values["subject"].split())),
        text=redact(TEXT.get_template("notice.txt.j2").render(values)),
        html=redact(HTML.get_template("notice.html.j2").render(values)),
        chat=redact(TEXT.get_template("notice.chat.j2").render(values)),
        attachment=summary.report,
    )
