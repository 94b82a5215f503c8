"""The naive layout runs on the same MongoDB container as ``tsbench.targets.mongodb``."""

from tsbench.targets.mongodb.container import CONTAINERS

__all__ = ["CONTAINERS"]
