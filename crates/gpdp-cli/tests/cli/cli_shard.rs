//! `--shard I/N` and `gpdp merge`: the N shards of `mia sweep` and
//! `excursion 1d`, run in sequence, merge into a folder byte-identical to the
//! unsharded run; missing, duplicate and mismatched shards are refused.
//! (The same on a real Slurm array: scripts/slurm/ci.sh, run by .ci/run.)

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn gpdp(args: &[String]) -> std::process::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_gpdp")).args(args).output().unwrap();
    assert!(o.status.success(), "gpdp {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn refused(args: &[String]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_gpdp")).args(args).output().unwrap();
    assert!(!o.status.success(), "gpdp {args:?} should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Every file of a folder (relative name → bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.insert(e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap());
    }
    out
}

/// Runs `study` unsharded and as `n` shards (in sequence, merged in a
/// shuffled order) and asserts the two folders are byte-identical.
fn sharded_equals_unsharded(study: &[&str], flags: &[&str], n: usize) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let base: Vec<String> = strings(study).into_iter().chain(strings(flags)).collect();
    let full = t.path().join("full");
    gpdp(&[base.clone(), strings(&["--out", full.to_str().unwrap()])].concat());
    let mut shards = Vec::new();
    for i in 0..n {
        let d = t.path().join(format!("shard-{i}"));
        gpdp(&[base.clone(), strings(&["--out", d.to_str().unwrap(), "--shard", &format!("{i}/{n}")])].concat());
        shards.push(d.display().to_string());
    }
    shards.reverse();
    let merged = t.path().join("merged");
    gpdp(&[strings(&["merge", "--out", merged.to_str().unwrap()]), shards].concat());
    let (a, b) = (files(&full), files(&merged));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a.len() >= 3, "{:?}", a.keys());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{} differs between the unsharded and the merged run", name);
    }
    t
}

const MIA: [&str; 13] = [
    "--ridge",
    "0.5,1,2",
    "--scale",
    "0.5,1",
    "--draws",
    "1,2",
    "--repeats",
    "2",
    "--shadow",
    "100",
    "--eval",
    "100",
    "--n",
];

#[test]
fn merged_mia_sweep_shards_equal_the_unsharded_sweep() {
    let flags: Vec<&str> = MIA.iter().copied().chain(["10"]).collect();
    let t = sharded_equals_unsharded(&["mia", "sweep"], &flags, 4);
    let dir = |i: usize| t.path().join(format!("shard-{i}")).display().to_string();
    let out = t.path().join("again").display().to_string();
    // Missing, duplicate and mismatched shards are refused.
    let e = refused(&strings(&["merge", "--out", &out, &dir(0), &dir(1), &dir(3)]));
    assert!(e.contains("missing shard(s) 2/4"), "{e}");
    let e = refused(&strings(&["merge", "--out", &out, &dir(0), &dir(1), &dir(2), &dir(2), &dir(3)]));
    assert!(e.contains("given twice"), "{e}");
    let other = t.path().join("other");
    let mut args: Vec<String> = strings(&["mia", "sweep"]);
    args.extend(strings(&flags));
    args.extend(strings(&["--seed", "9", "--out", other.to_str().unwrap(), "--shard", "2/4"]));
    gpdp(&args);
    let e = refused(&strings(&["merge", "--out", &out, &dir(0), &dir(1), other.to_str().unwrap(), &dir(3)]));
    assert!(e.contains("not shards of one run"), "{e}");
    // The shard records the study's typed settings: the refusal names the setting.
    assert!(e.contains("has setting mia_sweep.seed = 9, where the first has 0"), "{e}");
    let e = refused(&strings(&["merge", "--out", &out, t.path().join("full").to_str().unwrap()]));
    assert!(e.contains("not a shard folder"), "{e}");
    let e = refused(&strings(&["mia", "sweep", "--shard", "4/4", "--out", &out]));
    assert!(e.contains("0 ≤ I < N"), "{e}");
    assert!(!Path::new(&out).exists(), "nothing is written on refusal");
}

#[test]
fn merged_excursion_1d_shards_equal_the_unsharded_study() {
    let flags = [
        "--noise",
        "0.3,0.5",
        "--n",
        "20,30",
        "--pairs",
        "20",
        "--validation-pairs",
        "10",
        "--draws-per-pair",
        "5",
        "--mesh-points",
        "100",
        "--lengthscales",
        "0.2,0.5",
        "--ridges",
        "0.5,2,5",
        "--scales",
        "0,0.1,1",
        "--rounds",
        "1",
        "--private-rounds",
        "1",
    ];
    // 4 studies in 3 shards (one shard holds two).
    sharded_equals_unsharded(&["excursion", "1d"], &flags, 3);
}

