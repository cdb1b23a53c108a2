//! The generator's parts: a seeded random source, memory references into the driver's pools,
//! steps, and the trait an API family implements.

/// A step of a script: the driver's line, and how a person reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// `<op> <args...>`, as the driver (tests/c/differential) reads it.
    pub line: String,
    /// The call, readable: `aclrtHostRegisterV2(heap+3p, 4p, MAPPED)`.
    pub text: String,
    /// The call may crash (the simulated driver's exception): bare runs probe it in a forked
    /// child first.
    pub may_crash: bool,
    /// The call goes where `LD_PRELOAD` alone cannot see it (an ACL function through dlsym):
    /// such a run probes it too, and its crash is not regcheck's to stop.
    pub invisible: bool,
}

impl Step {
    /// A step from its driver line and its readable form.
    pub fn new(line: impl Into<String>, text: impl Into<String>) -> Step {
        Step { line: line.into(), text: text.into(), may_crash: false, invisible: false }
    }

    /// The step may crash.
    pub fn may_crash(mut self) -> Step {
        self.may_crash = true;
        self
    }

    /// The step is invisible to `LD_PRELOAD` alone when `dlsym` is true.
    pub fn invisible_if(mut self, dlsym: bool) -> Step {
        self.invisible = dlsym;
        self
    }

    /// The op (the line's first word).
    pub fn op(&self) -> &str {
        self.line.split_whitespace().next().unwrap_or("")
    }
}

/// An API family: it adds calls of its API to a script, one or a few at a time (a few: a
/// pattern, e.g. register, reset the device, unregister). One module per family; a new API
/// joins with one more module here and one more source file in the driver.
pub trait Family {
    /// The family's name (in reports).
    fn name(&self) -> &'static str;
    /// How often the generator picks this family, relative to the others.
    fn weight(&self) -> u64;
    /// Appends the next call or calls.
    fn step(&mut self, g: &mut Gen, out: &mut Vec<Step>);
}

/// xorshift64*: small, seeded, the same everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A source for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng((seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5DEE_CE66_D1CE_4E5B) | 1)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One of `choices`, by weight.
    pub fn pick<T: Copy>(&mut self, choices: &[(u64, T)]) -> T {
        let total: u64 = choices.iter().map(|c| c.0).sum();
        let mut at = self.below(total);
        for &(w, v) in choices {
            if at < w {
                return v;
            }
            at -= w;
        }
        choices[choices.len() - 1].1
    }
}

/// Pages in each of the driver's pools (`kPoolPages`).
pub const POOL_PAGES: u64 = 80;
/// Pages of each slot (`kSlotPages`).
pub const SLOT_PAGES: u64 = 4;
/// Slots (`kSlots`).
pub const SLOTS: u64 = 4;

/// The huge registration size: 1 TiB (past the documented host cap).
pub const HUGE: u64 = 1 << 40;

/// The driver's memory kinds (`enum Kind` in tests/c/differential/diff.h), by index.
pub mod kind {
    /// posix_memalign: pageable.
    pub const HEAP: u64 = 0;
    /// aclrtMallocHost through the PLT.
    pub const MALLOC_HOST: u64 = 1;
    /// aclrtMallocHost through dlopen + dlsym.
    pub const MALLOC_HOST_DLSYM: u64 = 2;
    /// mmap MAP_ANONYMOUS: pageable.
    pub const ANON: u64 = 3;
    /// The driver's stack.
    pub const STACK: u64 = 4;
    /// A MAP_SHARED mapping of a regular file.
    pub const FILE: u64 = 5;
    /// mmap PROT_READ.
    pub const READ_ONLY: u64 = 6;
    /// Unmapped (mapped, then munmap'd).
    pub const HOLE: u64 = 7;
    /// mmap + mlock.
    pub const LOCKED: u64 = 8;
    /// The kernel half.
    pub const KERNEL: u64 = 9;
    /// aclrtMalloc (device memory).
    pub const DEVICE: u64 = 10;
    /// The first aclrtMallocHost slot (`mh`/`fh` reallocate and free them).
    pub const SLOT0: u64 = 11;
    /// Names, by index.
    pub const NAMES: [&str; 15] = [
        "heap",
        "malloc_host",
        "malloc_host_dlsym",
        "anon",
        "stack",
        "file",
        "read_only",
        "hole",
        "mlocked",
        "kernel",
        "device",
        "slot0",
        "slot1",
        "slot2",
        "slot3",
    ];
}

