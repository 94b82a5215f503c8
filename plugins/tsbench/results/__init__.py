"""Results: Sample records, per-run result JSON, atomic writes, the run store."""
