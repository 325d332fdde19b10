"""The ``plboost`` program (and ``python -m plboost``): :func:`plboost.cli.main`, which shows the warnings a
command raises (e.g. a :class:`plboost._jit.CacheWarning` where Numba has no writable cache, raised when the
first kernel is used) as one line each, like its own messages."""

from __future__ import annotations

import sys


def run(argv=None) -> int:
    try:
        from .cli import main

        return main(argv)
    except KeyboardInterrupt:  # before the command started (while its modules load); main answers those after
        print("plboost: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(run())
