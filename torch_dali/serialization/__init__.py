"""YAML encoding of pipelines."""
