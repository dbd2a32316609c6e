"""The pieces of `make bench` (see ../bench.py): building, running, budgets, reports, plots."""
