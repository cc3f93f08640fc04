//! `freeblock run FILE`: one experiment, with the common fields overridable from the command
//! line, a text summary (head usage, times, throughput, freeblock figures), and files of the run.
//!
//! Per-request records are streamed to their files as requests complete ([`RecordFiles`]), never
//! held in memory: `--csv` and `--out` cost the same memory on a run of a billion requests as on
//! a thousand.
//!
//! ```text
//!  experiment.toml ─► overrides (--scheduler --seed --mpl --count --disk --max-requests)
//!        │
//!        ▼
//!   Simulation ──record sink──► --csv FILE            (records, CSV)
//!        │                  └─► --out DIR/records.csv, records.parquet
//!        ▼
//!   RunReport ──► text or --json on stdout; --out DIR/report.json, head-usage.svg,
//!                 response.svg, freeblock.svg (with a [freeblock] table)
//! ```

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use clap::Args;
use freeblock::experiment::Experiment;
use freeblock::report::{Record, RecordKind, RecordValue, RunReport, RECORD_COLUMNS};
use freeblock::sched::SchedulerSpec;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type as ParquetType;

use freeblock_repro::plot::{lines, percentiles, stacked_bars, Line, StackedBar};
use freeblock_repro::table::{pct, Table};

use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment file (TOML).
    pub experiment: PathBuf,
    /// Override the scheduler (fcfs, clook, sstf, sptf, sptf-swN).
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Override the seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override the multiprogramming level (closed workloads: request streams).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub mpl: Option<u32>,
    /// Override the number of foreground requests (a synthetic workload's `count`, a trace's
    /// `limit`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Override the disk: a built-in name, a `.toml` spec or a DiskSim `.diskspecs` file
    /// (relative to the current folder).
    #[arg(long)]
    pub disk: Option<String>,
    /// Override `[sim] max_requests`: stop after this many requests.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_requests: Option<u64>,
    /// Write per-request records as CSV (streamed as the run goes).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Folder for the run's files: records.csv, records.parquet, report.json and SVG plots.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Run with the experiment's `[freeblock]` tasks (`on`, the default), without them (`off`), or
    /// `both`: the run without them first, then with, and what freeblock cost the foreground.
    #[arg(long, value_enum, default_value_t = FreeblockSwitch::On)]
    pub freeblock: FreeblockSwitch,
}

/// `--freeblock`: the experiment's background tasks on, off, or both compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FreeblockSwitch {
    On,
    Off,
    Both,
}

/// The experiment file with the command line's overrides applied.
fn experiment(a: &RunArgs) -> Result<Experiment, Box<dyn std::error::Error>> {
    let mut e = Experiment::from_file(&a.experiment)?;
    if let Some(s) = &a.scheduler {
        e.sim.scheduler = SchedulerSpec::parse(s).map_err(|err| format!("--scheduler: {err}"))?;
    }
    if let Some(seed) = a.seed {
        e.seed = seed;
    }
    if let Some(mpl) = a.mpl {
        e.sim.mpl = mpl;
    }
    if let Some(count) = a.count {
        e.set_count(count)?;
    }
    if let Some(disk) = &a.disk {
        e.disk = e.disk.replaced_by(disk, &std::env::current_dir()?);
    }
    if let Some(n) = a.max_requests {
        e.sim.max_requests = n;
    }
    Ok(e)
}

