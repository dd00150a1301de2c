"""Which argument values each op accepts or refuses: DALI 2.4 against torch_dali.

`python -m conformance.arg_sweep [--ops resize,cast] [--out DIR]` builds, for every op of
`conformance/dali_schemas.json` with a CPU backend and each of its arguments, a small pipeline
around one value of many kinds (numbers, strings, enums, lists, NumPy and torch values, None,
DataNodes; `values.py`) on inputs the op takes (`setups.py`), runs it once under each side in
child processes (`child.py`) and compares the outcomes: accepted (with the outputs' dtypes and
shapes), or refused at definition / build / run with which exception class (`compare.py`).
"""
