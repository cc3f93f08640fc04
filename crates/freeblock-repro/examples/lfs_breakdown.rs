//! Where the time of PostMark on the log-structured layout goes, one cleaner at a time: the
//! measurements behind docs/lfs.md's one-change-at-a-time tables and what-ifs.
//!
//! ```text
//! cargo run --release -p freeblock-repro --example lfs_breakdown -- UTILS VARIANTS [--quick] [--block-reads] [--cpu-ms X] [--bus-ms X] [--inode-bytes N] [--fs-share X]
//!   UTILS     utilisations in %, comma-separated (e.g. 60,85,93)
//!   VARIANTS  comma-separated: orig | free | ours | ours_cb | ours32 | ours512 | ours_fw | ours_fw4 | ours_fw_nohold
//!   --inode-bytes N  PostMark with an inode table, every file operation rewriting its inode's block
//!   --fs-share X     the file system as a share of the log (its cleaning reserve the rest); utilisations are the file system's
//! ```
//!
//! | variant | cleaner |
//! |---|---|
//! | `orig` | ORIGINAL (IDEAL is computed from it) |
//! | `free` | FREEBLOCK, the paper's way |
//! | `ours` | [`FreeCleaning::ours`]: 128 segments of fewest live blocks, held, taken over |
//! | `ours_cb` | ours choosing by cost-benefit instead (session 13's ours) |
//! | `ours32`, `ours512` | ours with 32 or 512 segments at once |
//! | `ours_fw` | [`FreeCleaning::ours_free_writes`]: ours, the cleaned blocks written free into two destination segments at once |
//! | `ahead128`, `ahead512`, `ahead2048`, `ahead512_idle` | [`FreeCleaning::ours_read_ahead`]: that many segments read free at all times, moved only when space is needed (`_idle`: with idle-time reads) |
//! | `ours_fw4` | the same with four destinations at once |
//! | `ours_fw_nohold` | ours_fw with each block placed as soon as it is read, not held until its segment is in |
//!
//! Per run it prints transactions/s and, per transaction, the measured phase's time split into
//! cleaning reads, cleaned writes, new-data writes, cache-miss reads and the rest (CPU time);
//! the live share `u` of the segments cleaned, free MB/s while asking, and IDEAL's
//! transactions/s as computed from that run.

use freeblock::layout::lfs::{Choice, CleanerKind, FreeCleaning};
use freeblock_repro::p000_lfs_cleaning::runs::{run_one_with, LfsCleaningConfig, Run};

fn variant(name: &str, paper: FreeCleaning) -> Result<(CleanerKind, FreeCleaning), String> {
    let ours = FreeCleaning::ours();
    Ok(match name {
        "orig" => (CleanerKind::Original, paper),
        "free" => (CleanerKind::Freeblock, paper),
        "ours_idle" => (CleanerKind::FreeblockIdle, ours),
        "ahead128" => (CleanerKind::Freeblock, FreeCleaning::ours_read_ahead(128)),
        "ahead512" => (CleanerKind::Freeblock, FreeCleaning::ours_read_ahead(512)),
        "ahead2048" => (CleanerKind::Freeblock, FreeCleaning::ours_read_ahead(2048)),
        "ahead512_idle" => (CleanerKind::FreeblockIdle, FreeCleaning::ours_read_ahead(512)),
        "ours" => (CleanerKind::Freeblock, ours),
        "ours_cb" => (CleanerKind::Freeblock, FreeCleaning { choose: Choice::CostBenefit, ..ours }),
        "ours32" => (CleanerKind::Freeblock, FreeCleaning { parallel: 32, ..ours }),
        "ours512" => (CleanerKind::Freeblock, FreeCleaning { parallel: 512, ..ours }),
        "ours_fw" => (CleanerKind::Freeblock, FreeCleaning::ours_free_writes()),
        "ours_fw4" => (CleanerKind::Freeblock, FreeCleaning { free_write_segments: 4, ..ours }),
        "ours_fw_nohold" => (CleanerKind::Freeblock, FreeCleaning { hold_until_read: false, ..FreeCleaning::ours_free_writes() }),
        other => return Err(format!("unknown variant `{other}` (orig, free, ours_idle, ours, ours_cb, ours32, ours512, ours_fw, ours_fw4, ours_fw_nohold)")),
    })
}

fn number(flag: &str, value: Option<&String>) -> Result<f64, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| format!("{flag}: `{v}` is not a non-negative number"))
}

