"""The regcheck simulator's ``llm_datadist``: the registration subset of CANN's Python package.

Names and signatures follow CANN's public Python API (LLM-DataDist API reference (Python),
``LLMDataDist``, ``LLMConfig``, ``CacheDesc``, ``CacheManager.register_cache``...), as far as a
program that registers KV caches uses them::

    from llm_datadist import LLMDataDist, LLMRole, LLMConfig, CacheDesc, DataType, Placement

    config = LLMConfig()
    config.device_id = 0
    config.enable_cache_manager = True
    datadist = LLMDataDist(LLMRole.PROMPT, cluster_id=0)
    datadist.init(config.generate_options())
    cache = datadist.cache_manager.register_cache(CacheDesc(2, [8, 16], DataType.DT_BF16), [k, v])
    datadist.cache_manager.unregister_cache(cache.cache_id)
    datadist.finalize()

It is NOT CANN's package. CANN's is a pybind11 module (``llm_datadist_wrapper``) over the
library's internal class ``llm::LLMDataDistV2``; this one calls the PUBLIC members of
``llm_datadist::LlmDataDist`` (``Initialize``, ``RegisterKvCache``, ``UnregisterKvCache``,
``Finalize``) through ``libllm_datadist_py.so``, with ``ctypes``, so that an interposer of those
members sees a Python program's registrations. See docs/llm-datadist.md, "Python".

What the simulator adds to CANN's behaviour: only the CacheManager mode
(``llm.EnableCacheManager`` = ``"1"``) is simulated; ``init`` answers anything else with
``LLM_FEATURE_NOT_ENABLED``. The options CANN's Python API generates are given to
``LlmDataDist::Initialize`` under the names the C++ API reads: ``ge.exec.deviceId`` as
``llm.DeviceId`` and ``llm.listenIpInfo`` as ``llm.ListenIpInfo`` (when the C++ name is absent).

The library is ``libllm_datadist_py.so`` two directories up from this file (the installed
layout, ``<prefix>/lib/regcheck/sim/python/llm_datadist``), else whatever the dynamic loader
finds by that name (``LD_LIBRARY_PATH``).
"""

from __future__ import annotations

import ctypes
import os
import threading
from enum import Enum, IntEnum
from typing import Dict, List, Optional, Sequence, Tuple, Union

# regcheck's Python module names the caller of a finding outside this module (a frame of a
# module that sets this is a wrapper's, not the user's).
__regcheck_wrapper__ = True

__all__ = [
    "Cache",
    "CacheDesc",
    "CacheManager",
    "DataType",
    "LLMConfig",
    "LLMDataDist",
    "LLMException",
    "LLMRole",
    "LLMStatusCode",
    "LlmConfig",
    "Placement",
]


class LLMStatusCode(IntEnum):
    """The library's status codes (``llm_datadist/llm_datadist.h``)."""

    LLM_SUCCESS = 0x0
    LLM_FAILED = 0xFFFFFFFF
    LLM_WAIT_PROCESS_TIMEOUT = 0x5010B001
    LLM_KV_CACHE_NOT_EXIST = 0x5010B002
    LLM_PARAM_INVALID = 0x5010B005
    LLM_NOT_YET_LINK = 0x5010B007
    LLM_ALREADY_LINK = 0x5010B008
    LLM_LINK_FAILED = 0x5010B009
    LLM_UNLINK_FAILED = 0x5010B00A
    LLM_NOTIFY_PROMPT_UNLINK_FAILED = 0x5010B00B
    LLM_CLUSTER_NUM_EXCEED_LIMIT = 0x5010B00C
    LLM_PROCESSING_LINK = 0x5010B00D
    LLM_DEVICE_OUT_OF_MEMORY = 0x5010B00E
    LLM_EXIST_LINK = 0x5010B018
    LLM_FEATURE_NOT_ENABLED = 0x5010B019
    LLM_TIMEOUT = 0x5010B01A
    LLM_LINK_BUSY = 0x5010B01B
    LLM_OUT_OF_MEMORY = 0x5010B01C
    LLM_UNKNOWN_ERROR = -1

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


