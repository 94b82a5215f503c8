"""Where servers run: local processes (``local.py``); docker and remote come later."""
