"""DALI's own tests run against torch_dali (through an import shim) with real DALI as the control.

See conformance/README.md; entry point: `python -m conformance`.
"""
