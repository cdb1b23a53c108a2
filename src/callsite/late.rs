//! Function and `file:line` of a frame in an object that the `backtrace` crate does not know:
//! the crate lists the loaded objects once, at its first symbolisation, and never again, so a
//! library `dlopen`ed after regcheck's first finding would get only a dynamic symbol's name.
//! Here such an object's own debug information (its `.debug_*` sections, uncompressed) is read
//! with `addr2line` (the crate's own reader), once per object and load address, kept for the
//! process's life (the file is mapped read-only, never copied). Called under the symbolisation
//! lock only (see [`super::symbols_locked`]); makes no loader call.

use std::ffi::CString;
use std::sync::Mutex;

use addr2line::gimli;
use object::{Object as _, ObjectSection as _};

type Slice = gimli::EndianSlice<'static, gimli::RunTimeEndian>;

/// An object read: its path, load base, and debug information (`None`: none usable).
type Read = (String, usize, Option<addr2line::Context<Slice>>);

/// The objects read so far.
static READ: Mutex<Vec<Read>> = Mutex::new(Vec::new());

/// What the debug information says of an address: the function, and the file and line.
pub struct Found {
    pub function: Option<String>,
    pub location: Option<(String, u32)>,
}

/// The innermost function at `address` (a return address minus one) of the object `path`
/// loaded at `base`, with its source file and line when the object has them.
pub fn locate(path: &str, base: usize, address: usize) -> Option<Found> {
    let mut read = READ.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let i = match read.iter().position(|(p, b, _)| p == path && *b == base) {
        Some(i) => i,
        None => {
            read.push((path.to_string(), base, context(path)));
            read.len() - 1
        }
    };
    let ctx = read[i].2.as_ref()?;
    let probe = address.wrapping_sub(base) as u64;
    let mut frames = ctx.find_frames(probe).skip_all_loads().ok()?;
    let frame = frames.next().ok()??;
    let function = frame
        .function
        .as_ref()
        .and_then(|f| f.raw_name().ok())
        .map(|n| format!("{:#}", backtrace::SymbolName::new(n.as_bytes())));
    let location = frame.location.and_then(|l| Some((l.file?.to_string(), l.line?)));
    Some(Found { function, location })
}

/// The debug information of the file at `path`, mapped read-only for good.
fn context(path: &str) -> Option<addr2line::Context<Slice>> {
    let data = map(path)?;
    let file = object::File::parse(data).ok()?;
    let endian = if file.is_little_endian() { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
    let section = |id: gimli::SectionId| -> Result<Slice, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            // A compressed section is not read (no decompressor): as if absent.
            .filter(|s| s.compressed_file_range().is_ok_and(|r| r.format == object::CompressionFormat::None))
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(gimli::EndianSlice::new(data, endian))
    };
    let dwarf = gimli::Dwarf::load(section).ok()?;
    addr2line::Context::from_dwarf(dwarf).ok()
}

/// The whole file at `path`, mapped read-only and never unmapped (file-backed pages: the
/// kernel reclaims them at will).
fn map(path: &str) -> Option<&'static [u8]> {
    let c = CString::new(path).ok()?;
    // SAFETY: plain system calls on a descriptor of our own; the mapping is read-only, private,
    // and lives as long as the process (so the slice is valid for 'static).
    unsafe {
        let fd = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut st: libc::stat = std::mem::zeroed();
        let len = if libc::fstat(fd, &mut st) == 0 { usize::try_from(st.st_size).unwrap_or(0) } else { 0 };
        let p = if len > 0 {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, fd, 0)
        } else {
            libc::MAP_FAILED
        };
        libc::close(fd);
        (p != libc::MAP_FAILED).then(|| std::slice::from_raw_parts(p as *const u8, len))
    }
}
