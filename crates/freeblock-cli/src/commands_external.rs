//! `freeblock characterize`: learn built-in drives through the black box only, then grade each
//! learned parameter against the hidden truth, with the simulated probing time (DIXtrac: 3–5
//! minutes per drive). The work is [`freeblock::external`]'s; this module prints and writes files.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use freeblock::external::characterize::{characterize, Options};
use freeblock::external::truth::grade;
use freeblock::external::{BlackBox, Effects};
use freeblock_disk::{library, Disk};

use crate::table::Table;
use crate::CmdResult;

/// The drives of the acceptance run: spare and slipped sectors per zone with serpentine mapping
/// (Atlas 10K), spare sectors per cylinder range (Cheetah 4LP), spares per zone (Cheetah 9LP),
/// no spares (WD800), and a modern 8 TB drive (Ultrastar He8). `docs/external.md` lists the
/// library drives where characterisation still misses a bound.
const DEFAULT_DISKS: [&str; 5] = ["atlas10k", "cheetah4lp", "cheetah9lp", "wd800", "ultrastar_he8"];

/// Arguments of `freeblock characterize`.
#[derive(Debug, Args)]
pub struct CharacterizeArgs {
    /// Built-in disks (or TOML specs) to hide behind the black box; default: five drives.
    disks: Vec<String>,
    /// Turn every firmware effect off (the bare model).
    #[arg(long)]
    no_effects: bool,
    /// Seed of the firmware effects.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write each learned spec as `<DIR>/<disk>.learned.toml`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `freeblock characterize`.
pub fn characterize_cmd(a: &CharacterizeArgs) -> CmdResult {
    let names: Vec<String> = if a.disks.is_empty() { DEFAULT_DISKS.iter().map(|s| (*s).to_string()).collect() } else { a.disks.clone() };
    let effects = if a.no_effects { Effects::none() } else { Effects::default() };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = Vec::new();
    let mut failed = Vec::new();
    for name in &names {
        let truth = Arc::new(Disk::new(library::load(name)?.without_cache())?);
        let mut drive = BlackBox::new(Arc::clone(&truth), effects.clone(), a.seed);
        let learned = characterize(&mut drive, &Options { name: format!("{name}_learned"), ..Options::default() })?;
        let disk = Disk::new(learned.spec.clone())?;
        let g = grade(&disk, &truth);
        if !g.passed() {
            failed.push(name.clone());
        }
        if let Some(dir) = &a.out {
            std::fs::write(dir.join(format!("{name}.learned.toml")), learned.spec.to_toml_string())?;
        }
        let fw = drive.firmware_log();
        if a.json {
            json.push(serde_json::json!({
                "disk": name, "passed": g.passed(), "grade": g, "simulated_s": learned.simulated_ns() as f64 / 1e9,
                "costs": learned.costs.iter().map(|(n, c)| serde_json::json!({"step": n, "cost": c})).collect::<Vec<_>>(),
                "flags": learned.flags, "firmware": fw,
            }));
            continue;
        }
        outln!("\n== {name}: {} ==", truth.spec().description);
        let mut t = Table::new(["parameter", "learned", "truth", "within bound"]);
        for r in &g.rows {
            let ok = match r.ok {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "(reported)",
            };
            t.row([r.parameter.clone(), r.learned.clone(), r.truth.clone(), ok.to_string()]);
        }
        out!("{}", t.render());
        if let Some(m) = &g.first_mismatch {
            outln!("first layout mismatch: {m}");
        }
        let mut c = Table::new(["step", "translations", "commands", "simulated s"]);
        for (step, cost) in &learned.costs {
            c.row([(*step).to_string(), cost.translations.to_string(), cost.commands.to_string(), format!("{:.1}", cost.simulated_ns as f64 / 1e9)]);
        }
        out!("{}", c.render());
        let total = learned.simulated_ns() as f64 / 1e9;
        outln!(
            "probing took {total:.1} s simulated ({:.1} min; DIXtrac: 3-5 min per drive){}",
            total / 60.0,
            if total > 300.0 { " - LONGER than DIXtrac" } else { "" }
        );
        outln!(
            "firmware behind the host's back: {} read-ahead penalties, {} reorders, {} internal activities",
            fw.read_ahead_penalties, fw.reorders, fw.internal_activities
        );
        for f in &learned.flags {
            outln!("flag: {f}");
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else if failed.is_empty() {
        outln!("\nall {} drives within every bound", names.len());
    } else {
        outln!("\nMISSED a bound on: {}", failed.join(", "));
    }
    Ok(())
}
