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
* :func:`last_rejection`: the calling thread's last rejection message;
* :func:`annotate_malloc_host`, :func:`annotate_device_malloc`, :func:`annotate_free`: tell the
  layer what memory it could not see allocated (a pool carved from one ``aclrtMallocHost``
  block, memory a library allocated past the layer), so that its rules judge it as that
  allocation; without the layer they do nothing and return ``False``.

When the layer is loaded, importing this module also makes the foreign functions of the
``ctypes`` libraries loaded from then on note their Python caller when a call raises a finding
(:attr:`Finding.python_site`): the native call site of a ``ctypes`` call is a frame of libffi.
The Python caller is the first frame outside ``ctypes``, this module and wrapper modules (a
module that sets ``__regcheck_wrapper__ = True`` in its globals, e.g. a package whose functions
make the ``ctypes`` calls for the user): a finding names the user's line, not the wrapper's.
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
    "annotate_device_malloc",
    "annotate_free",
    "annotate_malloc_host",
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
    #: The message, as logged (without the frames): its first line (the rule, the call, what is wrong,
    #: what regcheck did), then indented lines (why, the fix, the evidence, where to read more).
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


def _address(ptr: Any) -> int:
    """An address from an ``int``, a ``ctypes`` pointer or ``c_void_p``, or a ctypes buffer."""
    if isinstance(ptr, int):
        return ptr
    if isinstance(ptr, ctypes.c_void_p):
        return int(ptr.value or 0)
    if isinstance(ptr, ctypes._Pointer):  # type: ignore[attr-defined]
        return int(ctypes.cast(ptr, ctypes.c_void_p).value or 0)
    return int(ctypes.addressof(ptr))


def _annotate(name: str, *args: Any) -> bool:
    lib = _native.library()
    if lib is None:
        return False
    fn = getattr(lib, name, None)
    if fn is None:
        raise RuntimeError(f"the regcheck library loaded in this process has no {name} (too old)")
    status = int(fn(*args))
    if status == _native.STATUS_OK:
        return True
    if status == 3 and name == "regcheck_annotate_free":  # REGCHECK_STATUS_NOT_FOUND
        return False
    raise ValueError(f"{name}{args}: regcheck_status {status} (a NULL pointer, a size of 0, or a range past the address space)")


def annotate_malloc_host(ptr: Any, size: int) -> bool:
    """Tell the layer that ``[ptr, ptr + size)`` is page-locked host memory from ``aclrtMallocHost``.

    For memory the layer did not see allocated: a piece of one ``aclrtMallocHost`` block that a
    pool hands out, a block a library allocated past the layer. From then on its rules judge the
    range as ``aclrtMallocHost`` memory (page-locked on an old kernel, no ``ACL_HOST_REG_PINNED``,
    the host origin HIXL wants). ``ptr``: an ``int`` address, a ``ctypes`` pointer or a ``ctypes``
    buffer. ``True`` when recorded, ``False`` without the layer; ``ValueError`` for a NULL
    pointer or a size of 0.
    """
    return _annotate("regcheck_annotate_malloc_host", _address(ptr), int(size))


def annotate_device_malloc(ptr: Any, size: int, policy: int) -> bool:
    """Tell the layer that ``[ptr, ptr + size)`` is device memory from ``aclrtMalloc(..., policy)``.

    ``policy`` is the ``aclrtMemMallocPolicy`` (e.g. 2, ``ACL_MEM_MALLOC_HUGE_ONLY``). As
    :func:`annotate_malloc_host` otherwise.
    """
    return _annotate("regcheck_annotate_device_malloc", _address(ptr), int(size), int(policy))


def annotate_free(ptr: Any) -> bool:
    """Retract what the layer knows of the allocation starting at ``ptr`` (the pool took it back).

    ``True`` when it knew one, ``False`` when not (or without the layer).
    """
    return _annotate("regcheck_annotate_free", _address(ptr))


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
    def is_wrapper(frame: Any) -> bool:
        """A frame of ctypes, of this module, or of a wrapper module (one whose globals set
        ``__regcheck_wrapper__ = True``, as the simulator's ``llm_datadist`` does): the
        finding names the first frame past them, the user's line."""
        return frame.f_code.co_filename.startswith(_Sites.skip_dirs) or frame.f_globals.get("__regcheck_wrapper__") is True

    @staticmethod
    def python_site(frame: Any) -> str:
        while frame is not None and _Sites.is_wrapper(frame):
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
