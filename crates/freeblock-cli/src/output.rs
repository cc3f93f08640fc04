//! How every command writes: to standard output, handing a write error (a closed pipe:
//! `freeblock … | head`) back to the caller with `?` instead of panicking as `print!` does.

/// `print!` that returns a write error instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*)?
    }};
}

/// `println!` that returns a write error instead of panicking (see [`out!`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)?
    }};
}

/// What every command returns: any error, printed by `main` with the exit code it calls for.
pub(crate) type CmdResult = Result<(), Box<dyn std::error::Error>>;

/// Prints `v` as one pretty JSON document.
pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> CmdResult {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Whether an error is a write to a closed pipe.
pub(crate) fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
