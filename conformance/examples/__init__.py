"""DALI's documentation notebooks under DALI 2.4 and torch_dali: `python -m conformance.examples` (see __main__)."""
