"""Where DALI keeps helpers that user code and DALI's tests import (`nvidia.dali._utils`)."""
