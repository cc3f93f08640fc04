//! Background tasks written in Python: a [`BackgroundApp`] that holds the Python object and calls
//! it with the GIL taken, and the control object its methods receive.
//!
//! The Python object is a `freeblock.BackgroundTask` (python/freeblock/_tasks.py). This file calls
//! three of its methods and reads three attributes:
//!
//! | Rust | Python |
//! |---|---|
//! | [`BackgroundApp::name`], `op`, `block_bytes` | attributes `name`, `op` (`"read"`/`"write"`), `block_bytes`, read once |
//! | [`BackgroundApp::start`] | `start(ctl)` |
//! | [`BackgroundApp::on_blocks`] | `_freeblock_deliver(ctl, lbn, time_ns, route)`: three `bytes` of little-endian `u64`, `u64`, `u8` (an index into [`ROUTES`]); the base class turns them into numpy arrays and calls `on_blocks(ctl, batch)` |
//! | [`BackgroundApp::is_done`] | attribute `done`, read after every call |
//!
//! The control object ([`PyTaskControl`]) only *records* what the method asks for (register,
//! abort, promote, notify_after); the requests are carried out on the real [`TaskControl`], in
//! order, when the method returns. The first one the subsystem refuses stops the run, and
//! `freeblock.run` raises it (mapped by `error.rs`, with the task and the call in the message). An
//! exception raised by the task stops the run the same way, and is re-raised as it was.

use std::sync::{Arc, Mutex};

use freeblock::freeblock::{
    BackgroundApp, Delivery, FreeblockError as FbError, Route, TaskControl, TaskReport,
};
use freeblock_disk::Op;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error;

/// Names of the delivery routes, indexed by the codes in a batch's `route` bytes.
pub const ROUTES: [&str; 4] = ["free", "piggyback", "idle", "promoted"];

fn route_code(route: Route) -> u8 {
    match route {
        Route::Free => 0,
        Route::Piggyback => 1,
        Route::Idle => 2,
        Route::Promoted => 3,
    }
}

/// `"read"`/`"r"` or `"write"`/`"w"` (any case) as an [`Op`].
fn parse_op(op: &str, what: &str) -> PyResult<Op> {
    match op.to_ascii_lowercase().as_str() {
        "r" | "read" => Ok(Op::Read),
        "w" | "write" => Ok(Op::Write),
        _ => Err(error::config_error_at(
            what,
            "op",
            &format!("must be \"read\" or \"write\", not {op:?}"),
        )),
    }
}

fn op_name(op: Op) -> &'static str {
    if op.is_read() {
        "read"
    } else {
        "write"
    }
}

/// One request a task made of its control object.
#[derive(Debug, Clone, Copy)]
enum Call {
    Register { lbn: u64, blocks: u64 },
    RegisterWholeDisk,
    Abort { start: u64, end: u64 },
    MarkUrgent { start: u64, end: u64 },
    Promote { start: u64, end: u64, op: Op },
    NotifyAfter { blocks: u64 },
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Register { lbn, blocks } => write!(f, "register(lbn={lbn}, blocks={blocks})"),
            Call::RegisterWholeDisk => write!(f, "register_whole_disk()"),
            Call::Abort { start, end } => write!(f, "abort(start={start}, end={end})"),
            Call::MarkUrgent { start, end } => write!(f, "mark_urgent(start={start}, end={end})"),
            Call::Promote { start, end, op } => write!(
                f,
                "promote(start={start}, end={end}, op={:?})",
                op_name(*op)
            ),
            Call::NotifyAfter { blocks } => write!(f, "notify_after({blocks})"),
        }
    }
}

impl Call {
    fn apply(self, ctl: &mut TaskControl<'_>) -> Result<(), FbError> {
        match self {
            Call::Register { lbn, blocks } => ctl.register(lbn, blocks).map(drop),
            Call::RegisterWholeDisk => ctl.register_whole_disk().map(drop),
            Call::Abort { start, end } => ctl.abort(start..end).map(drop),
            Call::MarkUrgent { start, end } => ctl.mark_urgent(start..end).map(drop),
            Call::Promote { start, end, op } => ctl.promote(start..end, op).map(drop),
            Call::NotifyAfter { blocks } => {
                ctl.notify_after(blocks);
                Ok(())
            }
        }
    }
}

