"""Decoders: ops that turn encoded samples (JPEG, PNG, ...) into tensors."""
