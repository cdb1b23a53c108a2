//! Markdown tables of the docs that tests walk (`docs/conformance.md`).

/// The cells of one table line (`| a | b \| c |` gives `a`, `b | c`): split on `|`, not on the
/// escaped `\|`, each cell trimmed.
pub fn table_cells(line: &str) -> Vec<String> {
    let body = line.trim().trim_start_matches('|');
    let body = body.strip_suffix('|').unwrap_or(body);
    let mut out = vec![String::new()];
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_escaped_bars() {
        assert_eq!(table_cells("| A | b \\| c |  d  |"), ["A", "b | c", "d"]);
        assert_eq!(table_cells("| one |"), ["one"]);
    }
}
