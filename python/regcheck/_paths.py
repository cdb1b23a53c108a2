"""Where the wheel's files were installed: the environment's ``bin/``, ``lib/`` and ``include/``.

The wheel installs its command as a script and its libraries and headers as data, so they land
in the environment's prefix (a virtual environment, ``~/.local`` with ``--user``, ...) with the
layout of ``cargo xtask install``. The installed-files record of the distribution says where,
whatever the installation scheme.
"""

from __future__ import annotations

import functools
import os
import sysconfig
from importlib import metadata
from typing import Optional

_MARKER = ("lib", "libregcheck.so")


@functools.lru_cache(maxsize=None)
def prefix() -> str:
    """The directory holding the installed ``bin/``, ``lib/`` and ``include/``."""
    try:
        dist = metadata.distribution("regcheck")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if tuple(f.parts[-2:]) == _MARKER:
                lib = os.path.dirname(os.path.abspath(str(dist.locate_file(f))))
                return os.path.dirname(lib)
    return sysconfig.get_path("data")


def under(*parts: str) -> str:
    """A path under :func:`prefix`."""
    return os.path.join(prefix(), *parts)


def command() -> Optional[str]:
    """The installed ``regcheck`` command, if it is there."""
    path = under("bin", "regcheck")
    return path if os.access(path, os.X_OK) else None
