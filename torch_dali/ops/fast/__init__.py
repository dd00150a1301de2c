"""Fast kernels: native implementations of ops, each registered with the dispatch (`ops._dispatch`)
for the batches it supports (`image_kernels`, imported by `torch_dali.ops`), and the batched crop
windows (`windows`). The only part of `ops` that calls native code (a contract in pyproject.toml)."""
