"""``python -m callscope.benchmarks NAME [options]``: the benchmarks without the CLI around them."""

import sys

from callscope.benchmarks import main

if __name__ == "__main__":
    sys.exit(main())
