"""The results explorer: a static page of the published site (``explorer.html`` beside
``index.html``, locally and on S3) to compare databases across runs: relative bars, trend charts
with the detected changes marked, and links to each run's report (``build``: its data from the
published runs; ``page``: the page and its data file)."""
