"""Entry point of ``python -m tsbench``."""

import sys

from tsbench.cli import main

sys.exit(main())
