//! The real-data readers on the synthetic fixtures in the real formats
//! (`tests/data/realdata/`, written by `scripts/make_realdata_fixtures.py`,
//! which also writes the counts a correct reader must report).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use gpdp_experiments::realdata::hexbin::HexbinSpec;
use gpdp_experiments::realdata::join::join;
use gpdp_experiments::realdata::pipeline::YearData;
use gpdp_experiments::realdata::postcodes::{PostcodeColumns, PostcodeLookup};
use gpdp_experiments::realdata::ppd::{PpdCounts, PpdFilter, PpdRecord, read_ppd};
use gpdp_experiments::realdata::response::ResponseTransform;
use gpdp_experiments::{Error, Result};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/realdata")
}

fn expected() -> HashMap<String, String> {
    std::fs::read_to_string(dir().join("expected-counts.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let (k, v) = l.split_once(',').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn num(e: &HashMap<String, String>, k: &str) -> u64 {
    e[k].parse().unwrap_or_else(|_| panic!("{k}"))
}

fn read(name: &str, filter: &PpdFilter, skip: bool) -> Result<(PpdCounts, Vec<PpdRecord>)> {
    let f = BufReader::new(File::open(dir().join(name)).unwrap());
    let mut kept = Vec::new();
    let c = read_ppd(f, name, filter, skip, |r| kept.push(r))?;
    Ok((c, kept))
}

fn lookup(wanted: Option<&HashSet<String>>) -> PostcodeLookup {
    let f = BufReader::new(File::open(dir().join("postcodes-sample.csv")).unwrap());
    PostcodeLookup::read(f, "postcodes-sample.csv", &PostcodeColumns::default(), wanted, false).unwrap()
}

#[test]
fn ppd_filters_and_counts_match_the_generator() {
    let e = expected();
    for year in [2017, 2018] {
        let filter = PpdFilter { years: Some(BTreeSet::from([year])), ..PpdFilter::default() };
        let (c, kept) = read(&format!("pp-{year}-sample.csv"), &filter, false).unwrap();
        let k = |s: &str| num(&e, &format!("ppd_{year}_{s}"));
        assert_eq!((c.rows, c.kept, c.malformed), (k("rows"), k("kept"), k("malformed")), "{year}");
        let r = c.rejected;
        let got = [
            r.year,
            r.county,
            r.category,
            r.record_status,
            r.property_type,
            r.old_new,
            r.duration,
            r.price,
            r.postcode,
        ];
        let want = [
            "year",
            "county",
            "category",
            "record_status",
            "property_type",
            "old_new",
            "duration",
            "price",
            "postcode",
        ]
        .map(|s| k(&format!("rejected_{s}")));
        assert_eq!(got, want, "{year}");
        assert_eq!(c.rows, c.kept + r.total() + c.malformed);
        assert_eq!(kept.len() as u64, c.kept);
        assert!(kept.iter().all(|s| s.year == year && s.price > 0 && s.postcode.starts_with("ZZ")));
        assert!(kept.iter().all(|s| !s.postcode.contains(' ') && s.postcode == s.postcode.to_uppercase()));
    }
    // Without the year filter the other year's rows are kept too.
    let (c, _) = read("pp-2017-sample.csv", &PpdFilter::default(), false).unwrap();
    assert_eq!(c.kept, num(&e, "ppd_2017_kept") + num(&e, "ppd_2017_rejected_year"));
}

#[test]
fn malformed_lines_are_errors_with_line_numbers_or_counted() {
    let e = expected();
    let err = read("pp-malformed.csv", &PpdFilter::default(), false).unwrap_err();
    match &err {
        Error::Malformed { file, line, field, .. } => {
            assert_eq!(
                (file.as_str(), *line, field.as_str()),
                ("pp-malformed.csv", num(&e, "malformed_first_line"), "record")
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        err.to_string(),
        "pp-malformed.csv line 3, field \"record\": has 15 fields; Price Paid Data rows have 16"
    );
    let (c, kept) = read("pp-malformed.csv", &PpdFilter::default(), true).unwrap();
    assert_eq!(
        (c.rows, c.malformed, c.kept),
        (num(&e, "malformed_rows"), num(&e, "malformed_malformed"), num(&e, "malformed_kept"))
    );
    assert_eq!(kept.len(), 4);
}

#[test]
fn lookup_detection_duplicates_and_join_counts() {
    let e = expected();
    let l = lookup(None);
    assert_eq!(l.columns, ["pcds".to_string(), "oseast1m".into(), "osnrth1m".into()]);
    assert_eq!(l.counts.rows, num(&e, "lookup_rows"));
    assert_eq!(l.counts.kept, num(&e, "lookup_kept"));
    assert_eq!(l.counts.without_coordinates, num(&e, "lookup_without_coordinates"));
    assert_eq!(l.counts.duplicates, num(&e, "lookup_duplicates"));
    let dup = gpdp_experiments::realdata::postcodes::normalise_postcode(&e["lookup_first_duplicate_postcode"]);
    let first = [num(&e, "lookup_first_duplicate_easting") as f64, num(&e, "lookup_first_duplicate_northing") as f64];
    assert_eq!(l.get(&dup), Some(first), "the first row of a duplicated postcode wins");

    for year in [2017, 2018] {
        let filter = PpdFilter { years: Some(BTreeSet::from([year])), ..PpdFilter::default() };
        let (_, sales) = read(&format!("pp-{year}-sample.csv"), &filter, false).unwrap();
        let wanted: HashSet<String> = sales.iter().map(|s| s.postcode.clone()).collect();
        let lw = lookup(Some(&wanted));
        assert!(lw.len() <= wanted.len() && lw.counts.not_needed > 0);
        let (pts, jc) = join(&sales, &lw);
        assert_eq!(jc.matched, num(&e, &format!("ppd_{year}_join_matched")));
        assert_eq!(jc.unmatched, num(&e, &format!("ppd_{year}_join_unmatched")));
        assert_eq!(pts.len() as u64, jc.matched);
        // Restricting the lookup to the wanted postcodes changes nothing.
        assert_eq!(join(&sales, &l).1, jc);
        // London-like British National Grid coordinates, log prices.
        assert!(pts.iter().all(|p| (503_000.0..=561_000.0).contains(&p[0]) && (155_000.0..=201_000.0).contains(&p[1])));
        assert!(pts.iter().all(|p| (11.0..16.0).contains(&p[2])));

        // Binned with the study's response: a non-trivial excursion set.
        let spec = HexbinSpec { size: 10, min_count: if year == 2017 { 1 } else { 3 }, ..HexbinSpec::default() };
        let d = YearData::build(year, &pts, &spec, &ResponseTransform::default()).unwrap();
        let above = d.labels.iter().filter(|s| **s).count();
        assert!(d.n() >= 20 && above >= 3 && above + 3 <= d.n(), "{year}: {} hexagons, {above} above t", d.n());
        assert!(d.hexbin.cells.iter().all(|c| c.count >= spec.min_count));
        assert_eq!(d.hexbin.points_binned + d.hexbin.points_outside, pts.len());
    }
}
