//! `freeblock disks`, `freeblock disk show`, `freeblock disk import`: the built-in drives and their
//! geometry, and DiskSim `.diskspecs` as TOML.

use std::fmt::Write as _;
use std::path::Path;

use freeblock_disk::{library, Disk, DiskSummary};

use crate::output::{print_json, CmdResult};
use freeblock_repro::table::Table;

pub fn disks(json: bool) -> CmdResult {
    let mut rows = Vec::new();
    for name in library::names() {
        let spec = library::get(name)?;
        let disk = Disk::new(spec.clone())?;
        rows.push(serde_json::json!({
            "name": name,
            "description": spec.description,
            "capacity_gb": disk.capacity() as f64 * f64::from(spec.sector_bytes) / 1e9,
            "rpm": spec.rpm,
            "cylinders": disk.layout().cylinders(),
            "surfaces": spec.surfaces,
        }));
    }
    if json {
        return print_json(&rows);
    }
    let mut t = Table::new(["name", "capacity", "RPM", "cylinders", "surfaces", "description"]);
    for r in &rows {
        t.row([
            r["name"].as_str().unwrap_or("").to_string(),
            format!("{:.2} GB", r["capacity_gb"].as_f64().unwrap_or(0.0)),
            format!("{}", r["rpm"]),
            format!("{}", r["cylinders"]),
            format!("{}", r["surfaces"]),
            r["description"].as_str().unwrap_or("").to_string(),
        ]);
    }
    out!("{}", t.render());
    Ok(())
}

pub fn disk_show(name: &str, json: bool) -> CmdResult {
    let disk = Disk::new(library::load(name)?)?;
    let d = DiskSummary::of(&disk);
    if json {
        return print_json(&d);
    }
    let mut s = String::new();
    writeln!(s, "{} — {}", d.name, d.description)?;
    if !d.source.is_empty() {
        writeln!(s, "source: {}", d.source)?;
    }
    writeln!(
        s,
        "capacity {} sectors ({:.2} GB), {} RPM ({:.3} ms/rev), {} cylinders × {} surfaces, {} zones",
        d.capacity_sectors,
        d.capacity_gb,
        d.rpm,
        d.revolution_ms,
        d.cylinders,
        d.surfaces,
        d.zones.len()
    )?;
    writeln!(
        s,
        "seek: 1-cylinder {:.3} ms, average {:.3} ms, full stroke {:.3} ms; head switch {:.3} ms; write settle {:.3} ms",
        d.seek_single_ms, d.seek_average_ms, d.seek_full_ms, d.head_switch_ms, d.write_settle_ms
    )?;
    if d.seek_asymmetry_ms != 0.0 {
        writeln!(s, "seeks asymmetric: inward {:+.3} ms, outward {:+.3} ms against the curve", d.seek_asymmetry_ms, -d.seek_asymmetry_ms)?;
    }
    let mut t = Table::new(["zone", "cylinders", "sectors/track", "first LBN", "LBNs"]);
    for (i, z) in d.zones.iter().enumerate() {
        t.row([i.to_string(), format!("{}–{}", z.first_cylinder, z.last_cylinder), z.sectors_per_track.to_string(), z.first_lbn.to_string(), z.lbns.to_string()]);
    }
    s.push_str(&t.render());
    let mut t = Table::new(["seek distance (cyl)", "ms"]);
    for (dist, ms) in &d.seek_curve_ms {
        t.row([dist.to_string(), format!("{ms:.3}")]);
    }
    s.push_str(&t.render());
    out!("{s}");
    Ok(())
}

pub fn disk_import(path: &Path) -> CmdResult {
    let spec = freeblock_disk::disksim::import(path)?;
    out!("{}", spec.to_toml_string());
    Ok(())
}
