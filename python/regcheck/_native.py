"""The C API of the regcheck library already loaded in this process, through ``ctypes``.

Nothing here loads regcheck: a process that was not started under the layer (``regcheck run``,
``LD_PRELOAD``, or a program linked with ``-lregcheck``) has no regcheck, and :func:`library`
returns ``None``. The library is looked up in the global scope (``LD_PRELOAD`` and linked
libraries), then by its SONAME and by the packed path with ``RTLD_NOLOAD`` (found only when
already loaded, e.g. by an extension module linked with it).
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Optional

from . import _paths

SONAME = "libregcheck.so.0.1"

# regcheck_action
SEVERITIES = {0: "off", 1: "info", 2: "warning", 3: "error"}
STATUS_OK = 0


class LoggedFinding(ctypes.Structure):
    """``regcheck_logged_finding`` of ``regcheck.h`` (checked against the library's size)."""

    _fields_ = [
        ("seq", ctypes.c_uint64),
        ("code", ctypes.c_int64),
        ("tid", ctypes.c_uint64),
        ("rule_id", ctypes.c_uint32),
        ("severity", ctypes.c_int),
        ("rejected", ctypes.c_bool),
        ("rule_name", ctypes.c_char * 64),
        ("call", ctypes.c_char * 128),
        ("call_site", ctypes.c_char * 512),
        ("message", ctypes.c_char * 4096),
    ]


def _noload(name: str) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return None


def _find() -> Optional[ctypes.CDLL]:
    try:
        glob = ctypes.CDLL(None)
        glob.regcheck_version  # noqa: B018 (raises AttributeError without regcheck)
        return glob
    except (OSError, AttributeError):
        pass
    for name in (SONAME, _paths.under("lib", "libregcheck.so")):
        lib = _noload(name)
        if lib is not None:
            return lib
    return None


@functools.lru_cache(maxsize=None)
def library() -> Optional[ctypes.CDLL]:
    """The loaded regcheck library with its prototypes declared, or ``None``."""
    lib = _find()
    if lib is None:
        return None
    lib.regcheck_version.restype = ctypes.c_char_p
    lib.regcheck_version.argtypes = []
    lib.regcheck_last_rejection.restype = ctypes.c_size_t
    lib.regcheck_last_rejection.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    try:
        lib.regcheck_logged_finding_size.restype = ctypes.c_size_t
        lib.regcheck_logged_finding_size.argtypes = []
        lib.regcheck_findings_last_seq.restype = ctypes.c_uint64
        lib.regcheck_findings_last_seq.argtypes = []
        lib.regcheck_findings_dropped.restype = ctypes.c_uint64
        lib.regcheck_findings_dropped.argtypes = []
        lib.regcheck_finding_next.restype = ctypes.c_int
        lib.regcheck_finding_next.argtypes = [ctypes.c_uint64, ctypes.POINTER(LoggedFinding)]
    except AttributeError as e:
        raise RuntimeError(f"the regcheck library loaded in this process has no findings log (too old): {e}") from e
    # The annotation API (absent from libraries older than it: annotate_* then say so).
    for name, args in (
        ("regcheck_annotate_malloc_host", [ctypes.c_void_p, ctypes.c_uint64]),
        ("regcheck_annotate_device_malloc", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]),
        ("regcheck_annotate_free", [ctypes.c_void_p]),
    ):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_int
            fn.argtypes = args
    size = lib.regcheck_logged_finding_size()
    if size != ctypes.sizeof(LoggedFinding):
        raise RuntimeError(
            f"regcheck_logged_finding is {size} bytes in the loaded library, {ctypes.sizeof(LoggedFinding)} here: "
            "the Python module and the library are from different versions"
        )
    return lib
