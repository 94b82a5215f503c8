"""Verdicts: how tsbench decides that one figure beats another beyond noise (``noise``), and what a
published study's claims come to on a run (``claims``), under the conditions they declare."""
