//! The drive's write-back cache through the engine (issue 34): FLUSH CACHE and FUA writes carried
//! by requests and by an experiment's `commands` workload, and the flush figure's shape on the
//! 2 TB desktop drive (`freeblock write-cache --disk st2000dm006` prints it beside the published
//! 28 + 9.4·N ms).

use std::path::Path;

use freeblock::experiment::Experiment;
use freeblock::firmware::write_cache::{fit_line, flush_curve, write_back_disk};
use freeblock_disk::{library, Disk};

#[test]
fn flush_cost_grows_about_linearly_with_the_dirty_writes() {
    let disk = write_back_disk(&Disk::new(library::get("st2000dm006").unwrap()).unwrap()).unwrap();
    let rows = flush_curve(&disk, &[4, 16, 64, 128], 6, 3).unwrap();
    for r in &rows {
        eprintln!("N {:4}: dirty {:6.1}, flush {:8.1} ms, {:5.2} ms per block (published {:7.1} ms)", r.writes, r.dirty_blocks, r.flush_ms, r.per_block_ms, r.published_ms);
    }
    // Rising with N, every block costing a positioning (several ms on this drive).
    assert!(rows.windows(2).all(|w| w[1].flush_ms > w[0].flush_ms), "{rows:?}");
    assert!(rows.iter().all(|r| r.per_block_ms > 3.0), "{rows:?}");
    // About linear: past the destage window, the cost per block settles (within 25% from 16 to
    // 128 dirty blocks), and the fitted line explains the points.
    let (p16, p128) = (rows[1].per_block_ms, rows[3].per_block_ms);
    assert!((p128 / p16 - 1.0).abs() < 0.25, "per block {p16} ms at 16, {p128} ms at 128");
    let (base, slope) = fit_line(&rows);
    for r in &rows {
        let line = base + slope * r.writes as f64;
        assert!((r.flush_ms - line).abs() < 0.1 * r.flush_ms.max(100.0), "{r:?} vs the line {base} + {slope}·N");
    }
    // Most writes are still dirty when the flush comes (they arrive back to back).
    assert!(rows.iter().all(|r| r.dirty_blocks >= r.writes as f64 - 2.0), "{rows:?}");
}

fn experiment(commands: &str, write_cache: &str) -> Experiment {
    let text = format!("[disk]\nname = \"st2000dm006\"\ncache = false\nwrite_cache = \"{write_cache}\"\n[sim]\nkeep_records = true\n[workload]\ntype = \"commands\"\ncommands = [{commands}]\n");
    Experiment::from_toml_str(&text, "wc.toml", Path::new(".")).unwrap()
}

#[test]
fn an_experiment_carries_flush_and_fua_to_the_drive() {
    let commands = "{ op = \"write\", lbn = 1000, sectors = 8 }, { op = \"write\", lbn = 3000000000, sectors = 8 }, { op = \"read\", lbn = 3000000000, sectors = 8 }, { op = \"flush\" }, { op = \"write\", lbn = 2000000000, sectors = 8, fua = true }, { op = \"flush\" }";
    let back = experiment(commands, "write_back").run(None).unwrap();
    let through = experiment(commands, "write_through").run(None).unwrap();
    let ms = |r: &freeblock::report::RunReport, i: usize| (r.records[i].end_ns - r.records[i].start_ns) as f64 / 1e6;
    assert_eq!(back.requests, 6);
    // Write-back: the writes, and the read of still-dirty data, complete in the cache (the
    // mechanism meanwhile destages the block nearest the heads: the first write).
    assert!(back.records[..3].iter().all(|r| r.cache_hit), "{:?}", back.records);
    assert!(ms(&back, 0) < 0.1 && ms(&back, 2) < 0.1);
    // The first flush writes the two dirty blocks (each a positioning at least); the FUA write
    // goes to the media; the second flush finds nothing dirty.
    assert!(ms(&back, 3) > 5.0, "flush {} ms", ms(&back, 3));
    assert!(!back.records[4].cache_hit && ms(&back, 4) > 0.5);
    assert!(ms(&back, 5) < 0.001, "an empty flush: {} ms", ms(&back, 5));
    // Write-through: every write pays the media, and flushes cost nothing.
    assert!(ms(&through, 0) > 0.5 && !through.records[0].cache_hit);
    assert!(ms(&through, 3) < 0.001 && ms(&through, 5) < 0.001);
}

#[test]
fn write_back_refuses_what_it_cannot_model_by_name() {
    let mut e = experiment("{ op = \"flush\" }", "write_back");
    e.freeblock = Some(toml::from_str("").unwrap());
    let msg = e.run(None).unwrap_err().to_string();
    assert!(msg.contains("freeblock") && msg.contains("write_cache.mode"), "{msg}");
    // The DiskSim buffer left on under a write-back cache.
    let text = "[disk]\nname = \"st2000dm006\"\nwrite_cache = \"write_back\"\n[workload]\ntype = \"commands\"\ncommands = [{ op = \"flush\" }]\n";
    let msg = Experiment::from_toml_str(text, "wc.toml", Path::new(".")).unwrap().run(None).unwrap_err().to_string();
    assert!(msg.contains("disk.write_cache") && msg.contains("cache.enabled"), "{msg}");
    // A FUA read from code.
    let disk = write_back_disk(&Disk::new(library::get("st2000dm006").unwrap()).unwrap()).unwrap();
    let bad = freeblock::request::Request { fua: true, ..freeblock::request::Request::new(0, 8, 8, freeblock_disk::Op::Read) };
    let w = freeblock::workload::commands::RequestList::new(vec![bad], freeblock::workload::ArrivalKind::Open);
    let msg = freeblock::sim::Simulation::new(disk, Box::new(w), freeblock::sim::SimConfig::default()).run(None).unwrap_err().to_string();
    assert!(msg.contains("FUA"), "{msg}");
}
