"""Validation gates before publication: great_expectations 1.x suites on a run folder.

``validate_run(run_dir, history)`` runs five suites in an ephemeral GE context on pandas frames and
writes ``validation.json`` (plus GE's own results in ``validation/<suite>.json``). ``run_dir`` is a
single run (``result.json``) or a comparison (``comparison.json`` + ``scale-<N>/`` run folders,
validated scale by scale, with the combined verdict in the comparison folder):

- ``dataset`` (critical): row counts, (entity, time) uniqueness, nulls, time window, cpu ranges —
  exact, from DuckDB aggregates over every Parquet file (``tsbench.validation.dataset``);
- ``load`` (critical): every target finished, and holds exactly the dataset's rows;
- ``queries`` (critical): every requested query type ran (or is declared unsupported) without
  errors, and every answer agrees with the oracle (a live-only run has no such pass);
- ``live`` (critical): in the live phase, every query type ran (or is excluded from the live mix,
  or unsupported), every answer agrees with the oracle and was compared with it;
- ``history`` (warning): load rate and hot queries/s within ±30 % of the trailing median of
  earlier comparable runs, or "skipped (not enough history)".

A run is published as the latest report only when every critical expectation holds.
"""

from tsbench.validation.run import SUITES, validate_run

__all__ = ["SUITES", "validate_run"]
