//! `[write_cache]` in a TOML spec: read as written, and every bad value an error naming its field.

use freeblock_disk::{library, DiskSpec, WriteCacheMode};

/// The `test` disk (no DiskSim buffer) with `table` appended as its `[write_cache]`.
fn with(table: &str) -> Result<DiskSpec, String> {
    let text = format!("{}\n[write_cache]\n{table}\n", library::toml_text("test").unwrap());
    DiskSpec::from_toml_str(&text, "my.toml").map_err(|e| e.to_string())
}

#[test]
fn a_write_cache_reads_as_written() {
    let s = with("size_mib = 64\nmode = \"write_back\"\nflush_overhead_ms = 1.5\ndestage_window = 8").unwrap();
    let w = s.write_cache.unwrap();
    assert_eq!((w.mode, w.capacity_sectors(512), w.flush_overhead_ms, w.destage_window), (WriteCacheMode::WriteBack, 131_072, 1.5, Some(8)));
    assert_eq!(with("size_mib = 1").unwrap().write_cache.unwrap().mode, WriteCacheMode::WriteThrough, "write-through unless asked");
    // Written back out and read again, the same.
    let again = DiskSpec::from_toml_str(&toml::to_string(&s).unwrap(), "again").unwrap();
    assert_eq!(again.write_cache, s.write_cache);
    // The media model drops write-back.
    assert_eq!(s.without_cache().write_cache.unwrap().mode, WriteCacheMode::WriteThrough);
}

#[test]
fn bad_write_caches_name_their_field() {
    for (table, field, says) in [
        ("size_mib = 0.0001", "write_cache.size_mib", "smaller than one sector"),
        ("size_mib = 0", "write_cache.size_mib", "smaller than one sector"),
        ("size_mib = -4", "write_cache.size_mib", "smaller than one sector"),
        ("size_mib = nan", "write_cache.size_mib", "MiB"),
        ("size_mib = 1e12", "write_cache.size_mib", "at most"),
        ("size_mib = 8\nflush_overhead_ms = -1", "write_cache.flush_overhead_ms", "time"),
        ("size_mib = 8\ndestage_window = 0", "write_cache.destage_window", "at least 1"),
        ("size_mib = 8\nmode = \"write_around\"", "write_around", ""),
        ("size_mib = 8\nsize_mb = 8", "size_mb", ""),
        ("mode = \"write_back\"", "size_mib", ""),
    ] {
        let e = with(table).unwrap_err();
        assert!(e.contains(field) && e.contains(says) && e.starts_with("my.toml"), "{table}: {e}");
    }
}

#[test]
fn a_write_back_cache_over_the_disksim_buffer_is_refused() {
    // st2000dm006 has a DiskSim buffer ([cache] enabled): write-back on top of it is refused,
    // its write-through table is accepted as it ships.
    let text = library::toml_text("st2000dm006").unwrap().replace("mode = \"write_through\"", "mode = \"write_back\"");
    let e = DiskSpec::from_toml_str(&text, "my.toml").unwrap_err().to_string();
    assert!(e.contains("write_cache.mode") && e.contains("cache.enabled"), "{e}");
    let spec = library::get("st2000dm006").unwrap();
    assert!(spec.clone().with_write_cache_mode(WriteCacheMode::WriteBack).unwrap_err().to_string().contains("write_cache.mode"));
    assert!(spec.without_cache().with_write_cache_mode(WriteCacheMode::WriteBack).is_ok());
    // A drive without the table has no size to switch on.
    let e = library::get("atlas10k").unwrap().with_write_cache_mode(WriteCacheMode::WriteBack).unwrap_err().to_string();
    assert!(e.contains("write_cache") && e.contains("size_mib"), "{e}");
}
