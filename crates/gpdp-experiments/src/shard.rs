//! Sharding a study's work units across processes (e.g. the tasks of a
//! Slurm job array) and merging the shards.
//!
//! A study is a list of work units whose results depend only on the unit
//! (its parameters and its seed, derived from the master seed and the
//! unit's own index), never on which other units run in the same process.
//! Shard I of N owns the units u with u mod N = I (round robin, so shards
//! get similar mixes of small and large units). Each shard writes a
//! [`ShardFile`]: the study's typed settings (`crate::study::Study`, every
//! setting that determines the results — never the command line that gave
//! them), the gpdp version, N, I and its units' results, with a SHA-256
//! checksum of all of it ([`to_bytes`]), so that a corrupted file is refused
//! rather than merged. [`merge`] checks that the files are exactly the N
//! shards of one run and returns every unit's result in unit order — from
//! which the study writes the same outputs as the unsharded run, byte for
//! byte (`crate::study::merge_files` does this per study).
//!
//! This module knows nothing of the studies: it is generic over the study's
//! settings `S` and the results `T`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use ciborium::Value;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Shard I of N (0 ≤ I < N), parsed from `I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// I, 0-based.
    pub index: usize,
    /// N ≥ 1.
    pub count: usize,
}

impl Shard {
    /// The whole run (shard 0 of 1).
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Whether unit `u` belongs to this shard.
    pub fn owns(&self, u: usize) -> bool {
        u % self.count == self.index
    }

    /// The units of `0..units` this shard owns, in order.
    pub fn units(&self, units: usize) -> Vec<usize> {
        (self.index..units).step_by(self.count).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = Error;
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            Error::Shard(format!(
                "--shard '{s}': expected I/N with 0 ≤ I < N, e.g. 0/4 (in a Slurm array: $SLURM_ARRAY_TASK_ID/N with N the full array's size — not $SLURM_ARRAY_TASK_COUNT, which is smaller when failed tasks are resubmitted; scripts/slurm/)"
            ))
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) =
            (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The format tag of shard files (and of their payload).
///
/// Version 2 added the checksum; version 3 records the study's typed
/// settings instead of its command-line arguments. A file of an older
/// version is refused with a message saying that an older gpdp wrote it and
/// the shard must be re-run (shards of different gpdp versions never merge
/// anyway).
pub const FORMAT: &str = "gpdp-shard/3";

/// The name of the shard file in a shard's output folder.
pub const SHARD_FILE: &str = "shard.cbor";

/// What one shard writes ([`SHARD_FILE`]; see [`to_bytes`] for the layout):
/// the study's settings `S` and the results `T` of its units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile<S, T> {
    /// [`FORMAT`].
    pub format: String,
    /// The gpdp version that ran it (shards of different versions are refused).
    pub gpdp_version: String,
    /// The study and every setting that determines its results.
    pub study: S,
    /// I.
    pub index: usize,
    /// N.
    pub count: usize,
    /// The number of work units of the whole run.
    pub units: usize,
    /// (unit, result) for every unit of this shard, in unit order.
    pub results: Vec<(usize, T)>,
}

impl<S, T> ShardFile<S, T> {
    /// The file of `shard`'s results of `study`.
    pub fn new(study: S, shard: Shard, units: usize, results: Vec<(usize, T)>) -> Self {
        ShardFile {
            format: FORMAT.into(),
            gpdp_version: env!("CARGO_PKG_VERSION").into(),
            study,
            index: shard.index,
            count: shard.count,
            units,
            results,
        }
    }
}

/// The envelope's keys, in the order they are written and required.
const KEYS: [&str; 3] = ["format", "sha256", "payload"];

/// The bytes of a shard file: one CBOR map
/// `{"format": FORMAT, "sha256": SHA-256(payload), "payload": payload}`
/// and nothing after it, where the payload is the CBOR encoding of `f`
/// (CBOR: every f64 round-trips exactly, including ±∞ and NaN, which JSON
/// cannot hold). The checksum makes any change of the payload — a flipped
/// bit in a value, a truncation — detectable by [`from_bytes`].
pub fn to_bytes<S: Serialize, T: Serialize>(f: &ShardFile<S, T>) -> Result<Vec<u8>> {
    let write_err = |e: ciborium::ser::Error<std::io::Error>| Error::Shard(format!("writing a shard file: {e}"));
    let mut payload = Vec::new();
    ciborium::into_writer(f, &mut payload).map_err(write_err)?;
    let digest = Sha256::digest(&payload).to_vec();
    let envelope = Value::Map(vec![
        (Value::Text(KEYS[0].into()), Value::Text(FORMAT.into())),
        (Value::Text(KEYS[1].into()), Value::Bytes(digest)),
        (Value::Text(KEYS[2].into()), Value::Bytes(payload)),
    ]);
    let mut out = Vec::new();
    ciborium::into_writer(&envelope, &mut out).map_err(write_err)?;
    Ok(out)
}

/// Lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decodes one CBOR item of type `T` that must span `bytes` exactly.
fn decode_exact<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8], what: &str) -> Result<T> {
    let mut rest = bytes;
    let v: T = ciborium::from_reader(&mut rest).map_err(|e| {
        Error::Shard(match what {
            "payload" => format!("{name}: not a gpdp shard file of this study (payload: {e})"),
            _ => format!("{name}: not a gpdp shard file, or a corrupted one ({what}: {e})"),
        })
    })?;
    if !rest.is_empty() {
        return Err(Error::Shard(format!(
            "{name}: {} trailing byte(s) after the shard's {what} ({} bytes) — the file is corrupted (appended to, or two files joined); re-run this shard",
            rest.len(),
            bytes.len() - rest.len()
        )));
    }
    Ok(v)
}

