"""The late rows and copies the disorder tests ask for (unit and integration alike)."""

DISORDER = {
    "late_fraction": 0.1,
    "lateness": "1m",
    "max_lateness": "10m",
    "duplicate_fraction": 0.05,
    "update_fraction": 0.05,
}
