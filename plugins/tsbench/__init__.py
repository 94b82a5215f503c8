"""tsbench: a reproducible benchmark pipeline for time-series databases.

The core library is plain Python (no Airflow imports outside ``tsbench.airflow``).
"""

__version__ = "0.1.0"