/// The checked payload of a shard file: the envelope spans the file exactly,
/// has [`FORMAT`], and the payload's SHA-256 equals the recorded one.
fn payload<'a>(name: &str, bytes: &[u8], envelope: &'a mut Value) -> Result<&'a [u8]> {
    *envelope = decode_exact(name, bytes, "record")?;
    let malformed = || Error::Shard(format!("{name}: not a gpdp shard file (no {FORMAT} envelope)"));
    let Value::Map(entries) = envelope else { return Err(malformed()) };
    // A file of another format (e.g. gpdp-shard/1, which had no checksum).
    let format = entries.iter().find_map(|(k, v)| match (k, v) {
        (Value::Text(k), Value::Text(v)) if k == "format" => Some(v.as_str()),
        _ => None,
    });
    if let Some(other) = format.filter(|f| *f != FORMAT) {
        return Err(Error::Shard(other_format(name, other)));
    }
    let [(k0, Value::Text(_)), (k1, Value::Bytes(digest)), (k2, Value::Bytes(payload))] = &entries[..] else {
        return Err(malformed());
    };
    if [k0, k1, k2].iter().zip(KEYS).any(|(k, want)| !matches!(k, Value::Text(t) if t == want)) {
        return Err(malformed());
    }
    let actual = Sha256::digest(payload.as_slice());
    if digest.as_slice() != actual.as_slice() {
        return Err(Error::Shard(format!(
            "{name}: checksum mismatch — the file records SHA-256 {} but its payload ({} bytes) has {}: the file is corrupted; re-run this shard",
            hex(digest),
            payload.len(),
            hex(&actual)
        )));
    }
    Ok(payload)
}

/// The message refusing a shard file of format `other` (not [`FORMAT`]).
fn other_format(name: &str, other: &str) -> String {
    let version = other.strip_prefix("gpdp-shard/").and_then(|v| v.parse::<u64>().ok());
    let current: u64 = FORMAT["gpdp-shard/".len()..].parse().expect("FORMAT ends in a number");
    match version {
        Some(v) if v < current => format!(
            "{name}: a shard file of format {other:?}, written by an older gpdp (before {FORMAT:?}, shards recorded the study's command-line arguments rather than its settings); this gpdp reads only {FORMAT:?} — re-run the study's shards with this gpdp"
        ),
        Some(_) => format!(
            "{name}: a shard file of format {other:?}, written by a newer gpdp; this gpdp reads only {FORMAT:?} — merge with the gpdp that ran the shards"
        ),
        None => format!("{name}: a file of format {other:?}, not a gpdp shard file ({FORMAT:?})"),
    }
}

/// A shard file from its bytes; `name` (the file) is for messages. Refuses
/// anything but a file written by [`to_bytes`] of this format: trailing
/// bytes, a wrong checksum (so any flipped bit of the payload), another
/// format, or a payload that is not a shard of settings `S` and results of
/// type `T`.
pub fn from_bytes<S: serde::de::DeserializeOwned, T: serde::de::DeserializeOwned>(
    name: &str,
    bytes: &[u8],
) -> Result<ShardFile<S, T>> {
    let mut envelope = Value::Null;
    let f: ShardFile<S, T> = decode_exact(name, payload(name, bytes, &mut envelope)?, "payload")?;
    if f.format != FORMAT {
        return Err(Error::Shard(format!("{name}: not a gpdp shard file (format {:?})", f.format)));
    }
    Ok(f)
}

