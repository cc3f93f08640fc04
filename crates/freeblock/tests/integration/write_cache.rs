//! The drive's write-back cache through the engine (issue 34): FLUSH CACHE and FUA writes carried
//! by requests and by an experiment's `commands` workload, and what write-back refuses. The flush
//! figure's shape (`freeblock write-cache --disk st2000dm006`) is tested with its reproduction, in
//! crates/freeblock-repro.

use std::path::Path;

use freeblock::experiment::Experiment;
use freeblock_disk::{library, Disk, WriteCacheMode};

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
    let disk = std::sync::Arc::new(Disk::new(library::get("st2000dm006").unwrap().without_cache().with_write_cache_mode(WriteCacheMode::WriteBack).unwrap()).unwrap());
    let bad = freeblock::request::Request { fua: true, ..freeblock::request::Request::new(0, 8, 8, freeblock_disk::Op::Read) };
    let w = freeblock::workload::commands::RequestList::new(vec![bad], freeblock::workload::ArrivalKind::Open);
    let msg = freeblock::sim::Simulation::new(disk, Box::new(w), freeblock::sim::SimConfig::default()).run(None).unwrap_err().to_string();
    assert!(msg.contains("FUA"), "{msg}");
}