/// What a background task may do from `start` and `on_blocks`.
///
/// The calls are recorded and carried out in order when the method returns; the first one the
/// subsystem refuses (blocks outside the disk, a misaligned first LBN, …) stops the run and
/// `freeblock.run` raises it. The values (`now_ns`, `wanted_sectors`, …) are those at the start of
/// the call. A control object is valid only during the call it was passed to.
#[pyclass(name = "TaskControl", module = "freeblock")]
pub struct PyTaskControl {
    calls: Vec<Call>,
    open: bool,
    op: Op,
    /// The simulated time of the call, ns.
    #[pyo3(get)]
    now_ns: u64,
    /// The task's number (its index among the run's background tasks).
    #[pyo3(get)]
    task: u32,
    /// Sectors the task still wants (not counting promoted ones in flight).
    #[pyo3(get)]
    wanted_sectors: u64,
    /// Sectors per application block.
    #[pyo3(get)]
    block_sectors: u64,
    /// The disk's capacity, sectors.
    #[pyo3(get)]
    capacity_sectors: u64,
    /// The disk's sector size, bytes.
    #[pyo3(get)]
    sector_bytes: u64,
}

impl PyTaskControl {
    fn record(&mut self, call: Call) -> PyResult<()> {
        if !self.open {
            return Err(PyRuntimeError::new_err(format!(
                "{call}: this TaskControl belonged to a call that has returned; use the one passed to start or on_blocks"
            )));
        }
        self.calls.push(call);
        Ok(())
    }
}

#[pymethods]
impl PyTaskControl {
    /// Registers ``blocks`` application blocks starting at LBN ``lbn`` (a multiple of
    /// ``block_sectors``). Blocks already registered stay as they are.
    fn register(&mut self, lbn: &Bound<'_, PyAny>, blocks: &Bound<'_, PyAny>) -> PyResult<()> {
        let (lbn, blocks) = (error::unsigned_arg(lbn, "lbn")?, error::unsigned_arg(blocks, "blocks")?);
        self.record(Call::Register { lbn, blocks })
    }

    /// Registers every whole application block of the disk.
    fn register_whole_disk(&mut self) -> PyResult<()> {
        self.record(Call::RegisterWholeDisk)
    }

    /// Drops the wanted sectors in LBNs ``[start, end)``: they are never delivered.
    fn abort(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = (error::unsigned_arg(start, "start")?, error::unsigned_arg(end, "end")?);
        self.record(Call::Abort { start, end })
    }

    /// Marks the wanted sectors in LBNs ``[start, end)`` urgent: the planner weighs each as
    /// several ordinary ones (``URGENT_WEIGHT``) until it is transferred, so blocks that have
    /// waited long are not passed over for a few more that have not.
    fn mark_urgent(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (start, end) = (error::unsigned_arg(start, "start")?, error::unsigned_arg(end, "end")?);
        self.record(Call::MarkUrgent { start, end })
    }

    /// Makes the wanted sectors in LBNs ``[start, end)`` foreground requests (contiguous ones
    /// merged); their blocks are delivered, with route ``"promoted"``, when the requests complete.
    /// ``op`` is ``"read"`` or ``"write"`` (default: the task's).
    #[pyo3(signature = (start, end, op=None))]
    fn promote(&mut self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>, op: Option<&str>) -> PyResult<()> {
        let (start, end) = (error::unsigned_arg(start, "start")?, error::unsigned_arg(end, "end")?);
        let op = match op {
            Some(s) => parse_op(s, "op")?,
            None => self.op,
        };
        self.record(Call::Promote { start, end, op })
    }

    /// Be called again as soon as ``blocks`` more blocks have been delivered (instead of the run's
    /// ``batch_blocks``; a task with nothing left in flight is called with what there is).
    fn notify_after(&mut self, blocks: &Bound<'_, PyAny>) -> PyResult<()> {
        let blocks = error::unsigned_arg(blocks, "blocks")?;
        self.record(Call::NotifyAfter { blocks })
    }

    fn __repr__(&self) -> String {
        format!(
            "<freeblock.TaskControl task={} now_ns={} wanted_sectors={} calls={}{}>",
            self.task,
            self.now_ns,
            self.wanted_sectors,
            self.calls.len(),
            if self.open { "" } else { " (closed)" }
        )
    }
}

/// A background application implemented by a Python object.
pub struct PyApp {
    obj: Py<PyAny>,
    name: String,
    op: Op,
    block_bytes: u64,
    sector_bytes: u64,
    capacity: u64,
    done: bool,
    delivered: u64,
    /// The first Python exception of the run (shared by the run's tasks).
    error: Arc<Mutex<Option<PyErr>>>,
}

