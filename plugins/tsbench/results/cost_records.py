"""The price of a run's hosts (``result.json``'s ``price``): the hourly price of the declared machine,
written by ``collect``; the runtime's own module prices it (``tsbench.runtimes.select.machine_price``).
Prices are USD, hours are hours; no price is ever guessed: a machine the price table does not list
has ``priced`` false and ``no_price`` saying so. The hours a host lived: ``tsbench.results.cost``.
"""

from __future__ import annotations

from tsbench.results.record import Number, Record


class PriceLine(Record):
    """One billed item of a host: what it is (``item``, e.g. ``m5.2xlarge benchmark host``), how the
    table prices it (``unit``, e.g. ``$0.08 per GB-month × 1,024 GB``) and its USD per hour."""

    item: str = ""
    unit: str = ""
    usd_per_h: Number = 0.0


class MachinePrice(Record):
    """The on-demand price per hour of one host of a run (every item it is billed for), or why there
    is none (``no_price``, one line: ``no price (runtime local)``, ``no price for c7a.large in
    us-east-1 (table of 2024-06-01)``). ``table``: which price table and its date; ``not_counted``:
    what the price leaves out."""

    runtime: str = ""
    priced: bool = False
    usd_per_h: Number | None = None
    lines: list[PriceLine] = []
    table: str = ""
    table_date: str = ""
    not_counted: str = ""
    no_price: str = ""

    @classmethod
    def none(cls, runtime: str, reason: str) -> MachinePrice:
        """No price, and why (one line)."""
        return cls(runtime=runtime, priced=False, no_price=reason)

    def cost_usd(self, hours: float) -> float | None:
        """USD for ``hours`` of one host (None without a price)."""
        return self.usd_per_h * hours if self.priced and self.usd_per_h is not None else None
