"""The phases of one benchmark branch, in the order they run (the runner, the DAG's branch tasks and
the command line all take them from here). A module of its own so that a DAG file's parse — every
task process parses it — names them without importing the measuring code."""

PHASES = ("provision", "prepare", "load", "settle", "cache_reset", "queries", "teardown")
