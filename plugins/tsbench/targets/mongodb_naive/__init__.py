"""MongoDB target, naive layout: one document per event in a time-series collection (see README.md).

Shares the server, client, batch shaping and query pipelines with ``tsbench.targets.mongodb``.
"""
