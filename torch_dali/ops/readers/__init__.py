"""Readers: ops that list a dataset and hand out batches of encoded samples with labels."""
