"""A comparison's parameters beyond one RunSpec: the sweep axes, declared once (``axes``), and their
expansion into validated points within limits (``plan``). Below the run, the report and the
studies, which all read them."""