/// An address: `offset` bytes past page `page` of pool `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    /// The pool ([`kind`]).
    pub kind: u64,
    /// The page in it.
    pub page: u64,
    /// Bytes past that page.
    pub off: u64,
}

impl Mem {
    /// `K P OFF`, for a driver line.
    pub fn args(&self) -> String {
        format!("{} {} {}", self.kind, self.page, self.off)
    }

    /// `heap+3p+64`.
    pub fn text(&self) -> String {
        let name = kind::NAMES.get(self.kind as usize).copied().unwrap_or("?");
        let mut s = format!("{name}+{}p", self.page);
        if self.off != 0 {
            s.push_str(&format!("+{}", self.off));
        }
        s
    }

    /// The same memory `bytes` further on.
    pub fn plus(&self, bytes: u64, page: u64) -> Mem {
        let off = self.off + bytes;
        Mem { kind: self.kind, page: self.page + off / page, off: off % page }
    }

    /// Pages in its pool.
    pub fn pool_pages(kind: u64) -> u64 {
        if kind >= kind::SLOT0 {
            SLOT_PAGES
        } else {
            POOL_PAGES
        }
    }
}

/// What families draw from: the random source and the host's page size.
#[derive(Debug)]
pub struct Gen {
    /// The seeded source.
    pub rng: Rng,
    /// The host's page size.
    pub page: u64,
}

impl Gen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Gen {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        Gen { rng: Rng::new(seed), page }
    }

    /// A pool: any kind, by the weights given (kinds not listed are never chosen).
    pub fn kind(&mut self, weights: &[(u64, u64)]) -> u64 {
        let k = self.rng.pick(weights);
        if k == kind::SLOT0 {
            kind::SLOT0 + self.rng.below(SLOTS)
        } else {
            k
        }
    }

    /// A page-aligned address in pool `kind` with room for `pages` (mostly).
    pub fn mem_in(&mut self, kind: u64, pages: u64) -> Mem {
        let n = Mem::pool_pages(kind);
        let pages = pages.min(n);
        Mem { kind, page: self.rng.below(n - pages + 1), off: 0 }
    }

    /// How a call is made: `(0, "")` through the PLT (3 in 4), `(1, "[dlsym]")` through dlsym.
    pub fn via(&mut self) -> (u64, &'static str) {
        if self.rng.chance(1, 4) {
            (1, "[dlsym]")
        } else {
            (0, "")
        }
    }

    /// An offset: 0 mostly, else misaligned.
    pub fn misalign(&mut self) -> u64 {
        let page = self.page;
        self.rng.pick(&[(14, 0), (1, 64), (1, 8), (1, page / 2)])
    }

    /// A number of pages: 1 to 8 mostly, sometimes more.
    pub fn pages(&mut self) -> u64 {
        if self.rng.chance(1, 10) {
            9 + self.rng.below(24)
        } else {
            1 + self.rng.below(8)
        }
    }

    /// A size for `pages` pages: whole pages mostly; else not whole pages, 0, or [`HUGE`].
    pub fn size(&mut self, pages: u64) -> u64 {
        let page = self.page;
        match self.rng.pick(&[(40, 0), (3, 1), (3, 2), (2, 3), (1, 4)]) {
            1 => pages * page - 64,
            2 => pages * page + 1,
            3 => 0,
            4 => HUGE,
            _ => pages * page,
        }
    }

    /// `4p`, or bytes when not whole pages.
    pub fn size_text(&self, size: u64) -> String {
        if size != 0 && size.is_multiple_of(self.page) {
            format!("{}p", size / self.page)
        } else {
            size.to_string()
        }
    }
}
