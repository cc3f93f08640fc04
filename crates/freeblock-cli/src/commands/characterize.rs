//! `freeblock characterize`: learn built-in drives through the black box only, then grade each
//! learned parameter against the hidden truth, with the simulated probing time (DIXtrac: 3–5
//! minutes per drive). The work is [`freeblock_fit::characterize`]'s; this module prints and writes files.

use std::path::PathBuf;

use clap::Args;
use freeblock::external::Effects;
use freeblock_fit::characterize::{characterize_hidden, StepRow, ACCEPTANCE_DRIVES};
use freeblock_disk::library;

use freeblock_repro::table::Table;
use crate::output::CmdResult;

/// Arguments of `freeblock characterize`.
#[derive(Debug, Args)]
pub struct CharacterizeArgs {
    /// Built-in disks (or TOML specs) to hide behind the black box; default: five drives
    /// (`freeblock_fit::characterize::ACCEPTANCE_DRIVES`).
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
    let names: Vec<String> = if a.disks.is_empty() { ACCEPTANCE_DRIVES.iter().map(|s| (*s).to_string()).collect() } else { a.disks.clone() };
    let effects = if a.no_effects { Effects::none() } else { Effects::default() };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = Vec::new();
    let mut failed = Vec::new();
    for name in &names {
        let truth = library::load(name)?;
        let description = truth.description.clone();
        let report = characterize_hidden(name, truth, effects.clone(), a.seed)?;
        if !report.passed {
            failed.push(name.clone());
        }
        if let Some(dir) = &a.out {
            std::fs::write(dir.join(format!("{name}.learned.toml")), report.spec.to_toml_string())?;
        }
        if a.json {
            json.push(serde_json::to_value(&report)?);
            continue;
        }
        let (g, fw) = (&report.grade, &report.firmware);
        outln!("\n== {name}: {description} ==");
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
        for StepRow { step, cost } in &report.costs {
            c.row([(*step).to_string(), cost.translations.to_string(), cost.commands.to_string(), format!("{:.1}", cost.simulated_ns as f64 / 1e9)]);
        }
        out!("{}", c.render());
        let total = report.simulated_s;
        outln!(
            "probing took {total:.1} s simulated ({:.1} min; DIXtrac: 3-5 min per drive){}",
            total / 60.0,
            if report.longer_than_dixtrac() { " - LONGER than DIXtrac" } else { "" }
        );
        outln!(
            "firmware behind the host's back: {} read-ahead penalties, {} reorders, {} internal activities",
            fw.read_ahead_penalties, fw.reorders, fw.internal_activities
        );
        for f in &report.flags {
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
