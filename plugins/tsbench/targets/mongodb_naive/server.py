"""The local server of the naive layout: the same mongod recipe as ``tsbench.targets.mongodb``."""

from tsbench.targets.mongodb.server import MongoServer

__all__ = ["MongoServer"]