/// The study a shard file belongs to (checking the file as [`from_bytes`]
/// does, without decoding its results).
pub fn study_of<S: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<S> {
    Ok(from_bytes::<S, serde::de::IgnoredAny>(name, bytes)?.study)
}

/// A CBOR value in words for messages (numbers as numbers, text quoted).
fn describe(v: &Value) -> String {
    match v {
        Value::Integer(i) => i128::from(*i).to_string(),
        Value::Float(x) => x.to_string(),
        Value::Text(t) => format!("{t:?}"),
        Value::Bool(b) => b.to_string(),
        Value::Null => "none".into(),
        Value::Array(items) => format!("[{}]", items.iter().map(describe).collect::<Vec<_>>().join(", ")),
        Value::Map(entries) => format!(
            "{{{}}}",
            entries.iter().map(|(k, v)| format!("{}: {}", describe(k), describe(v))).collect::<Vec<_>>().join(", ")
        ),
        other => format!("{other:?}"),
    }
}

/// The first setting in which `a` and `b` differ, as (path, value in `a`,
/// value in `b`): the path names the keys from the outside in, e.g.
/// `excursion_1d.seed`. `None` if they are equal.
fn first_difference(a: &Value, b: &Value) -> Option<(String, String, String)> {
    if a == b {
        return None;
    }
    if let (Value::Map(ma), Value::Map(mb)) = (a, b) {
        let key = |k: &Value| match k {
            Value::Text(t) => t.clone(),
            other => describe(other),
        };
        let keys_a: Vec<&Value> = ma.iter().map(|e| &e.0).collect();
        let keys_b: Vec<&Value> = mb.iter().map(|e| &e.0).collect();
        if keys_a == keys_b {
            for ((k, va), (_, vb)) in ma.iter().zip(mb) {
                if let Some((path, x, y)) = first_difference(va, vb) {
                    let path = if path.is_empty() { key(k) } else { format!("{}.{path}", key(k)) };
                    return Some((path, x, y));
                }
            }
        } else if keys_a.len() == 1 && keys_b.len() == 1 {
            // Two variants of an enum (e.g. two studies).
            return Some((String::new(), key(keys_a[0]), key(keys_b[0])));
        }
    }
    Some((String::new(), describe(a), describe(b)))
}

/// The difference of two studies' settings in words, e.g.
/// `setting excursion_1d.seed is 1 but 0`.
fn study_difference<S: Serialize>(a: &S, b: &S) -> String {
    let value = |s: &S| Value::serialized(s).unwrap_or(Value::Null);
    match first_difference(&value(a), &value(b)) {
        Some((path, x, y)) if !path.is_empty() => format!("setting {path} = {y}, where the first has {x}"),
        Some((_, x, y)) => format!("study {y}, where the first is of {x}"),
        None => "different settings".into(),
    }
}

/// A list of `total` items for messages: the first few, then how many in all.
fn brief<D: fmt::Display>(items: impl Iterator<Item = D>, total: usize) -> String {
    const SHOWN: usize = 8;
    let mut out: Vec<String> = items.take(SHOWN).map(|i| i.to_string()).collect();
    if total > SHOWN {
        out.push(format!("… ({total} in all)"));
    }
    out.join(", ")
}

/// The study of a merged run, and every unit's result in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged<S, T> {
    /// The study and its settings (as every shard recorded them).
    pub study: S,
    /// Every unit's result, in unit order.
    pub results: Vec<T>,
}

