"""regcheck for Python: where the wheel put the layer, and what the layer found in this process.

Paths (for build systems and launchers), valid wherever the wheel was installed:

* :func:`lib_dir`: ``libregcheck.so`` and ``libregcheck_audit.so``;
* :func:`include_dir`: ``regcheck.h``;
* :func:`sim_dir` and :func:`sim_include_dir`: the simulator of the vendor libraries
  (``libascendcl.so``, ``libacl_rt.so``, ``libcann_hixl.so``, ...) and its headers, to build
  and run Ascend code in CI without an NPU.

In a process running under the layer (``regcheck run python ...``):

* :func:`active`: whether the layer is loaded (this module never loads it);
* :func:`findings`: the findings so far, oldest first (the last 1024 are kept);
* :func:`last_seq`: a point in time, for ``findings(since=...)``;
* :func:`last_rejection`: the calling thread's last rejection message.

When the layer is loaded, importing this module also makes the foreign functions of the
``ctypes`` libraries loaded from then on note their Python caller when a call raises a finding
(:attr:`Finding.python_site`): the native call site of a ``ctypes`` call is a frame of libffi.
It costs two calls of ``regcheck_findings_last_seq`` per foreign call; set
``REGCHECK_PYTHON_SITES=0`` to turn it off.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from dataclasses import dataclass
from importlib import metadata as _metadata
from typing import Any, Dict, List, Optional, Tuple

from . import _native, _paths

__all__ = [
    "Finding",
    "active",
    "findings",
    "include_dir",
    "last_rejection",
    "last_seq",
    "lib_dir",
    "sim_dir",
    "sim_include_dir",
    "version",
]

try:
    __version__ = _metadata.version("regcheck")
except _metadata.PackageNotFoundError:  # not installed (a source checkout)
    __version__ = "0+unknown"


def lib_dir() -> str:
    """The directory of ``libregcheck.so`` and ``libregcheck_audit.so``."""
    return _paths.under("lib")


def include_dir() -> str:
    """The directory of ``regcheck.h`` (regcheck's C API)."""
    return _paths.under("include")


def sim_dir() -> str:
    """The simulator's library directory: ``libascendcl.so``, ``libacl_rt.so``, ``libcann_hixl.so``, ...

    Link against it (``-L``) and run with it (``LD_LIBRARY_PATH``, or ``ctypes.CDLL`` of a file in
    it). Its headers are in :func:`sim_include_dir`.
    """
    return _paths.under("lib", "regcheck", "sim")


def sim_include_dir() -> str:
    """The simulator's headers (``acl/acl.h``, ``hixl/hixl.h``, ...), to build against it (``-I``)."""
    return _paths.under("include", "regcheck", "sim")


def version() -> str:
    """The version of this package (Cargo.toml's version of regcheck)."""
    return __version__


def active() -> bool:
    """Whether the regcheck layer is loaded in this process.

    False when the process was not started under it: start it with ``regcheck run --audit
    python ...`` (the layer must be loaded before the interpreter starts). Raises
    ``RuntimeError`` when the loaded library is of another version whose findings log this
    module cannot read.
    """
    return _native.library() is not None


@dataclass(frozen=True)
class Finding:
    """One finding of the layer in this process."""

    #: The rule ID, e.g. ``"ACL-HOSTREG-ALIGN"``.
    rule: str
    #: ``"error"``, ``"warning"`` or ``"info"`` (the rule's action when it was found).
    severity: str
    #: The intercepted function, e.g. ``"aclrtHostRegisterV2"``.
    call: str
    #: The message, as logged: the call and its arguments, what is wrong, the fix, the outcome.
    message: str
    #: The native frame that made the call (``"main (app.c:12)"``, ``"0x7f.. (libffi.so.8+0x..)"``).
    call_site: str
    #: The Python caller (``"register (prog.py:31)"``) of a call made through ``ctypes``, when known.
    python_site: Optional[str] = None
    #: The finding's sequence number in the process (1, 2, ...).
    seq: int = 0
    #: Whether the layer rejected the call (the vendor was not called).
    rejected: bool = False
    #: The code returned (rejected) or that enforce mode would return; 0 when forwarded.
    code: int = 0
    #: The native thread ID of the caller.
    tid: int = 0

    @property
    def site(self) -> str:
        """The most useful call site: the Python caller when known, else the native frame."""
        return self.python_site or self.call_site

    def __str__(self) -> str:
        return f"{self.severity}: {self.message}\n    at {self.site}"


def last_seq() -> int:
    """The sequence number of the latest finding so far (0 without the layer or findings).

    The first call also makes every later finding keep its native call site (see ``findings``).
    """
    lib = _native.library()
    return int(lib.regcheck_findings_last_seq()) if lib is not None else 0


def last_rejection() -> Optional[str]:
    """The calling thread's last rejection message, or ``None`` (none, or no layer)."""
    lib = _native.library()
    if lib is None:
        return None
    n = lib.regcheck_last_rejection(None, 0)
    if n == 0:
        return None
    buf = ctypes.create_string_buffer(n + 1)
    lib.regcheck_last_rejection(buf, n + 1)
    return buf.value.decode("utf-8", "replace")


def _decode(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _read(since: int) -> List[Tuple[int, int, _native.LoggedFinding]]:
    lib = _native.library()
    out: List[Tuple[int, int, _native.LoggedFinding]] = []
    if lib is None:
        return out
    seq = since
    while True:
        f = _native.LoggedFinding()
        if lib.regcheck_finding_next(seq, ctypes.byref(f)) != _native.STATUS_OK:
            return out
        seq = int(f.seq)
        out.append((seq, int(f.tid), f))


def findings(since: int = 0) -> List[Finding]:
    """The findings whose sequence number is above ``since``, oldest first ([] without the layer).

    ``since=last_seq()`` taken earlier gives what came after that point. The layer keeps the
    last 1024 findings; older ones are gone. A finding's native ``call_site`` is kept when it
    was logged, or, for those it did not log (beyond ``REGCHECK_MAX_REPEATS``), once this
    process has asked for findings or ``last_seq()``: call ``last_seq()`` at start-up.
    """
    raw = _read(since)
    return [
        Finding(
            rule=_decode(f.rule_name),
            severity=_native.SEVERITIES.get(f.severity, str(f.severity)),
            call=_decode(f.call),
            message=_decode(f.message),
            call_site=_decode(f.call_site),
            python_site=_Sites.sites.get(seq),
            seq=seq,
            rejected=bool(f.rejected),
            code=int(f.code),
            tid=tid,
        )
        for seq, tid, f in raw
    ]


class _Sites:
    """The Python callers of ``ctypes`` foreign calls that raised findings.

    Each ``ctypes.CDLL`` (and ``PyDLL``, ``cdll.LoadLibrary``...) made after this module is
    imported gets function objects that note the finding sequence number before and after the
    foreign call; the findings raised in between on the calling thread get the Python caller.
    """

    lock = threading.Lock()
    sites: Dict[int, str] = {}
    KEEP = 4096
    skip_dirs = tuple(os.path.dirname(m.__file__ or "") + os.sep for m in (ctypes, sys.modules[__name__]))

    @staticmethod
    def python_site(frame: Any) -> str:
        while frame is not None and frame.f_code.co_filename.startswith(_Sites.skip_dirs):
            frame = frame.f_back
        if frame is None:
            return ""
        return f"{frame.f_code.co_name} ({frame.f_code.co_filename}:{frame.f_lineno})"

    @staticmethod
    def attribute(before: int, after: int, frame: Any) -> None:
        site = _Sites.python_site(frame)
        if not site:
            return
        me = threading.get_native_id()
        with _Sites.lock:
            for seq, tid, _f in _read(before):
                if seq > after:
                    break
                if tid == me:
                    _Sites.sites[seq] = site
            while len(_Sites.sites) > _Sites.KEEP:
                del _Sites.sites[next(iter(_Sites.sites))]

    @staticmethod
    def patch_ctypes(lib: ctypes.CDLL) -> None:
        last_seq = lib.regcheck_findings_last_seq
        original_init = ctypes.CDLL.__init__

        def __init__(self: ctypes.CDLL, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            base = self._FuncPtr

            class _FuncPtr(base):  # type: ignore[misc, valid-type]
                _flags_ = base._flags_
                _restype_ = base._restype_

                def __call__(self, *call_args: Any) -> Any:
                    before = last_seq()
                    result = base.__call__(self, *call_args)
                    after = last_seq()
                    if after != before:
                        _Sites.attribute(before, after, sys._getframe(1))
                    return result

            self._FuncPtr = _FuncPtr

        ctypes.CDLL.__init__ = __init__  # type: ignore[method-assign]


def _install_hook() -> None:
    if os.environ.get("REGCHECK_PYTHON_SITES", "1") == "0":
        return
    try:
        lib = _native.library()
    except RuntimeError:
        return
    if lib is not None:
        _Sites.patch_ctypes(lib)


_install_hook()
