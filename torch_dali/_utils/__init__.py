"""DALI's `nvidia.dali._utils` helpers that code written for DALI reaches for (`hacks`, `external_source_impl`)."""
