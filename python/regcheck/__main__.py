"""``python -m regcheck ARGS...``: the ``regcheck`` command this package installed, with ARGS.

The process becomes the command (``exec``): same options, output and exit status as running
``regcheck`` from ``PATH``.
"""

from __future__ import annotations

import os
import sys

from . import _paths


def main() -> int:
    """Replace this process with the packed ``regcheck`` command (returns only on error)."""
    path = _paths.command()
    if path is None:
        print(f"regcheck: the command is not installed at {_paths.under('bin', 'regcheck')}", file=sys.stderr)
        return 127
    try:
        os.execv(path, ["regcheck", *sys.argv[1:]])
    except OSError as e:
        print(f"regcheck: cannot run {path}: {e}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
