//! `freeblock fs2-check` (paper 003's `chkfs2`): a saved replica table verified, or repaired,
//! against its block map.

use std::path::PathBuf;

use freeblock::layout::fs2::{check, repair, table_from_map, ReplicaTable};
use freeblock::layout::fs2::policy::TABLE_FILE;
use freeblock::layout::{DirStorage, DirtyRule, Journal};

use crate::output::CmdResult;

/// Arguments of `freeblock fs2-check`.
#[derive(Debug, clap::Args)]
pub struct Fs2CheckArgs {
    /// Folder holding `map.snapshot`, `map.journal` and `replicas.json` (as `Fs2::save` writes them).
    pub dir: PathBuf,
    /// Replicas allowed per block.
    #[arg(long, default_value_t = 1)]
    pub max_replicas: u32,
    /// Make the table and the map agree (the map's operations are journalled) instead of failing.
    #[arg(long)]
    pub repair: bool,
}

/// `freeblock fs2-check`.
pub fn fs2_check(a: &Fs2CheckArgs) -> CmdResult {
    let storage = DirStorage::new(&a.dir)?;
    let table_path = a.dir.join(TABLE_FILE);
    let (mut journal, mut map, recovery) = Journal::open(storage, DirtyRule::Logged)?;
    let table: ReplicaTable = match std::fs::read_to_string(&table_path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", table_path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            outln!("{}: no replica table; checking against the table the map implies", table_path.display());
            table_from_map(&map)
        }
        Err(e) => return Err(format!("{}: {e}", table_path.display()).into()),
    };
    if recovery.bytes_dropped > 0 {
        outln!("journal: a torn tail of {} bytes dropped", recovery.bytes_dropped);
    }
    let problems = check(&map, &table, a.max_replicas);
    outln!("{}: {} replicas in the table, {} blocks mapped, {} problem(s)", a.dir.display(), table.len(), map.stats().mapped, problems.len());
    for p in problems.iter().take(20) {
        outln!("  {p}");
    }
    if problems.len() > 20 {
        outln!("  … and {} more", problems.len() - 20);
    }
    if problems.is_empty() {
        return Ok(());
    }
    if !a.repair {
        return Err(format!("{}: the replica table does not match the map ({} problem(s)); --repair fixes it", a.dir.display(), problems.len()).into());
    }
    let (ops, fixed) = repair(&mut map, &table, a.max_replicas)?;
    for op in &ops {
        journal.append(op)?;
    }
    journal.commit()?;
    std::fs::write(&table_path, serde_json::to_string(&fixed)?)?;
    let left = check(&map, &fixed, a.max_replicas);
    outln!("repaired: {} map operation(s) journalled, table rewritten with {} replicas; {} problem(s) left", ops.len(), fixed.len(), left.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock::fs2::Fs2Workload;
    use freeblock::workload::{ScatteredFilesSpec, WorkloadSpec};

    /// The text puts our Ext2 beside the paper's and a miss beside its cause.
    #[test]
    fn a_stand_in_prints_its_baseline_beside_the_papers_and_a_miss_its_cause() {
        let spec = ScatteredFilesSpec { shuffle_files: true, ..ScatteredFilesSpec::paper003(Paper003Run::Surge) };
        let w = Fs2Workload { name: "ext2_surge_shuffled".into(), spec: WorkloadSpec::ScatteredFiles(spec), stands_for: "SURGE (Table 5)".into(), period_s: 60.0, passes: 7, paper_run: Some(Paper003Run::Surge) };
        let row = |v: Variant, access_ms: f64| Fs2Row { workload: w.name.clone(), variant: v.label().into(), access_ms, seek_ms: access_ms / 3.0, rotational_ms: access_ms / 2.0, busy_pct: 13.0, ..Fs2Row::default() };
        let r = Fs2Results { workloads: vec![w.clone()], rows: vec![row(Variant::None, 3.0), row(Variant::Fs2Paper, 2.7)], think_sensitivity: Vec::new() };
        let s = text(&Fs2ReproConfig { trace: None, fs_trace: None, ..Fs2ReproConfig::default() }, &r, None).unwrap();
        assert!(s.contains("our Ext2 (none): access 3.00 ms") && s.contains("the paper's Ext2:") && s.contains("busy 13%"), "{s}");
        let verdict = s.lines().find(|l| l.contains("MISSES")).unwrap_or_else(|| panic!("no miss in:\n{s}"));
        assert!(verdict.trim_start().starts_with("ext2_surge_shuffled") && verdict.contains("MISSES: the files are read in a new random order each pass"), "{verdict}");
    }
}
