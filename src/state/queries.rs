//! Questions regcheck asks the vendor's ACL library about the environment: the SoC, the
//! calling thread's device and context, the driver version. Each goes straight to the
//! vendor (never through regcheck's own exports) and answers `None` when the vendor cannot
//! be found or does not know.

use std::ffi::{c_char, c_void, CStr};

use crate::codes::acl as code;
use crate::vendor::{Library, Symbol};

type GetDeviceFn = unsafe extern "C" fn(*mut i32) -> i32;
type GetCurrentContextFn = unsafe extern "C" fn(*mut *mut c_void) -> i32;
type GetSocNameFn = unsafe extern "C" fn() -> *const c_char;
type GetVersionStrFn = unsafe extern "C" fn(*mut c_char, *mut c_char) -> i32;

static GET_DEVICE: Symbol = Symbol::probe(Library::Acl, c"aclrtGetDevice");
static GET_CURRENT_CONTEXT: Symbol = Symbol::probe(Library::Acl, c"aclrtGetCurrentContext");
static GET_SOC_NAME: Symbol = Symbol::probe(Library::Acl, c"aclrtGetSocName");
static GET_VERSION_STR: Symbol = Symbol::probe(Library::Acl, c"aclsysGetVersionStr");

/// The size of `aclsysGetVersionStr`'s output buffer (the vendor's documented 128 bytes).
const VERSION_STR_LEN: usize = 128;

/// The vendor's `aclrtGetSocName()`, when it answers.
pub fn soc_name() -> Option<String> {
    // SAFETY: prototype from the vendor's documented interface; the result is a NUL-terminated static string.
    let f = unsafe { GET_SOC_NAME.get_fn::<GetSocNameFn>() }?;
    // SAFETY: no arguments; the vendor returns a static string or NULL.
    let p = unsafe { f() };
    if p.is_null() {
        return None;
    }
    // SAFETY: not NULL, and NUL-terminated by the vendor's contract.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// The calling thread's current device (`aclrtGetDevice`), `None` when it has none.
pub fn device() -> Option<i32> {
    // SAFETY: prototype from the vendor's documented interface.
    let f = unsafe { GET_DEVICE.get_fn::<GetDeviceFn>() }?;
    let mut dev = -1;
    // SAFETY: dev is a valid out-pointer.
    (unsafe { f(&mut dev) } == code::SUCCESS).then_some(dev)
}

/// The calling thread's current context (`aclrtGetCurrentContext`): `Some(None)` when the
/// vendor says there is none, `None` when the vendor cannot be asked.
pub fn current_context() -> Option<Option<usize>> {
    // SAFETY: prototype from the vendor's documented interface.
    let f = unsafe { GET_CURRENT_CONTEXT.get_fn::<GetCurrentContextFn>() }?;
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: ctx is a valid out-pointer.
    let rc = unsafe { f(&mut ctx) };
    Some((rc == code::SUCCESS && !ctx.is_null()).then_some(ctx as usize))
}

/// Why the vendor gave no driver version.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DriverVersionQueryError {
    #[error("aclsysGetVersionStr not found")]
    NotFound,
    #[error("aclsysGetVersionStr returned {0}")]
    Failed(i32),
    #[error("aclsysGetVersionStr gave an empty version")]
    Empty,
}

/// The driver (HDK) version the vendor reports (`aclsysGetVersionStr("driver", buf)`), or
/// why there is none.
pub fn driver_version() -> Result<String, DriverVersionQueryError> {
    package_version(*b"driver\0")
}

/// The CANN runtime package's version the vendor reports (`aclsysGetVersionStr("runtime",
/// buf)`, read from `$ASCEND_HOME_PATH/share/info/runtime/version.info`), or why there is none.
pub fn runtime_version() -> Result<String, DriverVersionQueryError> {
    package_version(*b"runtime\0")
}

fn package_version<const N: usize>(mut name: [u8; N]) -> Result<String, DriverVersionQueryError> {
    // SAFETY: prototype from the vendor's documented interface.
    let f = unsafe { GET_VERSION_STR.get_fn::<GetVersionStrFn>() }.ok_or(DriverVersionQueryError::NotFound)?;
    let mut buf = [0u8; VERSION_STR_LEN + 1];
    // SAFETY: `name` is NUL-terminated; `buf` holds the documented 128 bytes plus a NUL the
    // vendor never writes, so the text is terminated whatever it writes.
    let rc = unsafe { f(name.as_mut_ptr().cast(), buf.as_mut_ptr().cast()) };
    if rc != code::SUCCESS {
        return Err(DriverVersionQueryError::Failed(rc));
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(VERSION_STR_LEN);
    let text = String::from_utf8_lossy(&buf[..n]).trim().to_string();
    if text.is_empty() {
        Err(DriverVersionQueryError::Empty)
    } else {
        Ok(text)
    }
}

/// `halSupportFeature(devId, type)` (the driver's `ascend_hal_base.h`; `drvFeature_t` is an int).
type SupportFeatureFn = unsafe extern "C" fn(u32, i32) -> bool;

/// The driver's feature number of `FEATURE_SVM_MEM_REGISTER_HOST_PINNED`
/// (`ascend_hal_define.h`, hicann/runtime master): `halHostRegister` pins, and
/// `aclrtHostRegisterV2` takes the driver's pin/unpin path.
pub const FEATURE_SVM_MEM_REGISTER_HOST_PINNED: i32 = 13;

/// What the driver said about its pinned-register feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinFeature {
    /// `halSupportFeature(device, FEATURE_SVM_MEM_REGISTER_HOST_PINNED)` answered.
    Asked { device: u32, on: bool },
    /// The driver has no `halSupportFeature`: the runtime then takes the feature as off
    /// (`NpuDriver::CheckIsSupportFeature`, its weak reference is null).
    NoQuery,
}

impl PinFeature {
    pub fn on(self) -> bool {
        matches!(self, PinFeature::Asked { on: true, .. })
    }

    /// Where the answer came from, for messages and `regcheck doctor`.
    pub fn describe(self) -> String {
        match self {
            PinFeature::Asked { device, on } => {
                format!("halSupportFeature({device}, FEATURE_SVM_MEM_REGISTER_HOST_PINNED) answered {on}")
            }
            PinFeature::NoQuery => {
                "the driver has no halSupportFeature (the runtime takes the feature as off)".to_string()
            }
        }
    }
}

/// The driver's pinned-register feature for `device`, asked as the vendor's runtime asks it
/// (`RawDevice::InitRawDriver`: `halSupportFeature(devId, FEATURE_SVM_MEM_REGISTER_HOST_PINNED)`
/// through the weak reference of the runtime, which links the driver's library). The function
/// is looked for by identity in the vendor's ACL library regcheck resolved and its dependencies
/// (never by file name): a driver without it answers "off", as it does for the runtime. `None`
/// when the vendor's ACL library cannot be found (nothing is known). Calls the loader and the
/// driver: never under a regcheck lock.
pub fn pin_register_feature(device: u32) -> Option<PinFeature> {
    let root = GET_DEVICE.get()?;
    let Some(addr) = crate::vendor::function_beside(root, b"halSupportFeature") else {
        return Some(PinFeature::NoQuery);
    };
    // SAFETY: the driver's function of this prototype (ascend_hal_base.h): two integers in, a
    // C `bool` out.
    let f = unsafe { std::mem::transmute::<usize, SupportFeatureFn>(addr) };
    // SAFETY: integer arguments only.
    let on = unsafe { f(device, FEATURE_SVM_MEM_REGISTER_HOST_PINNED) };
    Some(PinFeature::Asked { device, on })
}
