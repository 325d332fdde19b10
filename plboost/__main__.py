"""The ``plboost`` program (and ``python -m plboost``): warnings raised while plboost is imported (e.g. a
:class:`plboost._jit.CacheWarning` where Numba has no writable cache) are shown as one line each, like the
command's own, before :func:`plboost.cli.main` runs."""

from __future__ import annotations

import sys
import warnings


def _one_line(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"plboost: warning: {message}", file=sys.stderr)


def run(argv=None) -> int:
    with warnings.catch_warnings():
        warnings.showwarning = _one_line
        from .cli import main
    return main(argv)


if __name__ == "__main__":
    sys.exit(run())
