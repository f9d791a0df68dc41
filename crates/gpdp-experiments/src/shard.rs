//! Sharding a study's work units across processes (e.g. the tasks of a
//! Slurm job array) and merging the shards.
//!
//! A study is a list of work units whose results depend only on the unit
//! (its parameters and its seed, derived from the master seed and the
//! unit's own index), never on which other units run in the same process.
//! Shard I of N owns the units u with u mod N = I (round robin, so shards
//! get similar mixes of small and large units). Each shard writes a
//! [`ShardFile`]: the study, its arguments, the gpdp version, N, I and its
//! units' results, with a SHA-256 checksum of all of it ([`to_bytes`]), so
//! that a corrupted file is refused rather than merged. [`merge`] checks that the files are exactly the N shards
//! of one run and returns every unit's result in unit order — from which the
//! study writes the same outputs as the unsharded run, byte for byte.

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
/// Version 2 added the checksum: a file of version 1 is refused (re-run the
/// shard with this gpdp; shards of different gpdp versions never merge).
pub const FORMAT: &str = "gpdp-shard/2";

/// What one shard writes (`shard.cbor`; see [`to_bytes`] for the layout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFile<T> {
    /// [`FORMAT`].
    pub format: String,
    /// The gpdp version that ran it (shards of different versions are refused).
    pub gpdp_version: String,
    /// The study, e.g. `mia sweep`.
    pub study: String,
    /// The study's arguments (without the output folder and the shard).
    pub args: Vec<String>,
    /// I.
    pub index: usize,
    /// N.
    pub count: usize,
    /// The number of work units of the whole run.
    pub units: usize,
    /// (unit, result) for every unit of this shard, in unit order.
    pub results: Vec<(usize, T)>,
}

