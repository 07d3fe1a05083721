"""python -m afdlib.cli: the afd command."""
import sys

from afdlib.cli import main

sys.exit(main())
