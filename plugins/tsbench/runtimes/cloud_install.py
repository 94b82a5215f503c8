"""The cloud host's install script, rendered from a target's ``ServerDefinition``.

``render_install_script`` joins three parts into the one script the benchmark host runs
(``/opt/tsbench/install_db.sh``): a header generated from ``targets/<name>/definition.py`` (the version
variable, ``tsbench_settings``, which prints the tuning table evaluated on the VM's own cores and memory,
and a function printing each of the definition's ``cloud_files``), the shared helpers of ``cloud_lib.sh``
(``log``, ``apt_get``, ``install_db_unit``, ``wait_ready``) and the target's ``cloud_install.sh`` (its
packages, files and unit lines). The target's script therefore names no version and restates no setting."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import jinja2

from tsbench.runtimes.definition import TARGETS_DIR, Scaled, ServerDefinition, TuningValue

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "cloud_lib.sh"
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # a shell script: values are shell-quoted by the filter
)
TEMPLATES.filters["shell_quote"] = shlex.quote


def target_script(name: str) -> Path:
    """The target's own part: ``targets/<name>/cloud_install.sh``."""
    return TARGETS_DIR / name / "cloud_install.sh"


def _without_preamble(text: str) -> str:
    """The target script minus its shebang and strict-mode line (the rendered header has both)."""
    lines = text.splitlines()
    kept = [line for line in lines if not line.startswith("#!") and line.strip() != "set -euo pipefail"]
    return "\n".join(kept).strip("\n") + "\n"


def bash_words(table: Mapping[str, TuningValue]) -> list[tuple[str, str]]:
    """``(key, bash word)`` per entry: fixed values quoted, ``Scaled`` ones as bash arithmetic."""
    return [
        (key, f'"{value.bash()}"' if isinstance(value, Scaled) else shlex.quote(value))
        for key, value in table.items()
    ]


FILE_END = "TSBENCH_FILE"


def file_bodies(definition: ServerDefinition) -> list[tuple[str, str]]:
    """``(shell function, text)`` per cloud file. The text goes into an unquoted here-document, so
    the host expands its ``$`` words; ValueError for a backslash or backtick (the shell would read
    them too), a function name that is no identifier, or a line that would end the document."""
    for name, text in definition.cloud_files.items():
        if not name.isidentifier() or re.search(r"[\\`]", text) or FILE_END in text.splitlines():
            raise ValueError(f"{definition.name}: cloud file {name!r} cannot be written by a here-document")
    return [(name, text.rstrip("\n")) for name, text in definition.cloud_files.items()]


def render_install_script(definition: ServerDefinition) -> str:
    """The complete install script for ``definition``'s server on a cloud host."""
    environment = {"TSBENCH_TARGET": definition.name, **definition.install_environment()}
    environment[definition.version_variable] = definition.version  # the pin, never a local override
    return TEMPLATES.get_template("cloud_install.sh.j2").render(
        name=definition.name,
        environment=environment,
        settings=bash_words(definition.tuning),
        process=bash_words(definition.process),
        files=file_bodies(definition),
        file_end=FILE_END,
        library=LIBRARY.read_text().strip("\n") + "\n",
        steps=[
            (path.relative_to(TARGETS_DIR), _without_preamble(path.read_text()))
            for path in definition.cloud_scripts
        ],
    )


def write_install_script(definition: ServerDefinition, folder: Path) -> Path:
    """Render into ``folder/install_db.sh`` (what Terraform uploads; ``folder`` is created if
    missing); returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "install_db.sh"
    path.write_text(render_install_script(definition))
    return path
