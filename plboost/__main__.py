"""The ``plboost`` program (and ``python -m plboost``): :func:`plboost.cli.main`, which shows the warnings a
command raises (e.g. a :class:`plboost._jit.CacheWarning` where Numba has no writable cache, raised when the
first kernel is used) as one line each, like its own messages."""

from __future__ import annotations

import sys


def run(argv=None) -> int:
    from .cli import main

    return main(argv)


if __name__ == "__main__":
    sys.exit(run())
