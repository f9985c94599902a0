"""Speed and memory benchmarks (``make bench``)."""
