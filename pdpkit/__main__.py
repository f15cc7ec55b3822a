"""``python -m pdpkit``: the command line (:mod:`pdpkit.cli`)."""

from .cli import main

raise SystemExit(main())