pub fn run(a: &RunArgs) -> CmdResult {
    let mut e = experiment(a)?;
    // Records go straight to their files (below); the report keeps none, whatever the file says.
    e.sim.keep_records = false;
    if a.freeblock != FreeblockSwitch::On && e.freeblock.is_none() {
        return Err(format!("--freeblock {}: {} has no [freeblock] table to switch", if a.freeblock == FreeblockSwitch::Off { "off" } else { "both" }, a.experiment.display()).into());
    }
    if a.freeblock == FreeblockSwitch::Off {
        e.freeblock = None;
    }
    // `both`: the same experiment without its tasks first, for the comparison.
    let without = if a.freeblock == FreeblockSwitch::Both { Some(Experiment { freeblock: None, ..e.clone() }.build(false)?.run(None)?) } else { None };
    let files = RecordFiles::create(a.csv.as_deref(), a.out.as_deref())?;
    // The bar's length: the fewer of the workload's count and `max_requests`, whichever are known.
    let total = [e.workload.count(), (e.sim.max_requests > 0).then_some(e.sim.max_requests)].into_iter().flatten().min().unwrap_or(0);
    let pb = super::args::progress_bar(total, !a.quiet && !a.json);
    let mut tick = |n: u64| {
        if let Some(pb) = &pb {
            pb.set_position(n);
        }
    };
    let mut simulation = e.build(false)?;
    // The engine owns its sink for the whole run: the files are shared with it and taken back
    // after the run.
    let files = Arc::new(Mutex::new(files));
    if !lock(&files).is_empty() {
        let sink_files = Arc::clone(&files);
        simulation = simulation.with_record_sink(Box::new(move |r: &Record| lock(&sink_files).write(r)));
    }
    let report = simulation.run(Some(&mut tick));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let report = report?;
    let files = Arc::try_unwrap(files).map_err(|_| "the record files are still in use after the run")?;
    let written = files.into_inner().unwrap_or_else(PoisonError::into_inner).finish()?;
    let mut outputs = written;
    if let Some(dir) = &a.out {
        outputs.extend(write_report_files(&report, dir)?);
    }
    if a.json {
        match &without {
            Some(w) => outln!("{}", serde_json::to_string_pretty(&serde_json::json!({ "without_freeblock": w, "with_freeblock": report }))?),
            None => outln!("{}", serde_json::to_string_pretty(&report)?),
        }
        return Ok(());
    }
    if let Some(w) = &without {
        outln!("== without [freeblock]");
        out!("{}", report_text(w));
        outln!("== with [freeblock]");
    }
    out!("{}", report_text(&report));
    if let Some(w) = &without {
        out!("{}", cost_text(w, &report));
    }
    for path in outputs {
        outln!("wrote {}", path.display());
    }
    Ok(())
}

/// What the background tasks cost the foreground: its response and throughput without and with.
fn cost_text(without: &RunReport, with: &RunReport) -> String {
    let change = |a: f64, b: f64| if a > 0.0 { freeblock_repro::table::signed_pct((b - a) / a, 2) } else { "-".into() };
    let mut t = Table::new(["foreground", "without", "with", "change"]);
    for (name, a, b) in [
        ("response mean, ms", without.response.mean_ms, with.response.mean_ms),
        ("response p99, ms", without.response.p99_ms, with.response.p99_ms),
        ("throughput, requests/s", without.throughput_per_s, with.throughput_per_s),
    ] {
        t.row([name.to_string(), format!("{a:.3}"), format!("{b:.3}"), change(a, b)]);
    }
    let free = with.freeblock.as_ref().map_or(0.0, |f| f.free_mb_s);
    format!("What [freeblock] cost the foreground ({free:.2} MB/s of background work):\n{}", t.render())
}

