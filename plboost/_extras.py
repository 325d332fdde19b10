"""Optional dependencies: imported when needed, or an error that says how to install them."""

from __future__ import annotations

import importlib


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says how to install it."""


def import_extra(module: str, purpose: str, install: str):
    """``module`` imported, or :class:`MissingExtra`: ``"<purpose> needs <package>: pip install <install>"``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(f"{purpose} needs {module.split('.')[0]}: pip install {install}") from error