fn line(util: f64, name: &str, run: &Run, transactions: u32, data_blocks: u32) -> String {
    let s = &run.stats;
    let per = |ns: u64| ns as f64 / 1e6 / f64::from(transactions);
    let new_writes = s.segment_write_ns.saturating_sub(s.clean_write_ns);
    let disk = s.clean_read_ns + s.clean_write_ns + new_writes + s.read_miss_ns;
    let u = if s.measured_segments_cleaned > 0 { s.cleaned_blocks_written as f64 / s.measured_segments_cleaned as f64 / f64::from(data_blocks) } else { f64::NAN };
    let ideal = f64::from(transactions) / (s.measured_ns.saturating_sub(s.cleaning_ns()) as f64 / 1e9);
    format!(
        "{:>4.0} {name:<8} {:>7.1} | {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} | {:>5.3} {:>5} | {:>5.2} {:>6.0} {:>5} {:>5} | {:>6.1} | {}",
        util * 100.0,
        run.tps,
        per(s.measured_ns),
        per(s.clean_read_ns),
        per(s.clean_write_ns),
        per(new_writes),
        per(s.read_miss_ns),
        per(s.measured_ns.saturating_sub(disk)),
        u,
        s.measured_segments_cleaned,
        run.free_mb_s_while_asking(),
        run.mean_wanted_blocks(),
        s.foreground_segments,
        s.finished_segments,
        ideal,
        run.delayed_foreground,
    )
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(utils), Some(names)) = (args.first(), args.get(1)) else {
        return Err("usage: lfs_breakdown UTILS VARIANTS [--quick] [--block-reads] [--cpu-ms X] [--bus-ms X] [--inode-bytes N]".into());
    };
    let (mut quick, mut block_reads, mut cpu_ms, mut bus_ms, mut inode_bytes, mut fs_share) = (false, false, None, None, 0, 1.0);
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--quick" => quick = true,
            "--block-reads" => block_reads = true,
            "--cpu-ms" => {
                i += 1;
                cpu_ms = Some(number("--cpu-ms", args.get(i))?);
            }
            "--bus-ms" => {
                i += 1;
                bus_ms = Some(number("--bus-ms", args.get(i))?);
            }
            "--fs-share" => {
                i += 1;
                fs_share = number("--fs-share", args.get(i))?;
            }
            "--inode-bytes" => {
                i += 1;
                inode_bytes = number("--inode-bytes", args.get(i))? as u64;
            }
            other => return Err(format!("unknown option `{other}`")),
        }
        i += 1;
    }
    let mut cfg = if quick { LfsCleaningConfig::quick() } else { LfsCleaningConfig::paper() };
    cfg.clean_reads_one_by_one = block_reads;
    cfg.bus_sector_ms = bus_ms;
    cfg.postmark.inode_bytes = inode_bytes;
    cfg.fs_share = fs_share;
    if let Some(ms) = cpu_ms {
        cfg.postmark.cpu_ns_per_op = (ms * 1e6).round() as u64;
    }
    let utils: Vec<f64> = utils.split(',').map(|u| u.parse::<f64>().map(|x| x / 100.0).map_err(|_| format!("utilisation `{u}` is not a number"))).collect::<Result<_, _>>()?;
    let jobs: Vec<(f64, String, CleanerKind, FreeCleaning)> = utils.iter().flat_map(|&u| names.split(',').map(move |n| (u, n))).map(|(u, n)| variant(n, cfg.free).map(|(k, f)| (u, n.to_string(), k, f))).collect::<Result<_, _>>()?;
    let disk = cfg.disk().map_err(|e| e.to_string())?;
    let data_blocks = cfg.lfs(1).data_blocks();
    let runs = freeblock_repro::parallel::map_in_order(&jobs, cfg.threads, |(u, _, k, f)| run_one_with(&cfg, &disk, *u, *k, *f), |_| {});
    println!("util variant   tps/s  | ms per transaction: all, clean reads, cleaned writes, new writes, cache misses, rest |   u   cleaned | free MB/s, wanted, fg segs, taken over | IDEAL | delayed");
    for ((u, name, _, _), run) in jobs.iter().zip(runs) {
        match run {
            Ok((_, r)) => {
                println!("{}", line(*u, name, &r, cfg.postmark.transactions, data_blocks));
                let s = &r.stats;
                if s.free_writes > 0 {
                    println!(
                        "     {name:<8} free writes: {} asked, {} done; destinations: {} written free, {} closed in the foreground ({} blocks written there), {} given up; blocks moved {}, dead {}",
                        s.free_writes, s.free_writes_done, s.destinations_free, s.destinations_closed, s.destination_close_blocks, s.destinations_abandoned, s.destination_blocks_moved, s.destination_blocks_dead
                    );
                }
            }
            Err(e) => println!("{:>4.0} {name:<8} failed: {e}", u * 100.0),
        }
    }
    Ok(())
}
