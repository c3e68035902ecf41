"""`python -m opbench` runs the `opbench` command."""

import sys

from opbench.cli import main

sys.exit(main())