impl PyApp {
    /// Reads the task's `name`, `op` and `block_bytes`. `error` collects the exception that
    /// stops the run.
    pub fn new(obj: &Bound<'_, PyAny>, error: Arc<Mutex<Option<PyErr>>>) -> PyResult<Self> {
        let name: String = obj.getattr("name")?.extract()?;
        let op: String = obj.getattr("op")?.extract()?;
        let block_bytes = error::unsigned_arg_at(
            &obj.getattr("block_bytes")?,
            &format!("task {name:?}: block_bytes"),
            "block_bytes",
        )?;
        Ok(Self {
            op: parse_op(&op, &format!("task {name:?}: op"))?,
            obj: obj.clone().unbind(),
            name,
            block_bytes,
            sector_bytes: 512,
            capacity: 0,
            done: false,
            delivered: 0,
            error,
        })
    }

    /// Sets what the task is told about the disk.
    pub fn set_disk(&mut self, capacity_sectors: u64, sector_bytes: u64) {
        self.capacity = capacity_sectors;
        self.sector_bytes = sector_bytes.max(1);
    }

    /// Calls the Python method through `call` with a fresh control object, then carries out what
    /// it recorded. Any failure is kept for `freeblock.run` to raise, and stops the run.
    fn call(
        &mut self,
        ctl: &mut TaskControl<'_>,
        method: &str,
        call: impl FnOnce(Python<'_>, &Py<PyAny>, &Py<PyTaskControl>) -> PyResult<()>,
    ) -> Result<(), FbError> {
        let outcome = Python::with_gil(|py| -> PyResult<Vec<Call>> {
            let control = Py::new(
                py,
                PyTaskControl {
                    calls: Vec::new(),
                    open: true,
                    op: self.op,
                    now_ns: ctl.now(),
                    task: ctl.task().0,
                    wanted_sectors: ctl.wanted_sectors(),
                    block_sectors: self.block_bytes / self.sector_bytes,
                    capacity_sectors: self.capacity,
                    sector_bytes: self.sector_bytes,
                },
            )?;
            let called = call(py, &self.obj, &control);
            let calls = {
                let mut c = control.borrow_mut(py);
                c.open = false;
                std::mem::take(&mut c.calls)
            };
            called?;
            self.done = self.obj.bind(py).getattr("done")?.is_truthy()?;
            Ok(calls)
        });
        let fail = |err: PyErr, message: String| {
            let mut slot = self
                .error
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.get_or_insert(err);
            Err(FbError::Application(message))
        };
        let calls = match outcome {
            Ok(calls) => calls,
            Err(e) => {
                let message = format!("task {:?}: {method} raised {e}", self.name);
                return fail(e, message);
            }
        };
        for c in calls {
            if let Err(e) = c.apply(ctl) {
                let message = format!("task {:?}: {c} in {method}: {e}", self.name);
                return fail(error::from_freeblock(&e, message.clone()), message);
            }
        }
        Ok(())
    }
}

impl BackgroundApp for PyApp {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn op(&self) -> Op {
        self.op
    }

    fn block_bytes(&self) -> u64 {
        self.block_bytes
    }

    fn start(&mut self, ctl: &mut TaskControl<'_>) -> Result<(), FbError> {
        self.call(ctl, "start", |py, obj, control| {
            obj.call_method1(py, "start", (control.clone_ref(py),))
                .map(drop)
        })
    }

    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> Result<(), FbError> {
        self.delivered += blocks.len() as u64;
        let (mut lbn, mut time) = (
            Vec::with_capacity(blocks.len() * 8),
            Vec::with_capacity(blocks.len() * 8),
        );
        let mut route = Vec::with_capacity(blocks.len());
        for d in blocks {
            lbn.extend_from_slice(&d.lbn.to_le_bytes());
            time.extend_from_slice(&d.time.to_le_bytes());
            route.push(route_code(d.route));
        }
        self.call(ctl, "on_blocks", |py, obj, control| {
            let args = (
                control.clone_ref(py),
                PyBytes::new(py, &lbn),
                PyBytes::new(py, &time),
                PyBytes::new(py, &route),
            );
            obj.call_method1(py, "_freeblock_deliver", args).map(drop)
        })
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn report(&self) -> TaskReport {
        TaskReport {
            name: self.name.clone(),
            blocks_delivered: self.delivered,
            block_bytes: self.block_bytes,
            passes: Vec::new(),
            progress: Vec::new(),
        }
    }
}
