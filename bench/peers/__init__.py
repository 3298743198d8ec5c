"""Earlier kcodec implementations kept as peers for benchmarks (not part of the package)."""
