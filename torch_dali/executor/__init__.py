"""Plans, threads, streams, prefetching and counter-based randomness."""