class LLMException(RuntimeError):
    """A failed call; ``status_code`` is the library's code (an ``LLMStatusCode``)."""

    def __init__(self, *args: object, status_code: LLMStatusCode = LLMStatusCode.LLM_SUCCESS) -> None:
        super().__init__(*args)
        self._status_code = status_code

    @property
    def status_code(self) -> LLMStatusCode:
        return self._status_code


def _status(code: int) -> LLMStatusCode:
    try:
        return LLMStatusCode(code)
    except ValueError:
        return LLMStatusCode.LLM_FAILED


def _check(code: int, what: str) -> None:
    if code != 0:
        status = _status(code)
        raise LLMException(f"{what} failed, error code is {status} ({code:#x})", status_code=status)


def _require(ok: bool, message: str, status: LLMStatusCode = LLMStatusCode.LLM_PARAM_INVALID) -> None:
    if not ok:
        raise LLMException(message, status_code=status)


class LLMRole(IntEnum):
    PROMPT = 1
    DECODER = 2
    MIX = 3

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


class Placement(IntEnum):
    HOST = 0
    DEVICE = 1

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


class DataType(Enum):
    """``ge::DataType`` values (``graph/types.h``)."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_BF16 = 27


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class CacheDesc:
    """What a cache's tensors are: ``num_tensors`` tensors of ``shape`` and ``data_type``."""

    def __init__(
        self,
        num_tensors: int,
        shape: Union[Tuple[int, ...], List[int]],
        data_type: DataType,
        placement: Placement = Placement.DEVICE,
        batch_dim_index: int = 0,
        seq_len_dim_index: int = -1,
        kv_tensor_format: Optional[str] = None,
    ) -> None:
        if not (_is_int(num_tensors) and 0 <= num_tensors < 2**32):
            raise ValueError(f"num_tensors must be a uint32, got {num_tensors!r}")
        if not isinstance(shape, (list, tuple)) or not all(_is_int(d) for d in shape):
            raise TypeError(f"shape must be a list or tuple of int, got {shape!r}")
        if not isinstance(data_type, DataType):
            raise TypeError(f"data_type must be a DataType, got {data_type!r}")
        if not isinstance(placement, Placement):
            raise TypeError(f"placement must be a Placement, got {placement!r}")
        _require(0 <= batch_dim_index < len(shape), f"batch_dim_index {batch_dim_index} out of range, [0, {len(shape)})")
        _require(
            seq_len_dim_index == -1 or 0 <= seq_len_dim_index < len(shape),
            f"seq_len_dim_index {seq_len_dim_index} is invalid, should be -1 or in [0, {len(shape)})",
        )
        if not all(_INT64_MIN <= d <= _INT64_MAX for d in shape):
            raise ValueError(f"shape dimensions must be int64, got {shape!r}")
        self.num_tensors = num_tensors
        self.shape = list(shape)
        self.data_type = data_type
        self.placement = placement
        self.batch_dim_index = batch_dim_index
        self.seq_len_dim_index = seq_len_dim_index
        self.kv_tensor_format = kv_tensor_format

    def __repr__(self) -> str:
        return (
            f"CacheDesc(num_tensors={self.num_tensors}, shape={self.shape}, "
            f"data_type={self.data_type}, placement={self.placement})"
        )


class Cache:
    """A registered cache (made by ``CacheManager.register_cache``)."""

    def __init__(self, cache_id: int, cache_desc: CacheDesc, tensor_addrs: List[int]) -> None:
        self.cache_id = cache_id
        self.cache_desc = cache_desc
        self.tensor_addrs = tensor_addrs

    def __repr__(self) -> str:
        return f"Cache(cache_id={self.cache_id}, tensor_addrs={len(self.tensor_addrs)})"


