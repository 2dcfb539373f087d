"""The command line (click only): ``main.py`` is the ``skillc`` group, one module per command,
imported lazily (``main.COMMANDS``). ``skillc.cli:run`` is the console script, ``skillc.cli.cli``
the group the CLI reference is read from."""
from .main import cli, run

__all__ = ["cli", "run"]
