fn main() -> std::process::ExitCode {
    regcheck_cli::main()
}
