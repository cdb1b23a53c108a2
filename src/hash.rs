//! The hasher of regcheck's maps keyed by addresses (the registrations' index, the summary's
//! call sites): one multiplication, not SipHash. The keys are this process's own addresses
//! and small numbers, so resistance to chosen keys buys nothing, and these maps are read on
//! hot paths (every transfer; every warned call).

/// Hashes an address (or any integer key) with one multiplication per word.
#[derive(Debug, Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits: fold the well-mixed high bits down.
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_i32(&mut self, n: i32) {
        self.write_usize(n as u32 as usize);
    }
}
