//! One-line messages to standard error, built on the stack (no allocation, no locks).

use crate::sys::write;

const CAP: usize = 512;

/// A message line; text beyond its capacity is cut and marked with `...`.
pub struct Line {
    buf: [u8; CAP],
    len: usize,
    cut: bool,
}

impl Line {
    pub fn new() -> Line {
        let mut l = Line { buf: [0; CAP], len: 0, cut: false };
        l.push(b"regcheck-audit: ");
        l
    }

    pub fn push(&mut self, s: &[u8]) -> &mut Line {
        // Room is kept for "...\n".
        let room = CAP - 4 - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
        if n < s.len() {
            self.cut = true;
        }
        self
    }

    pub fn as_bytes(&mut self) -> &[u8] {
        if self.cut {
            self.buf[self.len..self.len + 3].copy_from_slice(b"...");
            self.len += 3;
            self.cut = false;
        }
        &self.buf[..self.len]
    }

    /// Writes the line and a newline to file descriptor 2.
    pub fn emit(&mut self) {
        if self.cut {
            self.as_bytes();
        }
        self.buf[self.len] = b'\n';
        let mut off = 0;
        let end = self.len + 1;
        while off < end {
            // SAFETY: the range lies inside `buf`.
            let n = unsafe { write(2, self.buf[off..].as_ptr().cast(), end - off) };
            if n <= 0 {
                break;
            }
            off += n as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_lines() {
        let mut l = Line::new();
        l.push(b"x=").push(b"1");
        assert_eq!(l.as_bytes(), b"regcheck-audit: x=1");
    }

    #[test]
    fn long_lines_are_cut_and_marked() {
        let mut l = Line::new();
        let long = [b'a'; 2000];
        l.push(&long).push(b"tail");
        let b = l.as_bytes();
        assert!(b.len() < CAP);
        assert!(b.ends_with(b"aaa..."));
    }
}
