"""The naive layout's server definition: MongoDB's (``targets/mongodb/definition.py``), the same pin,
tuning and recipes (``server="mongodb"``: its install.sh, cloud_install.sh and MONGODB_VERSION)."""

from __future__ import annotations

from dataclasses import replace

from tsbench.targets.mongodb.definition import DEFINITION as MONGODB

DEFINITION = replace(MONGODB, name="mongodb_naive", server="mongodb")
