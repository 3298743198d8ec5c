"""``python -m kcodec``: the ``kcodec`` command."""
import sys

from .cli import main

sys.exit(main())
