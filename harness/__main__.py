"""`python -m harness`: see `python -m harness --help`."""

import sys

from harness.cli import main

sys.exit(main())
