//! The `freeblock` command. All logic lives in the library's [`freeblock_cli::run`], which the
//! Python package also calls.

fn main() {
    std::process::exit(freeblock_cli::run(std::env::args_os()));
}
