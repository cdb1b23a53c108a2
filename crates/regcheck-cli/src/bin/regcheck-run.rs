//! `regcheck-run`: an alias of `regcheck run`, kept for scripts written before `regcheck`.

fn main() -> std::process::ExitCode {
    regcheck_cli::run::alias_main()
}
