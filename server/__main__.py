"""``python -m server``: the same as ``stud-server``."""

from server.cli import main

raise SystemExit(main())
