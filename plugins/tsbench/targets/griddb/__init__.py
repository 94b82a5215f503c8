"""GridDB target (see README.md)."""
