"""MongoDB's configuration, declared once for the three places its server runs (both MongoDB targets
run this server): ``mongod_options``, the options of ``mongod.conf`` as dotted paths. The local recipe
writes them as ``mongod.conf`` (``server.py``), the container passes what is no place of its own as
``--setParameter name=value`` (the image's entrypoint decides listener, directory and ``--auth``;
``container.py``) and the cloud host writes the file the AWS runtime rendered (``definition.py``'s
``cloud_files``, printed by ``mongodb_conf`` in ``cloud_install.sh``). A ``Form`` holds all that
differs: the data directory, the listener, the Unix socket and authorization.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsbench.targets.dotted import nest


@dataclass(frozen=True)
class Form:
    """What differs where the server runs: ``db_path``, ``listen`` (an address for ``net.bindIp``,
    ``*`` for all interfaces) and ``port`` (empty: mongod's defaults), ``socket`` (False: no Unix
    socket) and ``authorization`` (``security.authorization``; empty: mongod's default, off)."""

    db_path: str = ""
    listen: str = ""
    port: str = ""
    socket: bool = True
    authorization: str = ""


# The image's defaults (its entrypoint adds --auth); the cloud host: all interfaces at 27017, the
# database under the data volume ($DB_DIR) and authorization as its script decided ($authorization:
# enabled with a password, else disabled).
CONTAINER = Form()
CLOUD = Form("$DB_DIR", "*", "27017", authorization="$authorization")


def mongod_options(form: Form, tuning: Mapping[str, str]) -> dict[str, str]:
    """The options as YAML scalars, in order: ``form``'s, then ``tuning``. Paths are JSON strings
    (valid YAML scalars: they need no other quoting rule)."""
    options = {"storage.dbPath": json.dumps(form.db_path)} if form.db_path else {}
    if form.listen:
        options |= {"net.bindIpAll": "true"} if form.listen == "*" else {"net.bindIp": form.listen}
    options |= {"net.port": form.port} if form.port else {}
    options |= {} if form.socket else {"net.unixDomainSocket.enabled": "false"}
    options |= {"security.authorization": form.authorization} if form.authorization else {}
    return {**options, **tuning}


def yaml_lines(options: Mapping[str, str]) -> list[str]:
    """mongod options with dotted paths as nested YAML mappings (``net.port`` → ``net:`` /
    ``  port: …``), values written as they are (YAML scalars), in first-seen order."""
    return _mapping_lines(nest(options), "")


def _mapping_lines(tree: Mapping[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in tree.items():
        if isinstance(value, Mapping):
            lines += [f"{indent}{name}:", *_mapping_lines(value, indent + "  ")]
        else:
            lines.append(f"{indent}{name}: {value}")
    return lines


def conf_text(options: Mapping[str, str], writer: str) -> str:
    """``options`` as ``mongod.conf`` (``writer``: who wrote it, for its first line)."""
    header = (
        f"# written by tsbench ({writer}; targets/mongodb/config.py); mongod's defaults apply to all else"
    )
    return "\n".join([header, *yaml_lines(options)]) + "\n"


def set_parameters(options: Mapping[str, str]) -> tuple[str, ...]:
    """Options as mongod arguments: ``setParameter.<name>`` → ``--setParameter name=value`` (the
    image's entrypoint passes them to mongod); ValueError for any other option (no generic form)."""
    arguments: list[str] = []
    for key, value in options.items():
        section, _, name = key.partition(".")
        if section != "setParameter" or not name:
            raise ValueError(f"mongodb container: no command-line form for option {key!r}")
        arguments += ["--setParameter", f"{name}={value}"]
    return tuple(arguments)
