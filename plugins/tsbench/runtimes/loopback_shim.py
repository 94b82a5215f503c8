"""The loopback-bind library a local server is preloaded with when it binds its listeners to every
address whatever its configuration says (the target folders that use it say which, and why):
``scripts/compile_loopback_shim.sh DIR`` compiles it into ``DIR``, named by its source's sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tsbench.runtimes.contract import TargetError

SOURCE = Path(__file__).resolve().parent / "native" / "loopback_bind.c"


def library_in(directory: Path) -> Path:
    """The library ``compile_loopback_shim.sh`` puts in ``directory`` for the current source."""
    sha12 = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return directory / f"tsbench-loopback-bind-{sha12}.so"


def installed_library(directory: Path, target: str) -> Path:
    """``library_in(directory)``; TargetError naming the install to run when it is missing."""
    library = library_in(directory)
    if not library.is_file():
        raise TargetError(f"{target}: {library} is missing; run scripts/install.sh {target}")
    return library