#[test]
fn merged_excursion_2d_shards_equal_the_unsharded_study() {
    let flags = [
        "--noise",
        "0.3,0.5",
        "--n",
        "60",
        "--search-worlds",
        "3",
        "--validation-worlds",
        "3",
        "--eval-worlds",
        "4",
        "--eval-grid",
        "16",
        "--search-grid",
        "12",
        "--path-grid",
        "12",
        "--paths-per-world",
        "4",
        "--rounds",
        "1",
    ];
    sharded_equals_unsharded(&["excursion", "2d"], &flags, 2);
}

/// The envelope of a shard file of format `gpdp-shard/2` (CBOR by hand:
/// a map of "format", "sha256" and "payload"; the format is checked before
/// the checksum, so the payload may be empty).
fn format2_envelope() -> Vec<u8> {
    let text = |t: &str| [&[0x60 + t.len() as u8][..], t.as_bytes()].concat();
    let mut b = vec![0xa3];
    b.extend(text("format"));
    b.extend(text("gpdp-shard/2"));
    b.extend(text("sha256"));
    b.extend([0x58, 32]);
    b.extend([0u8; 32]);
    b.extend(text("payload"));
    b.push(0x40);
    b
}

#[test]
fn a_shard_of_format_2_is_refused_as_written_by_an_older_gpdp() {
    let t = tempfile::tempdir().unwrap();
    let old = t.path().join("old-shard");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("shard.cbor"), format2_envelope()).unwrap();
    let out = t.path().join("merged");
    let e = refused(&strings(&["merge", "--out", out.to_str().unwrap(), old.to_str().unwrap()]));
    let file = old.join("shard.cbor").display().to_string();
    assert!(e.contains(&format!("{file}: a shard file of format \"gpdp-shard/2\", written by an older gpdp")), "{e}");
    assert!(e.contains("re-run the study's shards with this gpdp"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(!out.exists(), "nothing is written on refusal");
}

/// A change made to a shard file.
type Edit = Box<dyn Fn(&mut Vec<u8>)>;

/// A copy of shard folder `from` as `to` with its shard file changed by `edit`.
fn corrupt_copy(from: &Path, to: &Path, edit: impl Fn(&mut Vec<u8>)) {
    std::fs::create_dir_all(to).unwrap();
    for (name, mut bytes) in files(from) {
        if name == "shard.cbor" {
            edit(&mut bytes);
        }
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

#[test]
fn corrupted_shard_files_are_refused_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let flags: Vec<&str> = MIA.iter().copied().chain(["10"]).collect();
    let mut shards = Vec::new();
    for i in 0..2 {
        let d = t.path().join(format!("shard-{i}"));
        let mut args = strings(&["mia", "sweep"]);
        args.extend(strings(&flags));
        args.extend(strings(&["--out", d.to_str().unwrap(), "--shard", &format!("{i}/2")]));
        gpdp(&args);
        shards.push(d);
    }
    let honest = t.path().join("honest");
    gpdp(&strings(&[
        "merge",
        "--out",
        honest.to_str().unwrap(),
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
    ]));
    let bytes = std::fs::read(shards[1].join("shard.cbor")).unwrap();
    let len = bytes.len();
    // The least significant mantissa bit of the last double (CBOR 0xfb + 8
    // bytes, big-endian): a change of one ulp, which used to merge silently.
    let value = (0..len - 8).rev().find(|&i| bytes[i] == 0xfb).expect("a double in the shard") + 8;
    let mut cases: Vec<(String, Edit)> = Vec::new();
    for (pos, bit) in [(0, 0), (1, 3), (len / 3, 7), (len / 2, 0), (2 * len / 3, 5), (value, 0), (len - 1, 1)] {
        cases.push((
            format!("bit {bit} of byte {pos} of {len} flipped"),
            Box::new(move |b: &mut Vec<u8>| b[pos] ^= 1 << bit),
        ));
    }
    for extra in ["\n", "garbage", "\u{0}"] {
        cases.push((
            format!("{extra:?} appended"),
            Box::new(move |b: &mut Vec<u8>| b.extend_from_slice(extra.as_bytes())),
        ));
    }
    cases.push((
        "truncated by one byte".into(),
        Box::new(|b: &mut Vec<u8>| {
            b.pop();
        }),
    ));
    for (k, (what, edit)) in cases.iter().enumerate() {
        let bad = t.path().join(format!("bad-{k}"));
        corrupt_copy(&shards[1], &bad, edit);
        let out = t.path().join(format!("out-{k}"));
        let e = refused(&strings(&[
            "merge",
            "--out",
            out.to_str().unwrap(),
            shards[0].to_str().unwrap(),
            bad.to_str().unwrap(),
        ]));
        let file = bad.join("shard.cbor").display().to_string();
        assert!(e.contains(&file), "{what}: the message names {file}: {e}");
        assert!(!out.exists(), "{what}: nothing is written on refusal");
        if k == 5 {
            assert!(e.contains("checksum mismatch"), "{what}: {e}");
        }
        if what.contains("appended") {
            assert!(e.contains("trailing byte(s)"), "{what}: {e}");
        }
    }
}
