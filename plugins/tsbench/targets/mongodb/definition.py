"""MongoDB's server definition: version, tuning table and install recipe for every runtime (both
MongoDB targets run this server; ``mongodb_naive/definition.py`` reuses it).

``tuning`` holds mongod configuration-file options as dotted paths (``setParameter.<name>`` for
server parameters), values as YAML scalars. The local recipe (``server.py``) writes them into its
``mongod.conf``, the container (``container.py``) passes them as ``--setParameter name=value`` and the
cloud host's ``mongod.conf`` is written from the same table (``cloud_install.sh``). Everything else is
mongod's default (WiredTiger, snappy, journal commit interval 100 ms, cache 50 % of RAM − 1 GB).
"""

from __future__ import annotations

from tsbench.runtimes.definition import ServerDefinition

DEFINITION = ServerDefinition(
    name="mongodb",
    # mongodb-org-server from repo.mongodb.org (local, cloud) and the image mongo:<version>.
    version="8.0.20",
    tuning={
        # No diagnostic data capture (FTDC): it would add files under dbPath that are not data.
        "setParameter.diagnosticDataCollectionEnabled": "false",
    },
)