impl<T> ShardFile<T> {
    /// The file of `shard`'s results.
    pub fn new(study: &str, args: Vec<String>, shard: Shard, units: usize, results: Vec<(usize, T)>) -> Self {
        ShardFile {
            format: FORMAT.into(),
            gpdp_version: env!("CARGO_PKG_VERSION").into(),
            study: study.into(),
            args,
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
pub fn to_bytes<T: Serialize>(f: &ShardFile<T>) -> Result<Vec<u8>> {
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
        return Err(Error::Shard(format!(
            "{name}: a shard file of format {other:?}, but this gpdp reads {FORMAT:?} — re-run this shard with this gpdp"
        )));
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

/// A shard file from its bytes; `name` (the file) is for messages. Refuses
/// anything but a file written by [`to_bytes`] of this format: trailing
/// bytes, a wrong checksum (so any flipped bit of the payload), another
/// format, or a payload that is not a shard of results of type `T`.
pub fn from_bytes<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<ShardFile<T>> {
    let mut envelope = Value::Null;
    let f: ShardFile<T> = decode_exact(name, payload(name, bytes, &mut envelope)?, "payload")?;
    if f.format != FORMAT {
        return Err(Error::Shard(format!("{name}: not a gpdp shard file (format {:?})", f.format)));
    }
    Ok(f)
}

/// The study a shard file belongs to (checking the file as [`from_bytes`]
/// does, without decoding its results).
pub fn study_of(name: &str, bytes: &[u8]) -> Result<String> {
    Ok(from_bytes::<serde::de::IgnoredAny>(name, bytes)?.study)
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

/// The study and arguments of a merged run, and every unit's result in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged<T> {
    /// The study.
    pub study: String,
    /// Its arguments (as the shards recorded them).
    pub args: Vec<String>,
    /// Every unit's result, in unit order.
    pub results: Vec<T>,
}

/// Checks that `files` (each with its name for messages) are exactly the N
/// shards of one run — same format, version, study, arguments, N and unit
/// count; every I in 0..N once; each with exactly its units — and returns
/// the results in unit order.
pub fn merge<T>(files: Vec<(String, ShardFile<T>)>) -> Result<Merged<T>> {
    let Some((first_name, first)) = files.first() else {
        return Err(Error::Shard("merge: no shard given".into()));
    };
    let (study, args, count, units) = (first.study.clone(), first.args.clone(), first.count, first.units);
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
            return Err(mismatch("study", &study, &f.study));
        }
        if f.args != args {
            return Err(mismatch("arguments", &args, &f.args));
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
    Ok(Merged { study, args, results })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(i: usize, n: usize, units: usize) -> (String, ShardFile<u64>) {
        let s = Shard { index: i, count: n };
        let res = s.units(units).into_iter().map(|u| (u, 10 * u as u64)).collect();
        (format!("s{i}"), ShardFile::new("demo", vec!["--x".into()], s, units, res))
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
        let f = ShardFile::new("demo", vec![], s, 2, vals.clone());
        let b = to_bytes(&f).unwrap();
        let back: ShardFile<Vec<f64>> = from_bytes("x", &b).unwrap();
        for (a, b) in back.results[0].1.iter().zip(&vals[0].1) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let nan: ShardFile<f64> =
            from_bytes("x", &to_bytes(&ShardFile::new("d", vec![], s, 2, vec![(1, f64::NAN)])).unwrap()).unwrap();
        assert!(nan.results[0].1.is_nan());
        assert_eq!(study_of("x", &b).unwrap(), "demo");
        assert!(from_bytes::<f64>("x", b"not cbor").is_err());
    }

    /// A small shard file of f64 results (values with every kind of bit pattern).
    fn small_file() -> Vec<u8> {
        let s = Shard { index: 1, count: 2 };
        let res = vec![(1usize, vec![0.1, -2.5e-300, f64::INFINITY]), (3, vec![7.0, f64::NAN, -0.0])];
        to_bytes(&ShardFile::new("demo", vec!["--x".into(), "1".into()], s, 4, res)).unwrap()
    }

    #[test]
    fn every_flipped_bit_of_a_shard_file_is_refused() {
        let b = small_file();
        assert!(from_bytes::<Vec<f64>>("s.cbor", &b).is_ok());
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut c = b.clone();
                c[i] ^= 1 << bit;
                let e = from_bytes::<Vec<f64>>("s.cbor", &c);
                assert!(e.is_err(), "byte {i} bit {bit} flipped: accepted");
                assert!(e.unwrap_err().to_string().starts_with("s.cbor: "), "the message names the file");
                assert!(study_of("s.cbor", &c).is_err(), "byte {i} bit {bit}: study_of accepted");
            }
        }
        // A flip inside a value is reported as a checksum mismatch: the last
        // byte of the file is the last byte of the payload's last value (−0.0).
        let mut c = b.clone();
        let last = c.len() - 1;
        c[last] ^= 1;
        let e = from_bytes::<Vec<f64>>("s.cbor", &c).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch") && e.contains("corrupted"), "{e}");
    }

    #[test]
    fn truncated_extended_and_old_shard_files_are_refused() {
        let b = small_file();
        for cut in [0, 1, b.len() / 2, b.len() - 1] {
            assert!(from_bytes::<Vec<f64>>("s.cbor", &b[..cut]).is_err(), "cut at {cut}");
        }
        for extra in [&[0u8][..], b"\n", b"garbage", &b[..]] {
            let c = [&b[..], extra].concat();
            let e = from_bytes::<Vec<f64>>("s.cbor", &c).unwrap_err().to_string();
            assert!(e.contains(&format!("{} trailing byte(s)", extra.len())), "{e}");
            assert!(study_of("s.cbor", &c).is_err());
        }
        // Format 1 (no checksum): the payload alone, as the old gpdp wrote it.
        let mut old = ShardFile::new("demo", vec![], Shard { index: 0, count: 1 }, 1, vec![(0usize, 1.0f64)]);
        old.format = "gpdp-shard/1".into();
        let mut v1 = Vec::new();
        ciborium::into_writer(&old, &mut v1).unwrap();
        let e = from_bytes::<f64>("old.cbor", &v1).unwrap_err().to_string();
        assert!(e.contains("\"gpdp-shard/1\"") && e.contains("re-run"), "{e}");
        // A valid envelope around a payload of the wrong type.
        let e = from_bytes::<String>("s.cbor", &b).unwrap_err().to_string();
        assert!(e.contains("not a gpdp shard file of this study"), "{e}");
    }

    #[test]
    fn merge_refuses_missing_duplicate_and_mismatched_shards() {
        let e = merge(vec![file(0, 3, 7), file(2, 3, 7)]).unwrap_err().to_string();
        assert!(e.contains("missing shard(s) 1/3"), "{e}");
        let e = merge(vec![file(0, 2, 7), file(1, 2, 7), file(1, 2, 7)]).unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
        let mut other = file(1, 2, 7);
        other.1.args = vec!["--y".into()];
        let e = merge(vec![file(0, 2, 7), other]).unwrap_err().to_string();
        assert!(e.contains("arguments"), "{e}");
        let mut v = file(1, 2, 7);
        v.1.gpdp_version = "0.0.1".into();
        assert!(merge(vec![file(0, 2, 7), v]).unwrap_err().to_string().contains("gpdp version"));
        let mut cut = file(1, 2, 7);
        cut.1.results.pop();
        assert!(merge(vec![file(0, 2, 7), cut]).unwrap_err().to_string().contains("incomplete"));
        assert!(merge(vec![file(0, 2, 7), file(1, 3, 7)]).is_err());
        assert!(merge::<u64>(vec![]).is_err());
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
