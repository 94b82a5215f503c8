"""Results: the typed result model, per-run result JSON, atomic writes, the run store, publication."""
