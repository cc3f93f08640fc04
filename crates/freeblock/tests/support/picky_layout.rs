//! A layout policy that refuses some requests, shared by the engine's online tests
//! (`tests/sim/online.rs`) and the server's refusal test, each including this file with `#[path]`.

use freeblock::layout::{Completed, LayoutCtx, LayoutError, LayoutPolicy, LogicalIo, PhysIo};

/// Serves every request where it is asked for, but refuses those starting on a multiple of
/// `every` sectors (a request a real policy cannot place).
pub struct Picky {
    pub every: u64,
}

impl LayoutPolicy for Picky {
    fn name(&self) -> String {
        "picky".into()
    }
    // `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
    #[allow(clippy::manual_is_multiple_of)]
    fn translate(&mut self, _ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> freeblock::layout::Result<()> {
        if io.lbn % self.every == 0 {
            return Err(LayoutError::Config { field: "layout", message: format!("sector {} is refused", io.lbn) });
        }
        out.push(PhysIo::at(io.op, io.lbn, io.sectors, io.id));
        Ok(())
    }
    fn complete(&mut self, _ctx: &mut LayoutCtx<'_>, _done: &Completed<'_>) -> freeblock::layout::Result<()> {
        Ok(())
    }
}
