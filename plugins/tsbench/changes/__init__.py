"""Change points in a nightly history: where a figure moved beyond noise, by how much, with an
interval (``detect``)."""
