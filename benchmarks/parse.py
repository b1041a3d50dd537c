"""Same as `callscope bench parse` (kept as a script for running outside the CLI)."""

from callscope.engine import bench_parse

if __name__ == "__main__":
    bench_parse.run()
