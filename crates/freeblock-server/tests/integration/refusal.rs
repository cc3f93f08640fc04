//! A request the layout policy refuses fails alone: its client gets the error, and the engine
//! goes on serving that client's next requests and every other client's.

use std::sync::{mpsc, Arc};
use std::time::Instant;

use freeblock::sim::SimConfig;
use freeblock_disk::{library, Disk, Op};
use freeblock_server::timing::{Completion, Done, Timing, TimingError};
use freeblock_server::Pace;

#[path = "../../../freeblock/tests/support/picky_layout.rs"]
mod picky_layout;

use picky_layout::Picky;

/// One request, waited for (a client at queue depth 1).
fn serve(timing: &Timing, op: Op, lbn: u64) -> Result<Completion, TimingError> {
    let (tx, rx) = mpsc::channel();
    timing.submit(op, lbn, 8, Instant::now(), None, Done::new(move |r, _| tx.send(r).unwrap()));
    rx.recv().unwrap()
}

#[test]
fn a_refused_request_fails_alone_and_the_other_clients_go_on() {
    let disk = Arc::new(Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap());
    let every = 1 << 18;
    let timing = Timing::start(disk, SimConfig::default(), None, Vec::new(), Some((Box::new(Picky { every }), None)), Pace::None, false, Arc::default()).unwrap();
    let (refused, served_a, served_b) = std::thread::scope(|s| {
        // Client A: every other request refused.
        let a = s.spawn(|| {
            let (mut refused, mut served) = (0, 0);
            for i in 0..40u64 {
                let lbn = if i % 2 == 0 { (i + 1) * every } else { (i + 1) * every + 8 };
                match serve(&timing, Op::Write, lbn).unwrap() {
                    Completion { failed: Some(why), .. } => {
                        assert!(why.message.contains("is refused"), "{why}");
                        assert_eq!(i % 2, 0, "request {i} at sector {lbn} refused");
                        refused += 1;
                    }
                    Completion { failed: None, end_ns, arrival_ns, .. } => {
                        assert!(end_ns > arrival_ns, "served by the model");
                        served += 1;
                    }
                }
            }
            (refused, served)
        });
        // Client B: never refused, served throughout.
        let b = s.spawn(|| (0..40u64).filter(|i| serve(&timing, Op::Read, 8 + i * 4096).unwrap().failed.is_none()).count());
        let (refused, served_a) = a.join().unwrap();
        (refused, served_a, b.join().unwrap())
    });
    assert_eq!((refused, served_a, served_b), (20, 20, 40));
    // The engine is still serving after the refusals, and ends cleanly with the served ones.
    assert!(serve(&timing, Op::Read, 16).unwrap().failed.is_none());
    let report = timing.finish().unwrap().expect("the engine ran");
    assert_eq!(report.requests, 20 + 40 + 1, "only the served requests are counted: {report:?}");
}
