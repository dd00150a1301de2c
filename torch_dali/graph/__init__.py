"""Tracing, graphs and the Pipeline."""
