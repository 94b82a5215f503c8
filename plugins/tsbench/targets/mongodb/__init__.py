"""MongoDB target, recommended layout: one document per host per hour (see README.md).

Also home of what both MongoDB targets share (``mongodb_naive`` imports it): the server recipe,
container spec, cloud install script, client, batch shaping and the query pipelines.
"""
