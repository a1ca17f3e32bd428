//! The `toolgate` binary: parses the command line and hands over to [`toolgate::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    toolgate::cli::main()
}
