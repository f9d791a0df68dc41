//! `gpdp hexbin`'s reader and binning: the named columns of a CSV file
//! (`gpdp::io::read_named_columns`, x, y and value) and `hexbin` on them
//! with a size, a minimum count, a layout and optionally a box taken from
//! the first input bytes. Any input gives cells or an error, never a panic;
//! the counts add up (binned + outside = points; the kept cells' counts plus
//! the dropped cells' points = binned), every kept cell has ≥ min_count
//! points, a finite centre and a finite median.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use gpdp_experiments::realdata::hexbin::{HexLayout, HexbinSpec, hexbin};
use libfuzzer_sys::fuzz_target;

/// This process's CSV file (rewritten for every input).
fn file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gpdp-fuzz-hexbin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("points.csv")
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Some((opts, csv)) = bytes.split_first_chunk::<4>() else { return };
    let path = file();
    std::fs::write(path, csv).unwrap();
    let Ok(rows) = gpdp::io::read_named_columns(path, &["x", "y", "value"]) else { return };
    let points: Vec<[f64; 3]> = rows.iter().map(|r| [r[0], r[1], r[2]]).collect();
    let size = u16::from_le_bytes([opts[0], opts[1]]) as usize % 2000;
    let min_count = (opts[2] % 5) as usize;
    let layout = if opts[3] & 1 == 1 { HexLayout::Matplotlib } else { HexLayout::Regular };
    // A box from the data's first point, when there is one and bit 1 asks.
    let bbox = (opts[3] & 2 == 2 && !points.is_empty()).then(|| {
        let [x, y, _] = points[0];
        let w = 1.0 + f64::from(opts[3] >> 2);
        [x - w, x + w, y - w, y + w]
    });
    let spec = HexbinSpec { size, min_count, bbox, layout };
    let Ok(h) = hexbin(&points, &spec) else { return };
    assert_eq!(h.points_binned + h.points_outside, points.len());
    let kept: usize = h.cells.iter().map(|c| c.count).sum();
    assert_eq!(kept + h.points_below_min_count, h.points_binned);
    for c in &h.cells {
        assert!(c.count >= min_count.max(1));
        assert!(c.x.is_finite() && c.y.is_finite() && c.median.is_finite(), "{c:?}");
    }
});
