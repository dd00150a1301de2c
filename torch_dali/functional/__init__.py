"""Pure-torch kernels: the specification every fast path is tested against."""
