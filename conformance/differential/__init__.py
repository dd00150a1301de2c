"""A differential fuzzer: seeded random cases of torch_dali's ops run beside DALI 2.4's CPU backend.

Each case is JSON (op, inputs drawn from a seed, arguments); `worker.py` runs it under one side in
a child process, `compare.py` tells agreement apart from differences, `__main__.py` drives it all.
See conformance/README.md ("Differential fuzzing") and docs/differential.md.
"""
