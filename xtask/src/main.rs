//! Project tasks: `cargo xtask <task>`.
fn main() {
    eprintln!("usage: cargo xtask <demo|install|test>");
    std::process::exit(2);
}
