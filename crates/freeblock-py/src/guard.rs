//! The panic guard: a Rust panic inside a call from Python becomes a `FreeblockError`, never a
//! `pyo3_runtime.PanicException`.
//!
//! PyO3 already stops a panic at the boundary, but raises `PanicException`, which derives from
//! `BaseException`: `except Exception` does not catch it and it looks like a crash of the
//! interpreter. A panic is a bug in freeblock (bad input should give an error naming the field
//! or line), so the entry points run their body through [`guarded`], which turns it into the
//! package's own base exception with the panic's message and asks for a report.
//!
//! ```text
//!  Python ──► #[pyfunction] ──► guarded("run_experiment", || body) ──► Ok / Err(PyErr) as is
//!                                          │ panic
//!                                          ▼
//!                              FreeblockError("internal error in run_experiment: …")
//! ```

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::PyResult;

use crate::error::FreeblockError;

/// Runs `body`; a panic in it becomes a `FreeblockError` naming `entry` (the Python-visible
/// function) and carrying the panic's message.
///
/// The body's state is dropped, not reused, after a panic, so no broken invariant escapes:
/// unwind safety is asserted for that reason.
pub fn guarded<T>(entry: &str, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(FreeblockError::new_err(format!(
            "internal error in {entry}: {} (this is a bug in freeblock; please report it with the input that caused it)",
            panic_message(payload.as_ref())
        )))
    })
}

/// The text a panic was raised with (`panic!("…")` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_both_payload_kinds_are_kept() {
        let from_str: Box<dyn Any + Send> = Box::new("static text");
        let from_string: Box<dyn Any + Send> = Box::new(format!("formatted {}", 7));
        let other: Box<dyn Any + Send> = Box::new(42_u8);
        assert_eq!(panic_message(from_str.as_ref()), "static text");
        assert_eq!(panic_message(from_string.as_ref()), "formatted 7");
        assert_eq!(panic_message(other.as_ref()), "a panic without a message");
    }
}
