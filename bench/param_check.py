"""Cost of Airflow's check of one trigger-form Param (``Param.resolve``: ``jsonschema.validate``,
which also checks the schema against its draft's metaschema), per JSON Schema draft.

    .venv/bin/python bench/param_check.py [--rounds 200]

Printed: µs per ``resolve`` of every field of the comparison's form with the schemas as the form
declares them (``tsbench.airflow.params``) and with the draft key removed (jsonschema's default,
draft 2020-12), and their ratio. A 2-target ``dag.test()`` of the comparison DAG resolved ~9,600
Params (cProfile's call count of ``Param.resolve``), mostly while serializing the DAGs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from airflow.sdk import Param

from tsbench.airflow.params import comparison_params


def per_resolve_us(params: dict[str, Param], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        for param in params.values():
            param.resolve(suppress_exception=True)
    return (time.perf_counter() - started) / (rounds * len(params)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    declared = comparison_params()
    default_draft = {
        name: Param(param.value, **{k: v for k, v in param.schema.items() if k != "$schema"})
        for name, param in declared.items()
    }
    ours = per_resolve_us(declared, args.rounds)
    theirs = per_resolve_us(default_draft, args.rounds)
    print(f"{len(declared)} fields, {args.rounds} rounds")
    print(f"  as declared ({declared['scales'].schema['$schema']}): {ours:7.0f} µs per resolve")
    print(f"  default draft (2020-12):                            {theirs:7.0f} µs per resolve")
    print(f"  ratio declared / default: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
