"""Target databases: one folder per database behind one contract (see ``base.py``)."""
