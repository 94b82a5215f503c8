"""TimescaleDB's full edition (Apache-2 core + the Timescale License's tsl/) as its own target."""
