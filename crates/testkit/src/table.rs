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

/// The simulator install root a conformance row runs against ([`crate::SIM_RELEASES`]): the
/// release its inputs cell names as `the <release> install root`, else the default (9.1.0).
pub fn row_release(inputs: &str) -> &'static str {
    crate::SIM_RELEASES
        .iter()
        .copied()
        .find(|r| inputs.contains(&format!("the {r} install root")))
        .unwrap_or(crate::SIM_RELEASES[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_name_their_install_root() {
        assert_eq!(row_release("the 9.2.0 install root: MallocMem"), "9.2.0");
        assert_eq!(row_release("the 9.1.0 install root (the default)"), "9.1.0");
        assert_eq!(row_release("MallocMem"), "9.1.0");
    }

    #[test]
    fn cells_keep_escaped_bars() {
        assert_eq!(table_cells("| A | b \\| c |  d  |"), ["A", "b | c", "d"]);
        assert_eq!(table_cells("| one |"), ["one"]);
    }
}
