//! The top of user space: the first address above every address a process can map.
//!
//! Linux gives user space the low half of the virtual address space, or less:
//! * x86_64: `2^47 - page` with 4-level paging, `2^56 - page` with 5-level paging (the
//!   kernel booted with LA57; it then lists `la57` among the CPU flags of `/proc/cpuinfo`);
//! * aarch64: `2^48` (`2^52` with 52-bit virtual addresses; also read from the process's
//!   own mappings: one above `2^48` means 52 bits);
//! * anything else: the lower half, `2^63`.
//!
//! [`user_space_top_for`] is the pure rule; [`user_space_top`] asks the running system once.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicU64, Ordering};

/// The kernel half of a 64-bit address space starts here (top bit set).
pub const KERNEL_HALF: u64 = 1 << 63;

/// The top of user space for an architecture, its virtual-address width and page size.
/// `va_bits` is the width the kernel uses (48 or 57 on x86_64, 48 or 52 on aarch64).
pub fn user_space_top_for(arch: &str, va_bits: u32, page_size: usize) -> u64 {
    match arch {
        // The canonical lower half, minus the guard page below it (TASK_SIZE_MAX).
        "x86_64" if (32..64).contains(&va_bits) => (1u64 << (va_bits - 1)) - page_size as u64,
        "aarch64" if (32..64).contains(&va_bits) => 1u64 << va_bits,
        _ => KERNEL_HALF,
    }
}

/// Whether the `flags` line of a `/proc/cpuinfo` text lists `la57` (5-level paging on).
/// Only the first `flags` line is read: every CPU has the same paging mode.
pub fn cpuinfo_has_la57<R: BufRead>(text: R) -> bool {
    for line in text.lines() {
        let Ok(line) = line else { return false };
        if let Some((key, value)) = line.split_once(':') {
            if key.trim() == "flags" {
                return value.split_whitespace().any(|f| f == "la57");
            }
        }
    }
    false
}

/// The end of the highest mapping in a `/proc/self/maps` text (0 when none parses).
pub fn highest_mapping_end(maps: &str) -> u64 {
    maps.lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once('-'))
        .filter_map(|(_, end)| u64::from_str_radix(end, 16).ok())
        // The x86_64 vsyscall page sits in the kernel half; it says nothing about user space.
        .filter(|end| *end <= KERNEL_HALF)
        .max()
        .unwrap_or(0)
}

/// The virtual-address width the running kernel gives this process.
fn va_bits() -> u32 {
    match std::env::consts::ARCH {
        "x86_64" => {
            let la57 = std::fs::File::open("/proc/cpuinfo").is_ok_and(|f| cpuinfo_has_la57(BufReader::new(f)));
            if la57 {
                57
            } else {
                48
            }
        }
        "aarch64" => {
            let high = std::fs::read_to_string("/proc/self/maps").map_or(0, |m| highest_mapping_end(&m));
            if high > 1 << 48 {
                52
            } else {
                48
            }
        }
        _ => 64,
    }
}

/// The top of user space of this process, asked once (a read of `/proc/cpuinfo`'s first CPU
/// on x86_64, of `/proc/self/maps` on aarch64).
///
/// Cached in an atomic, not a `OnceLock`: threads that race to ask all compute the same
/// answer and none waits for another, so a child forked while another thread was asking
/// does not wait forever for a thread it does not have.
pub fn user_space_top() -> u64 {
    static TOP: AtomicU64 = AtomicU64::new(0);
    match TOP.load(Ordering::Relaxed) {
        0 => {
            let top = user_space_top_for(std::env::consts::ARCH, va_bits(), super::page_size());
            TOP.store(top, Ordering::Relaxed);
            top
        }
        top => top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tops_by_architecture() {
        assert_eq!(user_space_top_for("x86_64", 48, 4096), 0x7fff_ffff_f000);
        assert_eq!(user_space_top_for("x86_64", 57, 4096), 0x00ff_ffff_ffff_f000);
        assert_eq!(user_space_top_for("aarch64", 48, 65536), 1 << 48);
        assert_eq!(user_space_top_for("aarch64", 52, 4096), 1 << 52);
        assert_eq!(user_space_top_for("riscv64", 48, 4096), KERNEL_HALF);
        assert_eq!(user_space_top_for("x86_64", 0, 4096), KERNEL_HALF, "nonsense widths fall back");
    }

    #[test]
    fn la57_flag() {
        let four = "processor\t: 0\nflags\t\t: fpu vme pse la57x\naddress sizes\t: 46 bits physical\n";
        assert!(!cpuinfo_has_la57(four.as_bytes()));
        let five = "processor\t: 0\nflags\t\t: fpu la57 vme\n\nprocessor\t: 1\nflags\t\t: fpu\n";
        assert!(cpuinfo_has_la57(five.as_bytes()));
        assert!(!cpuinfo_has_la57("".as_bytes()));
        // aarch64 has "Features", not "flags".
        assert!(!cpuinfo_has_la57("Features\t: fp asimd la57\n".as_bytes()));
    }

    #[test]
    fn highest_mapping_skips_the_vsyscall_page() {
        let maps = "55d0c0000000-55d0c0021000 r--p 00000000 fe:00 1 /bin/x\n\
                    7ffc73875000-7ffc73896000 rw-p 00000000 00:00 0 [stack]\n\
                    ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
        assert_eq!(highest_mapping_end(maps), 0x7ffc_7389_6000);
        assert_eq!(highest_mapping_end("garbage\n\n"), 0);
    }

    #[test]
    fn this_machine_maps_below_its_top() {
        let top = user_space_top();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(highest_mapping_end(&maps) <= top, "top 0x{top:x}");
        assert!(top <= KERNEL_HALF);
        let stack_var = 0u8;
        assert!((&stack_var as *const u8 as u64) < top);
    }
}
