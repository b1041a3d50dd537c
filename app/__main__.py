import sys

from callscope.cli import main

sys.exit(main())