/// Checks that `files` (each with its name for messages) are exactly the N
/// shards of one run — same format, version, study and settings (a
/// difference is refused naming the first differing setting), N and unit
/// count; every I in 0..N once; each with exactly its units — and returns
/// the results in unit order.
pub fn merge<S: Serialize + PartialEq + Clone, T>(files: Vec<(String, ShardFile<S, T>)>) -> Result<Merged<S, T>> {
    let Some((first_name, first)) = files.first() else {
        return Err(Error::Shard("merge: no shard given".into()));
    };
    let (study, count, units) = (first.study.clone(), first.count, first.units);
    // Nothing here is allocated in proportion to the recorded N or unit
    // count before the shards' own results have been checked against them:
    // a shard file that claims 10¹⁸ units is refused, not allocated for.
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    for (name, f) in &files {
        let mismatch = |what: &str, a: &dyn fmt::Debug, b: &dyn fmt::Debug| {
            Error::Shard(format!("merge: {name} has {what} {b:?} but {first_name} has {a:?} — not shards of one run"))
        };
        if f.format != FORMAT {
            return Err(Error::Shard(format!("merge: {name} is not a gpdp shard file (format {:?})", f.format)));
        }
        if f.gpdp_version != first.gpdp_version {
            return Err(mismatch("gpdp version", &first.gpdp_version, &f.gpdp_version));
        }
        if f.study != study {
            return Err(Error::Shard(format!(
                "merge: {name} has {} ({first_name}) — not shards of one run",
                study_difference(&study, &f.study)
            )));
        }
        if f.count != count {
            return Err(mismatch("shard count N", &count, &f.count));
        }
        if f.units != units {
            return Err(mismatch("unit count", &units, &f.units));
        }
        if f.index >= count {
            return Err(Error::Shard(format!("merge: {name} is shard {}/{count}, outside 0..{count}", f.index)));
        }
        if let Some(other) = seen.insert(f.index, name) {
            return Err(Error::Shard(format!("merge: shard {}/{count} given twice ({other} and {name})", f.index)));
        }
        let shard = Shard { index: f.index, count };
        let owned = (shard.index..units).step_by(count);
        if !f.results.iter().map(|r| r.0).eq(owned.clone()) {
            let got: Vec<usize> = f.results.iter().map(|r| r.0).collect();
            return Err(Error::Shard(format!(
                "merge: {name} (shard {shard}) holds units [{}] but shard {shard} of {units} units owns [{}] — incomplete or corrupted",
                brief(got.iter(), got.len()),
                brief(owned.clone(), owned.len())
            )));
        }
    }
    if seen.len() < count {
        let missing = (0..count).filter(|i| !seen.contains_key(i)).map(|i| format!("{i}/{count}"));
        return Err(Error::Shard(format!(
            "merge: missing shard(s) {} of this run",
            brief(missing, count - seen.len())
        )));
    }
    // Every shard holds exactly its units and all N are here: the results
    // number `units` in all.
    let mut slots: Vec<Option<T>> = (0..units).map(|_| None).collect();
    for (_, f) in files {
        for (u, r) in f.results {
            slots[u] = Some(r);
        }
    }
    let results = slots.into_iter().map(|r| r.expect("every unit checked above")).collect();
    Ok(Merged { study, results })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a study's settings: an enum of one variant with fields.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case", deny_unknown_fields)]
    enum Demo {
        Demo { seed: u64, grid: Vec<f64> },
        Other { seed: u64 },
    }

    fn demo() -> Demo {
        Demo::Demo { seed: 0, grid: vec![0.5, 1.0] }
    }

    fn file(i: usize, n: usize, units: usize) -> (String, ShardFile<Demo, u64>) {
        let s = Shard { index: i, count: n };
        let res = s.units(units).into_iter().map(|u| (u, 10 * u as u64)).collect();
        (format!("s{i}"), ShardFile::new(demo(), s, units, res))
    }

    #[test]
    fn shards_partition_the_units_and_merge_in_order() {
        for (n, units) in [(1, 5), (4, 10), (4, 3), (3, 9)] {
            let mut all: Vec<usize> = (0..n).flat_map(|i| Shard { index: i, count: n }.units(units)).collect();
            all.sort_unstable();
            assert_eq!(all, (0..units).collect::<Vec<_>>());
            let files: Vec<_> = (0..n).rev().map(|i| file(i, n, units)).collect();
            let m = merge(files).unwrap();
            assert_eq!(m.results, (0..units as u64).map(|u| 10 * u).collect::<Vec<_>>());
        }
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, count: 4 });
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shard_files_round_trip_every_double() {
        let s = Shard { index: 1, count: 2 };
        let vals = vec![(1usize, vec![f64::INFINITY, f64::NEG_INFINITY, 0.1 + 0.2, -0.0, 5e-324, f64::MAX])];
        let f = ShardFile::new(demo(), s, 2, vals.clone());
        let b = to_bytes(&f).unwrap();
        let back: ShardFile<Demo, Vec<f64>> = from_bytes("x", &b).unwrap();
        for (a, b) in back.results[0].1.iter().zip(&vals[0].1) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let nan: ShardFile<Demo, f64> =
            from_bytes("x", &to_bytes(&ShardFile::new(demo(), s, 2, vec![(1, f64::NAN)])).unwrap()).unwrap();
        assert!(nan.results[0].1.is_nan());
        assert_eq!(study_of::<Demo>("x", &b).unwrap(), demo());
        assert!(from_bytes::<Demo, f64>("x", b"not cbor").is_err());
    }

    /// A small shard file of f64 results (values with every kind of bit pattern).
    fn small_file() -> Vec<u8> {
        let s = Shard { index: 1, count: 2 };
        let res = vec![(1usize, vec![0.1, -2.5e-300, f64::INFINITY]), (3, vec![7.0, f64::NAN, -0.0])];
        to_bytes(&ShardFile::new(demo(), s, 4, res)).unwrap()
    }

    #[test]
    fn every_flipped_bit_of_a_shard_file_is_refused() {
        let b = small_file();
        assert!(from_bytes::<Demo, Vec<f64>>("s.cbor", &b).is_ok());
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut c = b.clone();
                c[i] ^= 1 << bit;
                let e = from_bytes::<Demo, Vec<f64>>("s.cbor", &c);
                assert!(e.is_err(), "byte {i} bit {bit} flipped: accepted");
                assert!(e.unwrap_err().to_string().starts_with("s.cbor: "), "the message names the file");
                assert!(study_of::<Demo>("s.cbor", &c).is_err(), "byte {i} bit {bit}: study_of accepted");
            }
        }
        // A flip inside a value is reported as a checksum mismatch: the last
        // byte of the file is the last byte of the payload's last value (−0.0).
        let mut c = b.clone();
        let last = c.len() - 1;
        c[last] ^= 1;
        let e = from_bytes::<Demo, Vec<f64>>("s.cbor", &c).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch") && e.contains("corrupted"), "{e}");
    }

    #[test]
    fn truncated_extended_and_old_shard_files_are_refused() {
        let b = small_file();
        for cut in [0, 1, b.len() / 2, b.len() - 1] {
            assert!(from_bytes::<Demo, Vec<f64>>("s.cbor", &b[..cut]).is_err(), "cut at {cut}");
        }
        for extra in [&[0u8][..], b"\n", b"garbage", &b[..]] {
            let c = [&b[..], extra].concat();
            let e = from_bytes::<Demo, Vec<f64>>("s.cbor", &c).unwrap_err().to_string();
            assert!(e.contains(&format!("{} trailing byte(s)", extra.len())), "{e}");
            assert!(study_of::<Demo>("s.cbor", &c).is_err());
        }
        // Format 1 (no checksum): the payload alone, as the old gpdp wrote it.
        let mut old = ShardFile::new(demo(), Shard { index: 0, count: 1 }, 1, vec![(0usize, 1.0f64)]);
        old.format = "gpdp-shard/1".into();
        let mut v1 = Vec::new();
        ciborium::into_writer(&old, &mut v1).unwrap();
        let e = from_bytes::<Demo, f64>("old.cbor", &v1).unwrap_err().to_string();
        assert!(e.contains("\"gpdp-shard/1\"") && e.contains("older gpdp") && e.contains("re-run"), "{e}");
        // A valid envelope around a payload of the wrong type.
        let e = from_bytes::<Demo, String>("s.cbor", &b).unwrap_err().to_string();
        assert!(e.contains("not a gpdp shard file of this study"), "{e}");
        // A file of a later format than this gpdp's.
        let later = to_bytes(&ShardFile::new(demo(), Shard::ALL, 1, vec![(0usize, 1.0f64)])).unwrap();
        let mut env: Value = ciborium::from_reader(&later[..]).unwrap();
        if let Value::Map(m) = &mut env {
            m[0].1 = Value::Text("gpdp-shard/9".into());
        }
        let mut later = Vec::new();
        ciborium::into_writer(&env, &mut later).unwrap();
        let e = from_bytes::<Demo, f64>("new.cbor", &later).unwrap_err().to_string();
        assert!(e.starts_with("new.cbor: ") && e.contains("newer gpdp"), "{e}");
    }

    /// A shard file of format 2 exactly as gpdp-shard/2 laid it out: the
    /// checksummed envelope around a payload with the study's name and its
    /// command-line arguments.
    fn format2_file() -> Vec<u8> {
        #[derive(Serialize)]
        struct V2 {
            format: String,
            gpdp_version: String,
            study: String,
            args: Vec<String>,
            index: usize,
            count: usize,
            units: usize,
            results: Vec<(usize, f64)>,
        }
        let v2 = V2 {
            format: "gpdp-shard/2".into(),
            gpdp_version: "0.1.0".into(),
            study: "mia sweep".into(),
            args: vec!["--ridge".into(), "0.1,1".into()],
            index: 0,
            count: 1,
            units: 1,
            results: vec![(0, 1.0)],
        };
        let mut payload = Vec::new();
        ciborium::into_writer(&v2, &mut payload).unwrap();
        let envelope = Value::Map(vec![
            (Value::Text("format".into()), Value::Text("gpdp-shard/2".into())),
            (Value::Text("sha256".into()), Value::Bytes(Sha256::digest(&payload).to_vec())),
            (Value::Text("payload".into()), Value::Bytes(payload)),
        ]);
        let mut out = Vec::new();
        ciborium::into_writer(&envelope, &mut out).unwrap();
        out
    }

    #[test]
    fn a_format_2_shard_is_refused_as_written_by_an_older_gpdp() {
        let b = format2_file();
        for e in [
            from_bytes::<Demo, f64>("old/shard.cbor", &b).unwrap_err().to_string(),
            study_of::<Demo>("old/shard.cbor", &b).unwrap_err().to_string(),
        ] {
            assert!(e.starts_with("old/shard.cbor: "), "names the file: {e}");
            assert!(e.contains("\"gpdp-shard/2\"") && e.contains("written by an older gpdp"), "{e}");
            assert!(e.contains("re-run the study's shards with this gpdp"), "{e}");
        }
    }

    #[test]
    fn merge_refuses_missing_duplicate_and_mismatched_shards() {
        let e = merge(vec![file(0, 3, 7), file(2, 3, 7)]).unwrap_err().to_string();
        assert!(e.contains("missing shard(s) 1/3"), "{e}");
        let e = merge(vec![file(0, 2, 7), file(1, 2, 7), file(1, 2, 7)]).unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
        // A shard whose settings differ in one setting: refused naming it.
        let mut other = file(1, 2, 7);
        other.1.study = Demo::Demo { seed: 1, grid: vec![0.5, 1.0] };
        let e = merge(vec![file(0, 2, 7), other]).unwrap_err().to_string();
        assert!(e.contains("s1 has setting demo.seed = 1, where the first has 0 (s0)"), "{e}");
        let mut other = file(1, 2, 7);
        other.1.study = Demo::Demo { seed: 0, grid: vec![0.5, 2.0] };
        let e = merge(vec![file(0, 2, 7), other]).unwrap_err().to_string();
        assert!(e.contains("setting demo.grid = [0.5, 2], where the first has [0.5, 1]"), "{e}");
        let mut other = file(1, 2, 7);
        other.1.study = Demo::Other { seed: 0 };
        let e = merge(vec![file(0, 2, 7), other]).unwrap_err().to_string();
        assert!(e.contains("s1 has study other, where the first is of demo (s0)"), "{e}");
        let mut v = file(1, 2, 7);
        v.1.gpdp_version = "0.0.1".into();
        assert!(merge(vec![file(0, 2, 7), v]).unwrap_err().to_string().contains("gpdp version"));
        let mut cut = file(1, 2, 7);
        cut.1.results.pop();
        assert!(merge(vec![file(0, 2, 7), cut]).unwrap_err().to_string().contains("incomplete"));
        assert!(merge(vec![file(0, 2, 7), file(1, 3, 7)]).is_err());
        assert!(merge::<Demo, u64>(vec![]).is_err());
    }

    #[test]
    fn merge_refuses_huge_claims_without_allocating_for_them() {
        // A shard of N = 2⁶⁰ (all but one missing) and one of 2⁶⁰ units
        // (incomplete): refused at once, with short messages.
        let e = merge(vec![file(0, 1 << 60, 1)]).unwrap_err().to_string();
        assert!(e.contains("missing shard(s) 1/1152921504606846976, 2/") && e.contains("in all)"), "{e}");
        assert!(e.len() < 400, "{e}");
        let mut big = file(0, 1, 3);
        big.1.units = usize::MAX;
        let e = merge(vec![big]).unwrap_err().to_string();
        assert!(e.contains("incomplete") && e.contains("in all)") && e.len() < 400, "{e}");
    }
}
