"""Secrets out of text that leaves the machine (a notification) or goes to a log.

Text from a run (a phase's error, a rejected parameter) may hold credentials: a URL with
``user:password@``, a ``password=…`` in a driver's message, or the very value of a configured
secret. ``Redactor`` masks all three; the caller names the configured secrets it knows (the
connections' passwords, the environment's secret-looking variables).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MASK = "***"
# scheme://user:password@host or scheme://token@host → scheme://***@host
URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
# password=…, secret: …, api_key="…", aws_secret_access_key=…, token=… (the value up to a separator)
SECRET_NAME = re.compile(r"(?i)password|passwd|secret|token|api[_-]?key|credential|webhook")
ASSIGNED = re.compile(
    r"(?i)\b([\w.-]*(?:password|passwd|secret|token|api[_-]?key)[\w.-]*)(\s*[=:]\s*)(['\"]?)[^\s'\",;&)}\]]+"
)


@dataclass(frozen=True)
class Redactor:
    """``redactor(text)``: ``text`` with every known secret (``secrets``: values, longest first),
    every URL's user information and every secret-named assignment's value replaced by ``***``."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, secrets: Iterable[str | None]) -> Redactor:
        """A redactor of the non-empty values among ``secrets`` (each also stripped of blanks)."""
        values = {value.strip() for value in secrets if value and value.strip()}
        return cls(tuple(sorted(values, key=len, reverse=True)))

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        text = URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
        return ASSIGNED.sub(lambda match: f"{match[1]}{match[2]}{match[3]}{MASK}", text)


def secret_values(environment: Mapping[str, str]) -> list[str]:
    """The values of ``environment``'s variables whose names look secret (``*_PASSWORD``,
    ``AWS_SECRET_ACCESS_KEY``, ``*_TOKEN`` …)."""
    return [value for name, value in environment.items() if SECRET_NAME.search(name) and value]
