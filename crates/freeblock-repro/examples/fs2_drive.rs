//! FS2 (paper 003) on the paper's drive with and without its read cache: pass-7 access cut of
//! fs2_paper over none on the four scattered-files presets, and the first pass's response-time
//! overhead. `cargo run --release -p freeblock-repro --example fs2_drive [-- --no-cache] [--ext2] [--window N] [--threshold N] [--db-group BLOCKS] [--inodes BOOL] [--files N] [--fixed-order BOOL] [--regions N] [--only NAME-SUFFIX] [--head BLOCKS] [--shuffle BOOL] [--real] [--inside BLOCKS] [--refill BOOL] [--window-ms MS]`

use freeblock_repro::p003_fs2::runs::{self as fs2, Drives, Fs2ReproConfig, Fs2Row, Variant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = Fs2ReproConfig { trace: None, ..Fs2ReproConfig::default() };
    let mut i = 0;
    let mut prefix = "files_";
    let (mut gap, mut extent, mut segments): (Option<u32>, Option<u32>, Option<u32>) = (None, None, None);
    let (mut dominant, mut think): (Option<f64>, Option<f64>) = (None, None);
    let (mut db_group, mut inodes, mut files): (Option<u64>, Option<bool>, Option<u32>) = (None, None, None);
    let (mut head, mut shuffle): (Option<u32>, Option<bool>) = (None, None);
    let (mut fixed, mut regions, mut only): (Option<bool>, Option<u32>, Option<String>) = (None, None, None);
    while i < args.len() {
        let flag = args[i].as_str();
        match flag {
            "--no-cache" => cfg.read_cache = false,
            "--ext2" => prefix = "ext2_",
            "--real" => prefix = "real_",
            "--inside" => cfg.fs2.inside_jump_blocks = value(&args, &mut i)?,
            "--refill" => cfg.fs2.refill_invalidated = value(&args, &mut i)?,
            "--window" => cfg.fs2.window = value(&args, &mut i)?,
            "--window-ms" => cfg.fs2.window_ms = value(&args, &mut i)?,
            "--threshold" => cfg.fs2.threshold = value(&args, &mut i)?,
            "--fill" => cfg.fs2.fill = value(&args, &mut i)?,
            "--gap" => gap = Some(value(&args, &mut i)?),
            "--extent" => extent = Some(value(&args, &mut i)?),
            "--segments" => segments = Some(value(&args, &mut i)?),
            "--dominant" => dominant = Some(value(&args, &mut i)?),
            "--think" => think = Some(value(&args, &mut i)?),
            "--db-group" => db_group = Some(value(&args, &mut i)?),
            "--inodes" => inodes = Some(value(&args, &mut i)?),
            "--files" => files = Some(value(&args, &mut i)?),
            "--fixed-order" => fixed = Some(value(&args, &mut i)?),
            "--regions" => regions = Some(value(&args, &mut i)?),
            "--only" => only = Some(value(&args, &mut i)?),
            "--head" => head = Some(value(&args, &mut i)?),
            "--shuffle" => shuffle = Some(value(&args, &mut i)?),
            a => return Err(format!("unknown argument {a}").into()),
        }
        i += 1;
    }
    let mut drives = Drives::new(&cfg)?;
    if let (Some(n), true) = (segments, cfg.read_cache) {
        let mut spec = drives.paper.spec().clone();
        spec.cache.segments = n;
        drives.paper = std::sync::Arc::new(freeblock_disk::Disk::new(spec)?);
    }
    println!("cache {} window {} threshold {} fill {}", cfg.read_cache, cfg.fs2.window, cfg.fs2.threshold, cfg.fs2.fill);
    println!("{:<14} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9} {:>8} {:>6}", "workload", "none ms", "fs2 ms", "access", "seek", "rot", "energy", "1st pass", "copies%", "busy%");
    for mut w in fs2::workloads(&cfg).into_iter().filter(|w| w.name.starts_with(prefix) && only.as_ref().is_none_or(|o| w.name.ends_with(o.as_str()))) {
        if let freeblock::workload::WorkloadSpec::ScatteredFiles(spec) = &mut w.spec {
            spec.gap_blocks = gap.unwrap_or(spec.gap_blocks);
            spec.extent_blocks = extent.unwrap_or(spec.extent_blocks);
            spec.dominant_share = dominant.unwrap_or(spec.dominant_share);
            spec.think_time_ms *= think.unwrap_or(1.0);
            spec.db_group_blocks = db_group.unwrap_or(spec.db_group_blocks);
            spec.inode_reads = inodes.unwrap_or(spec.inode_reads);
            spec.files = files.unwrap_or(spec.files);
            spec.fixed_order = fixed.unwrap_or(spec.fixed_order);
            spec.regions = regions.unwrap_or(spec.regions);
            spec.head_blocks = head.unwrap_or(spec.head_blocks);
            spec.shuffle_files = shuffle.unwrap_or(spec.shuffle_files);
        }
        let base = fs2::run_one(&drives, &cfg, &w, Variant::None)?;
        let ours = fs2::run_one(&drives, &cfg, &w, Variant::Fs2Paper)?;
        let cut = |b: f64, o: f64| Fs2Row::improvement(b, o);
        if let Some(f) = &ours.fs2 {
            println!("  replicas made {}, hot region changes {}", f.replicas_made, f.hot_region_changes);
        }
        for (label, r) in [("none", &base), ("fs2", &ours)] {
            println!("  {label}: seek {:.2} ms, rot {:.2} ms, xfer {:.3} ms, unpositioned {:.0}%, requests {}", r.seek_ms, r.rotational_ms, r.transfer_ms, r.unpositioned_pct, r.requests);
        }
        println!(
            "{:<14} {:>8.2} {:>8.2} {:>6.0}% {:>6.0}% {:>6.0}% {:>6.0}% {:>+8.1}% {:>7.0}% {:>3.0}/{:<3.0}",
            w.name,
            base.access_ms,
            ours.access_ms,
            cut(base.access_ms, ours.access_ms),
            cut(base.seek_ms, ours.seek_ms),
            cut(base.rotational_ms, ours.rotational_ms),
            cut(base.energy_per_access_mj, ours.energy_per_access_mj),
            -cut(base.first_pass_response_ms, ours.first_pass_response_ms),
            ours.reads_from_copies_pct,
            base.busy_pct,
            ours.busy_pct
        );
    }
    Ok(())
}


/// The value after the flag at `args[*i]`, parsed; moves `i` onto it.
fn value<T: std::str::FromStr>(args: &[String], i: &mut usize) -> Result<T, Box<dyn std::error::Error>>
where
    T::Err: std::error::Error + 'static,
{
    let flag = &args[*i];
    *i += 1;
    let text = args.get(*i).ok_or_else(|| format!("{flag} needs a value"))?;
    Ok(text.parse::<T>().map_err(|e| format!("{flag} {text}: {e}"))?)
}
