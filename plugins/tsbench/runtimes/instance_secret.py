"""A local server instance's own password: generated once, kept beside its data, readable by its
owner only (0600), never logged. Every later call, in any process, returns the same one."""

from __future__ import annotations

import secrets
from pathlib import Path

from tsbench.results.files import atomic_writer

SECRET_BYTES = 24  # 32 URL-safe characters: no quote, space or backslash to escape in any dialect


def instance_password(home: Path, name: str = "password") -> str:
    """The password ``name`` of the instance living in ``home`` (``home/.secret-<name>``), made
    the first time it is asked for (written atomically with mode 0600)."""
    path = home / f".secret-{name}"
    if not path.is_file():
        home.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path, mode=0o600) as out:
            out.write(secrets.token_urlsafe(SECRET_BYTES).encode() + b"\n")
    return path.read_text().strip()
