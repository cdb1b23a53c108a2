//! The pieces of a JSON log line that the module writes itself, without allocation: string
//! escaping and the RFC 3339 time stamp. Pure functions, unit-tested against `serde_json`.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Feeds `s` to `put` as the content of a JSON string (without the quotes), one piece per
/// character, escaped as `serde_json` escapes it: `"` and `\` with a backslash, `\n`, `\r`,
/// `\t`, `\b`, `\f` by name, the other control characters as `\u00XX`, everything else as
/// is. Bytes that are not UTF-8 (a path may hold any byte) become U+FFFD, one per invalid
/// sequence, as `String::from_utf8_lossy` replaces them. Stops at the first piece `put`
/// refuses (no room) and returns false, so that a cut never splits an escape or a character.
pub fn escape(s: &[u8], mut put: impl FnMut(&[u8]) -> bool) -> bool {
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut tmp = [0u8; 6];
            let piece: &[u8] = match c {
                '"' => b"\\\"",
                '\\' => b"\\\\",
                '\n' => b"\\n",
                '\r' => b"\\r",
                '\t' => b"\\t",
                '\u{8}' => b"\\b",
                '\u{c}' => b"\\f",
                c if (c as u32) < 0x20 => {
                    let b = c as usize;
                    tmp = [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0xf]];
                    &tmp
                }
                c => c.encode_utf8(&mut tmp).as_bytes(),
            };
            if !put(piece) {
                return false;
            }
        }
        if !chunk.invalid().is_empty() && !put("\u{fffd}".as_bytes()) {
            return false;
        }
    }
    true
}

/// The days since 1970-01-01 as a proleptic Gregorian `(year, month, day)`.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Counted from 0000-03-01, in 400-year eras of 146097 days, so that the leap day is the
    // last day of a year.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `unix_ms` (milliseconds since the epoch) as the library's `time` field: RFC 3339, UTC,
/// milliseconds, `2026-11-30T21:48:30.875Z` (years after 9999 are written as 9999).
pub fn rfc3339_millis(unix_ms: u64) -> [u8; 24] {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days(secs / 86_400);
    let sod = secs % 86_400;
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: u32, v: u64| {
        for i in 0..width as usize {
            out[at + i] = b'0' + (v / 10u64.pow(width - 1 - i as u32) % 10) as u8;
        }
    };
    put(0, 4, year.min(9999));
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, sod / 3600);
    put(14, 2, sod / 60 % 60);
    put(17, 2, sod % 60);
    put(20, 3, unix_ms % 1000);
    out
}

/// `v` in decimal, in `buf`; returns the digits.
pub fn decimal(v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        assert!(escape(s, |p| {
            out.extend_from_slice(p);
            true
        }));
        out
    }

    /// `s` as a JSON string by `escape`, parsed back by serde_json.
    fn round_trip(s: &[u8]) -> String {
        let mut text = b"\"".to_vec();
        text.extend(escaped(s));
        text.push(b'"');
        serde_json::from_slice::<String>(&text).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&text)))
    }

    #[test]
    fn every_character_class_is_escaped_as_serde_json_escapes_it() {
        // Every ASCII byte alone, then a few multibyte characters and a whole mixed string.
        let mut cases: Vec<Vec<u8>> = (0u8..=0x7f).map(|b| vec![b]).collect();
        for s in ["é", "€", "😀", "\u{2028}\u{2029}", "\u{7f}\u{80}\u{9f}", "a\"b\\c\nd\te\u{1}f\u{1f}g/h"] {
            cases.push(s.as_bytes().to_vec());
        }
        for case in cases {
            let s = std::str::from_utf8(&case).unwrap();
            let want = serde_json::to_string(s).unwrap();
            let got = escaped(&case);
            assert_eq!(String::from_utf8(got).unwrap(), want[1..want.len() - 1], "{case:?}");
            assert_eq!(round_trip(&case), s);
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        let cases: [&[u8]; 7] = [
            b"/tmp/\xff/libregcheck.so",
            b"\x80",
            b"caf\xc3",                      // a character cut short at the end
            b"\xe2\x82x\xe2\x82",            // cut short in the middle, then at the end
            b"\xf0\x9f\x98\x80\xed\xa0\x80", // an emoji, then an encoded surrogate
            b"\xc0\xaf\"\\",                 // an overlong encoding, then characters to escape
            b"",
        ];
        for case in cases {
            let got = escaped(case);
            assert!(std::str::from_utf8(&got).is_ok(), "{case:?}");
            assert_eq!(round_trip(case), String::from_utf8_lossy(case), "{case:?}");
        }
    }

    #[test]
    fn a_refused_piece_stops_the_escape_between_characters() {
        let mut out = Vec::new();
        let done = escape("ab\"é".as_bytes(), |p| {
            if out.len() + p.len() > 3 {
                return false;
            }
            out.extend_from_slice(p);
            true
        });
        assert!(!done);
        assert_eq!(out, b"ab", "the escape of the quote does not fit whole");
    }

    #[test]
    fn time_stamps_match_rfc3339_utc_milliseconds() {
        assert_eq!(&rfc3339_millis(0), b"1970-01-01T00:00:00.000Z");
        assert_eq!(&rfc3339_millis(951_782_400_000), b"2000-02-29T00:00:00.000Z");
        assert_eq!(&rfc3339_millis(1_796_075_310_875), b"2026-11-30T21:48:30.875Z");
        assert_eq!(&rfc3339_millis(4_107_542_399_999), b"2100-02-28T23:59:59.999Z");
        assert_eq!(&rfc3339_millis(4_107_542_400_000), b"2100-03-01T00:00:00.000Z");
        assert_eq!(&rfc3339_millis(u64::MAX)[..5], b"9999-");
    }

    #[test]
    fn decimals() {
        let mut b = [0; 20];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(4_194_304, &mut b), b"4194304");
        assert_eq!(decimal(u64::MAX, &mut b), u64::MAX.to_string().as_bytes());
    }
}