class LLMConfig:
    """Builds ``init``'s options (the subset the simulator reads)."""

    def __init__(self) -> None:
        self.device_id: Optional[int] = None
        self.listen_ip_info = ""
        self.enable_cache_manager: Optional[bool] = None
        self.transfer_backend: Optional[str] = None
        self.local_comm_res: Optional[str] = None
        self.buf_pool_cfg = ""

    def generate_options(self) -> Dict[str, str]:
        options: Dict[str, str] = {}
        if self.device_id is not None:
            options["ge.exec.deviceId"] = str(self.device_id)
        if self.buf_pool_cfg:
            options["llm.BufPoolCfg"] = self.buf_pool_cfg
        if self.enable_cache_manager is not None:
            options["llm.EnableCacheManager"] = "1" if self.enable_cache_manager else "0"
        if self.listen_ip_info:
            options["llm.listenIpInfo"] = self.listen_ip_info
        if self.local_comm_res is not None:
            options["llm.LocalCommRes"] = self.local_comm_res
        if self.transfer_backend is not None:
            options["llm.TransferBackend"] = self.transfer_backend
        return options


LlmConfig = LLMConfig

_lib_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def _library() -> ctypes.CDLL:
    """``libllm_datadist_py.so``, loaded at first use (so that a ``regcheck`` imported before
    the first ``LLMDataDist`` sees its ``ctypes`` calls)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            here = os.path.dirname(os.path.abspath(__file__))
            installed = os.path.join(here, os.pardir, os.pardir, "libllm_datadist_py.so")
            lib = ctypes.CDLL(os.path.normpath(installed) if os.path.exists(installed) else "libllm_datadist_py.so")
            vp, u32, i64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64
            lib.lddpy_create.argtypes, lib.lddpy_create.restype = [ctypes.c_uint64, ctypes.c_int32], vp
            lib.lddpy_destroy.argtypes, lib.lddpy_destroy.restype = [vp], None
            lib.lddpy_initialize.argtypes = [vp, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
            lib.lddpy_initialize.restype = u32
            lib.lddpy_finalize.argtypes, lib.lddpy_finalize.restype = [vp], None
            lib.lddpy_register_kv_cache.argtypes = [
                vp, u32, u32, ctypes.c_int32, ctypes.POINTER(i64), ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.POINTER(i64),
            ]  # fmt: skip
            lib.lddpy_register_kv_cache.restype = u32
            lib.lddpy_unregister_kv_cache.argtypes, lib.lddpy_unregister_kv_cache.restype = [vp, i64], u32
            _lib = lib
        return _lib


class CacheManager:
    """The cache calls of an initialised ``LLMDataDist`` (``LLMDataDist.cache_manager``)."""

    def __init__(self, datadist: "LLMDataDist") -> None:
        self._datadist = datadist

    def _handle(self) -> int:
        _require(
            self._datadist._handle is not None,
            "CacheManager is no longer initialized; obtain a new instance after LLMDataDist.init.",
            LLMStatusCode.LLM_FAILED,
        )
        return self._datadist._handle  # type: ignore[return-value]

    def register_cache(
        self,
        cache_desc: CacheDesc,
        addrs: List[int],
        cache_keys: Sequence[object] = (),
        remote_accessible: Optional[bool] = None,
    ) -> Cache:
        """Registers memory the program allocated: ``addrs``, one per tensor of ``cache_desc``.

        CANN's Python checks first (an empty ``addrs``, a count other than ``num_tensors``, an
        address 0 raise ``LLMException`` LLM_PARAM_INVALID before the library is called), then
        ``LlmDataDist::RegisterKvCache``; its failure raises ``LLMException`` with its code.
        ``cache_keys`` and ``remote_accessible`` are accepted and not simulated.
        """
        handle = self._handle()
        if not isinstance(cache_desc, CacheDesc):
            raise TypeError(f"cache_desc must be a CacheDesc, got {cache_desc!r}")
        if not isinstance(addrs, list) or not all(_is_int(a) for a in addrs):
            raise TypeError(f"addrs must be a list of int, got {addrs!r}")
        _require(len(addrs) > 0, "addrs can not be empty.")
        _require(len(addrs) == cache_desc.num_tensors, "addrs length should be equal to num_tensors.")
        _require(all(a != 0 for a in addrs), "addr can not be zero.")
        shape = (ctypes.c_int64 * max(len(cache_desc.shape), 1))(*cache_desc.shape)
        c_addrs = (ctypes.c_uint64 * len(addrs))(*addrs)
        cache_id = ctypes.c_int64(-1)
        code = _library().lddpy_register_kv_cache(
            handle,
            int(cache_desc.placement),
            cache_desc.num_tensors,
            cache_desc.data_type.value,
            shape,
            len(cache_desc.shape),
            c_addrs,
            len(addrs),
            ctypes.byref(cache_id),
        )
        _check(code, f"[register_cache] cache_desc = {cache_desc}")
        return Cache(cache_id.value, cache_desc, list(addrs))

    def unregister_cache(self, cache_id: int) -> None:
        """``LlmDataDist::UnregisterKvCache(cache_id)`` (an unknown id is not an error)."""
        handle = self._handle()
        if not (_is_int(cache_id) and _INT64_MIN <= cache_id <= _INT64_MAX):
            raise TypeError(f"cache_id must be an int64, got {cache_id!r}")
        _check(_library().lddpy_unregister_kv_cache(handle, cache_id), f"[unregister_cache] cache_id = {cache_id}")


class LLMDataDist:
    """One ``llm_datadist::LlmDataDist`` (one per process, as CANN's package allows)."""

    _instance: Optional["LLMDataDist"] = None

    def __init__(self, role: LLMRole, cluster_id: int) -> None:
        if not isinstance(role, LLMRole):
            raise TypeError(f"role must be an LLMRole, got {role!r}")
        if not (_is_int(cluster_id) and 0 <= cluster_id < 2**64):
            raise ValueError(f"cluster_id must be a uint64, got {cluster_id!r}")
        self._role = role
        self._cluster_id = cluster_id
        self._handle: Optional[int] = None
        self._cache_manager: Optional[CacheManager] = None

    def init(self, options: Dict[str, str]) -> None:
        """``LlmDataDist::Initialize`` with ``options`` (see the module's notes on their names)."""
        if self._handle is not None:
            return
        _require(LLMDataDist._instance is None, "Cannot init multiple LLMDataDists", LLMStatusCode.LLM_FAILED)
        if not isinstance(options, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in options.items()):
            raise TypeError("options must be a dict of str to str")
        _require(
            options.get("llm.EnableCacheManager") == "1",
            "the simulator's llm_datadist has the CacheManager mode only: set llm.EnableCacheManager to 1",
            LLMStatusCode.LLM_FEATURE_NOT_ENABLED,
        )
        given = dict(options)
        for python_name, cxx_name in (("ge.exec.deviceId", "llm.DeviceId"), ("llm.listenIpInfo", "llm.ListenIpInfo")):
            if python_name in given and cxx_name not in given:
                given[cxx_name] = given[python_name]
        lib = _library()
        handle = lib.lddpy_create(self._cluster_id, int(self._role))
        _require(handle is not None, "cannot make an LlmDataDist", LLMStatusCode.LLM_FAILED)
        keys = (ctypes.c_char_p * max(len(given), 1))(*[k.encode() for k in given])
        values = (ctypes.c_char_p * max(len(given), 1))(*[v.encode() for v in given.values()])
        code = lib.lddpy_initialize(handle, keys, values, len(given))
        if code != 0:
            lib.lddpy_destroy(handle)
        _check(code, f"[LLMDataDist.init] Failed to initialize llm datadist, options = {options}")
        self._handle = handle
        self._cache_manager = CacheManager(self)
        LLMDataDist._instance = self

    @property
    def cache_manager(self) -> CacheManager:
        _require(self._handle is not None, "LLMDataDist is not initialized.", LLMStatusCode.LLM_FAILED)
        return self._cache_manager  # type: ignore[return-value]

    def finalize(self) -> None:
        """``LlmDataDist::Finalize``, then the instance is destroyed (its registrations released)."""
        if self._handle is None:
            return
        lib = _library()
        lib.lddpy_finalize(self._handle)
        lib.lddpy_destroy(self._handle)
        self._handle = None
        LLMDataDist._instance = None
