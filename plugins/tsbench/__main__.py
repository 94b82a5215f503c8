"""Entry point of ``python -m tsbench`` (guarded: Airflow's plugin manager imports every module)."""

import sys

from tsbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