/// The run's text summary: what ran, head usage, times, throughput, and the freeblock and layout
/// figures when those were on.
pub fn report_text(r: &RunReport) -> String {
    let f = r.head_usage_fractions;
    let mut s = format!("{} requests on {} under {}, {:.3} s simulated\n", r.requests, r.disk, r.scheduler, r.duration_ns as f64 / 1e9);
    let mut t = Table::new(["head usage", "seek", "rot. latency", "transfer", "overhead", "idle"]);
    t.row(["share".to_string(), pct(f.seek), pct(f.rotational_latency), pct(f.transfer), pct(f.overhead), pct(f.idle)]);
    s.push_str(&t.render());
    let mut t = Table::new(["time (ms)", "mean", "p50", "p90", "p99", "max"]);
    for (name, x) in [("response", &r.response), ("access", &r.access), ("read response", &r.read_response), ("write response", &r.write_response)] {
        t.row([name.to_string(), format!("{:.3}", x.mean_ms), format!("{:.3}", x.p50_ms), format!("{:.3}", x.p90_ms), format!("{:.3}", x.p99_ms), format!("{:.3}", x.max_ms)]);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "throughput: {:.1} requests/s (simulated); {} served from the cache", r.throughput_per_s, r.cache_hits);
    if let Some(e) = &r.energy {
        let _ = writeln!(
            s,
            "energy: {:.1} mJ per access (seek {:.1}, rotation and overhead {:.1}, transfer {:.1}) over {} accesses; total {:.3} J ({:.3} J in accesses + {:.3} J idle), mean {:.2} W",
            e.per_access_mj, e.seek_per_access_mj, e.rotation_per_access_mj, e.transfer_per_access_mj, e.accesses, e.total_j, e.access_j, e.idle_j, e.mean_power_w
        );
    }
    if let Some(fb) = &r.freeblock {
        let passes: usize = fb.tasks.iter().map(|t| t.passes.len()).sum();
        let _ = writeln!(
            s,
            "freeblock ({} planner): free {:.2} MB/s (background {:.2} + piggybacked {:.2}) of a potential {:.2} MB/s, efficiency {}; {} complete scan passes; idle-time {:.2} MB/s; {} foreground requests delayed",
            fb.planner,
            fb.free_mb_s,
            fb.free_background_mb_s,
            fb.piggyback_mb_s,
            fb.potential_mb_s,
            pct(fb.efficiency),
            passes,
            fb.idle_mb_s,
            fb.delayed_foreground
        );
        for t in &fb.tasks {
            let first = t.passes.first().map_or(String::new(), |p| format!(", first pass in {:.1} s", (p.end_ns - p.start_ns) as f64 / 1e9));
            let _ = writeln!(s, "  task {}: {} blocks of {} bytes delivered, {} passes{first}", t.name, t.blocks_delivered, t.block_bytes, t.passes.len());
        }
    }
    if let Some(l) = &r.layout {
        // The policy's own scalar figures, in the order it reports them.
        let figures: Vec<String> = l.details.as_object().map_or_else(Vec::new, |o| {
            o.iter().filter(|(_, v)| v.is_number() || v.is_string()).map(|(k, v)| format!("{k} {}", v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect()
        });
        let _ = writeln!(s, "layout: {}, {} I/Os of its own; {}", l.policy, l.policy_ios, figures.join(", "));
    }
    s
}

/// `--out DIR`'s files besides the records: the report as JSON and the plots.
fn write_report_files(r: &RunReport, dir: &Path) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let json = dir.join("report.json");
    std::fs::write(&json, serde_json::to_string_pretty(r)?).map_err(|e| format!("{}: {e}", json.display()))?;
    written.push(json);

    let f = r.head_usage_fractions;
    let head = dir.join("head-usage.svg");
    stacked_bars(
        &head,
        &format!("Head usage: {} under {}", r.disk, r.scheduler),
        "% of disk head time",
        &["seek", "rotational latency", "transfer", "overhead", "idle"],
        &[StackedBar::new(r.scheduler.clone(), vec![f.seek, f.rotational_latency, f.transfer, f.overhead, f.idle])],
    )?;
    written.push(head);

    // The percentiles the report keeps (records may be too many to hold), one line per kind.
    let quantiles = |x: &freeblock::report::Summary| vec![(50.0, x.p50_ms), (90.0, x.p90_ms), (95.0, x.p95_ms), (99.0, x.p99_ms), (100.0, x.max_ms)];
    let series: Vec<Line> = [("response", &r.response), ("access", &r.access), ("read response", &r.read_response), ("write response", &r.write_response)]
        .into_iter()
        .filter(|(_, x)| x.count > 0)
        .map(|(label, x)| Line { label: label.into(), points: quantiles(x) })
        .collect();
    let times = dir.join("response.svg");
    percentiles(&times, &format!("Response and access times: {} under {}", r.disk, r.scheduler), "ms (log scale)", &series, None)?;
    written.push(times);

    if let Some(fb) = r.freeblock.as_ref().filter(|fb| !fb.timeline.is_empty()) {
        let series = freeblock_timeline(fb);
        let path = dir.join("freeblock.svg");
        lines(&path, &format!("Freeblock scheduling over the run ({} planner)", fb.planner), "simulated time (s)", "MB/s", &series, &[])?;
        written.push(path);
    }
    Ok(written)
}

/// Free and potential bandwidth per timeline bucket, at the bucket's middle.
fn freeblock_timeline(fb: &freeblock::freeblock::FreeblockReport) -> Vec<Line> {
    let rows = &fb.timeline;
    let ends: Vec<f64> = rows.iter().skip(1).map(|b| b.start_s).chain(std::iter::once(fb.duration_s)).collect();
    let per_bucket = |bytes: &dyn Fn(&freeblock::freeblock::TimelineRow) -> f64| -> Vec<(f64, f64)> {
        rows.iter()
            .zip(&ends)
            .filter(|(b, end)| **end > b.start_s)
            .map(|(b, end)| ((b.start_s + end) / 2.0, bytes(b) / 1e6 / (end - b.start_s)))
            .collect()
    };
    vec![
        Line { label: "free (background + piggybacked)".into(), points: per_bucket(&|b| (b.accounts.free_bytes + b.accounts.piggyback_bytes) as f64) },
        Line { label: "potential (rotational latency)".into(), points: per_bucket(&|b| b.accounts.potential_bytes) },
    ]
}

// ------------------------------------------------------------------------------ record files

/// The record files, also when a panic elsewhere poisoned the lock (they hold no invariant a
/// panic could break).
fn lock(files: &Mutex<RecordFiles>) -> MutexGuard<'_, RecordFiles> {
    files.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where per-request records are written as the run goes: a CSV file, a Parquet file, or both.
struct RecordFiles {
    csv: Vec<(PathBuf, BufWriter<File>)>,
    parquet: Option<ParquetRecords>,
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> freeblock::Error {
    freeblock::Error::Io { path: path.display().to_string(), message: e.to_string() }
}

impl RecordFiles {
    /// `--csv PATH` and `--out DIR` (records.csv and records.parquet in it).
    fn create(csv: Option<&Path>, out: Option<&Path>) -> Result<Self, freeblock::Error> {
        let mut files = Self { csv: Vec::new(), parquet: None };
        if let Some(dir) = out {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        for path in csv.map(Path::to_path_buf).into_iter().chain(out.map(|d| d.join("records.csv"))) {
            let file = File::create(&path).map_err(|e| io_error(&path, e))?;
            let mut w = BufWriter::new(file);
            w.write_all(Record::csv_header().as_bytes()).map_err(|e| io_error(&path, e))?;
            files.csv.push((path, w));
        }
        if let Some(dir) = out {
            files.parquet = Some(ParquetRecords::create(dir.join("records.parquet"))?);
        }
        Ok(files)
    }

    fn is_empty(&self) -> bool {
        self.csv.is_empty() && self.parquet.is_none()
    }

    fn write(&mut self, r: &Record) -> freeblock::Result<()> {
        for (path, w) in &mut self.csv {
            r.write_csv_row(w).map_err(|e| io_error(path, e))?;
        }
        if let Some(p) = &mut self.parquet {
            p.push(r)?;
        }
        Ok(())
    }

    /// Flushes and closes every file; returns their paths.
    fn finish(self) -> Result<Vec<PathBuf>, freeblock::Error> {
        let mut written = Vec::new();
        for (path, mut w) in self.csv {
            w.flush().map_err(|e| io_error(&path, e))?;
            written.push(path);
        }
        if let Some(p) = self.parquet {
            written.push(p.finish()?);
        }
        Ok(written)
    }
}

/// Rows per Parquet row group: the records buffered in memory at most.
const ROW_GROUP: usize = 65_536;

/// One column's buffered values, typed as Parquet stores them.
enum ColumnValues {
    Int(Vec<i64>),
    Double(Vec<f64>),
    /// Values of the rows that have one, and a definition level per row (1 = present).
    OptionalDouble(Vec<f64>, Vec<i16>),
    Bool(Vec<bool>),
    Text(Vec<ByteArray>),
}

/// Records written to a Parquet file a row group at a time, with the columns of
/// [`RECORD_COLUMNS`]: integers as INT64, times as DOUBLE (`measured_ms` OPTIONAL), `op` as a
/// UTF-8 string, `cache_hit` as BOOLEAN.
struct ParquetRecords {
    path: PathBuf,
    writer: SerializedFileWriter<File>,
    columns: Vec<ColumnValues>,
    rows: usize,
}

impl ParquetRecords {
    fn create(path: PathBuf) -> Result<Self, freeblock::Error> {
        use parquet::basic::{LogicalType, Repetition, Type as Physical};
        let fields = RECORD_COLUMNS
            .iter()
            .map(|c| {
                let (physical, repetition, logical) = match c.kind {
                    RecordKind::Int => (Physical::INT64, Repetition::REQUIRED, None),
                    RecordKind::Ms => (Physical::DOUBLE, Repetition::REQUIRED, None),
                    RecordKind::OptionalMs | RecordKind::OptionalMj => (Physical::DOUBLE, Repetition::OPTIONAL, None),
                    RecordKind::Bool => (Physical::BOOLEAN, Repetition::REQUIRED, None),
                    RecordKind::Text => (Physical::BYTE_ARRAY, Repetition::REQUIRED, Some(LogicalType::String)),
                };
                ParquetType::primitive_type_builder(c.name, physical).with_repetition(repetition).with_logical_type(logical).build().map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io_error(&path, e))?;
        let schema = ParquetType::group_type_builder("records").with_fields(fields).build().map_err(|e| io_error(&path, e))?;
        let file = File::create(&path).map_err(|e| io_error(&path, e))?;
        let writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(WriterProperties::builder().build())).map_err(|e| io_error(&path, e))?;
        let columns = RECORD_COLUMNS
            .iter()
            .map(|c| match c.kind {
                RecordKind::Int => ColumnValues::Int(Vec::new()),
                RecordKind::Ms => ColumnValues::Double(Vec::new()),
                RecordKind::OptionalMs | RecordKind::OptionalMj => ColumnValues::OptionalDouble(Vec::new(), Vec::new()),
                RecordKind::Bool => ColumnValues::Bool(Vec::new()),
                RecordKind::Text => ColumnValues::Text(Vec::new()),
            })
            .collect();
        Ok(Self { path, writer, columns, rows: 0 })
    }

    fn push(&mut self, r: &Record) -> freeblock::Result<()> {
        for (column, (value, spec)) in self.columns.iter_mut().zip(r.values().into_iter().zip(RECORD_COLUMNS)) {
            match (column, value) {
                (ColumnValues::Int(v), RecordValue::Int(x)) => {
                    v.push(i64::try_from(x).map_err(|_| io_error(&self.path, format!("{}: {x} does not fit a Parquet INT64", spec.name)))?);
                }
                (ColumnValues::Double(v), RecordValue::Ms(x)) => v.push(x),
                (ColumnValues::OptionalDouble(v, levels), RecordValue::Ms(x) | RecordValue::Mj(x)) => {
                    v.push(x);
                    levels.push(1);
                }
                (ColumnValues::OptionalDouble(_, levels), RecordValue::Missing) => levels.push(0),
                (ColumnValues::Bool(v), RecordValue::Bool(x)) => v.push(x),
                (ColumnValues::Text(v), RecordValue::Text(x)) => v.push(ByteArray::from(x)),
                (_, value) => return Err(io_error(&self.path, format!("{}: {value:?} does not match the column's kind {:?}", spec.name, spec.kind))),
            }
        }
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> freeblock::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e: parquet::errors::ParquetError| io_error(&path, e);
        let mut group = self.writer.next_row_group().map_err(err)?;
        for values in &mut self.columns {
            let mut column = group.next_column().map_err(err)?.ok_or_else(|| io_error(&path, "the schema has fewer columns than the records"))?;
            match values {
                ColumnValues::Int(v) => column.typed::<Int64Type>().write_batch(v, None, None).map(drop),
                ColumnValues::Double(v) => column.typed::<DoubleType>().write_batch(v, None, None).map(drop),
                ColumnValues::OptionalDouble(v, levels) => column.typed::<DoubleType>().write_batch(v, Some(levels), None).map(drop),
                ColumnValues::Bool(v) => column.typed::<BoolType>().write_batch(v, None, None).map(drop),
                ColumnValues::Text(v) => column.typed::<ByteArrayType>().write_batch(v, None, None).map(drop),
            }
            .map_err(err)?;
            column.close().map_err(err)?;
            match values {
                ColumnValues::Int(v) => v.clear(),
                ColumnValues::Double(v) => v.clear(),
                ColumnValues::OptionalDouble(v, levels) => {
                    v.clear();
                    levels.clear();
                }
                ColumnValues::Bool(v) => v.clear(),
                ColumnValues::Text(v) => v.clear(),
            }
        }
        group.close().map_err(err)?;
        self.rows = 0;
        Ok(())
    }

    fn finish(mut self) -> Result<PathBuf, freeblock::Error> {
        self.flush()?;
        let path = self.path.clone();
        self.writer.close().map_err(|e| io_error(&path, e))?;
        Ok(path)
    }
}
