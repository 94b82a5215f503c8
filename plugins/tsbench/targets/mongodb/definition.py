"""MongoDB's server definition: version, tuning table and install recipe for every runtime (both
MongoDB targets run this server; ``mongodb_naive/definition.py`` reuses it).

``tuning`` holds mongod configuration-file options as dotted paths (``setParameter.<name>`` for
server parameters), values as YAML scalars, and ends the one configuration (``config.py``): the local
recipe (``server.py``) writes it into its ``mongod.conf``, the container (``container.py``) passes it
as ``--setParameter name=value`` and the cloud host writes the file rendered here (``cloud_files``).
Everything else is mongod's default (WiredTiger, snappy, journal commit interval 100 ms, cache 50 % of
RAM − 1 GB).
"""

from __future__ import annotations

from tsbench.runtimes.definition import ServerDefinition, TuningValue, cloud_tuning
from tsbench.targets.mongodb.config import CLOUD, conf_text, mongod_options

TUNING: dict[str, TuningValue] = {
    # No diagnostic data capture (FTDC): it would add files under dbPath that are not data.
    "setParameter.diagnosticDataCollectionEnabled": "false",
}

DEFINITION = ServerDefinition(
    name="mongodb",
    # mongodb-org-server from repo.mongodb.org (local, cloud) and the image mongo:<version>.
    version="8.0.20",
    tuning=TUNING,
    cloud_files={
        "mongodb_conf": conf_text(mongod_options(CLOUD, cloud_tuning(TUNING)), "definition.py's cloud_files")
    },
)
