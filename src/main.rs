//! The `toolgate` binary: parses the command line and hands over to [`toolgate::cli`].

use std::process::ExitCode;

// glibc's allocator serialized threads on its arena locks when one thread frees what another
// allocated (the reader's blocking threads and the runtime's workers); mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    toolgate::cli::main()
}
