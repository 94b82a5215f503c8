# Shortcuts; the scripts are the source of truth (they also work where make is not installed).
.PHONY: main test lint bench servers

main:
	bash scripts/main.sh

test:
	bash scripts/test.sh

lint:
	.venv/bin/ruff check plugins dags tests bench && .venv/bin/ruff format --check plugins dags tests bench

bench:
	.venv/bin/python bench/generator.py

servers:
	bash scripts/install_all.sh
