//! The `tlparse-build` binary: see [`tlparse_build::cli`].

fn main() -> std::process::ExitCode {
    tlparse_build::cli::main()
}
