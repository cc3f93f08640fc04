//! Layout policies live: the model serves the server's requests through rearrangement, and the
//! bytes clients read back are still the bytes they wrote.

mod support;

use freeblock::experiment::LayoutSpec;
use freeblock_server::Pace;
use support::{config, have, run, start, text, Scratch};

fn serve_through(layout: &str) -> (String, freeblock_server::Finished) {
    let dir = Scratch::new("layout");
    let mut cfg = config("atlas10k", &dir.path("store"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>(layout).unwrap());
    let server = start(cfg);
    let uri = server.uri();
    run("qemu-io", &["-f", "raw", "-c", "write -P 0x21 0 1m", "-c", "write -P 0x42 5000 3000", "-c", "write -P 0x63 300m 64k", "-c", "flush", &uri]);
    let out = text(&run("qemu-io", &["-f", "raw", "-c", "read -P 0x21 0 5000", "-c", "read -P 0x42 5000 3000", "-c", "read -P 0x21 8000 1040576", "-c", "read -P 0x63 300m 64k", "-c", "read -P 0 400m 64k", &uri]));
    (out, server.stop())
}

#[test]
fn rearrangement_serves_the_written_bytes() {
    if !have("qemu-io") {
        return;
    }
    // The default period (a day) only monitors; a 50 ms period rearranges while the clients run.
    for (layout, moves) in [("type = \"rearrange\"", false), ("type = \"rearrange\"\nperiod_s = 0.05\nschedule = \"always\"", true)] {
        let (out, finished) = serve_through(layout);
        assert!(!out.contains("Pattern verification failed") && out.matches("read ").count() == 5, "{layout}: {out}");
        let report = finished.report.unwrap();
        let summary = report.layout.expect("the run had a layout policy");
        let summary_ios = summary.policy_ios;
        let policy = summary.policy;
        assert!(policy.to_lowercase().contains("rearrange"), "{layout}: the engine ran {policy}");
        assert_eq!(summary_ios > 0, moves, "{layout}: {summary_ios} policy I/Os");
        assert_eq!(finished.summary.timed, 8, "three writes and five reads timed: {layout}");
        assert!(finished.summary.requests >= 9, "{:?}", finished.summary);
    }
}

#[test]
fn fs2_serves_the_written_bytes() {
    if !have("qemu-io") {
        return;
    }
    // A small epoch and threshold 1 so that the few requests of the test make replicas.
    let layout = "type = \"fs2\"\nepoch_accesses = 4\nthreshold = 1\nservice = \"foreground\"";
    let (out, finished) = serve_through(layout);
    assert!(!out.contains("Pattern verification failed") && out.matches("read ").count() == 5, "{out}");
    let summary = finished.report.unwrap().layout.expect("the run had a layout policy");
    assert!(summary.policy.to_lowercase().contains("fs2"), "the engine ran {}", summary.policy);
    assert_eq!(finished.summary.timed, 8, "three writes and five reads timed");
}
