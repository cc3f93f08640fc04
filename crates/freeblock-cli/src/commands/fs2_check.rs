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
