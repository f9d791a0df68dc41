//! Sharding a study's work units across processes (e.g. the tasks of a
//! Slurm job array) and merging the shards.
//!
//! A study is a list of work units whose results depend only on the unit
//! (its parameters and its seed, derived from the master seed and the
//! unit's own index), never on which other units run in the same process.
//! Shard I of N owns the units u with u mod N = I (round robin, so shards
//! get similar mixes of small and large units). Each shard writes a
//! [`ShardFile`]: the study, its arguments, the gpdp version, N, I and its
//! units' results. [`merge`] checks that the files are exactly the N shards
//! of one run and returns every unit's result in unit order — from which the
//! study writes the same outputs as the unsharded run, byte for byte.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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

/// The format tag of shard files.
pub const FORMAT: &str = "gpdp-shard/1";

/// What one shard writes (`shard.json`).
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

/// The bytes of a shard file (CBOR: every f64 round-trips exactly,
/// including ±∞ and NaN, which JSON cannot hold).
pub fn to_bytes<T: Serialize>(f: &ShardFile<T>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    ciborium::into_writer(f, &mut out).map_err(|e| Error::Shard(format!("writing a shard file: {e}")))?;
    Ok(out)
}

/// A shard file from its bytes; `name` is for messages.
pub fn from_bytes<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<ShardFile<T>> {
    ciborium::from_reader(bytes).map_err(|e| Error::Shard(format!("{name}: not a gpdp shard file of this study ({e})")))
}

/// The study a shard file belongs to (without decoding its results).
pub fn study_of(name: &str, bytes: &[u8]) -> Result<String> {
    let f: ShardFile<serde::de::IgnoredAny> = from_bytes(name, bytes)?;
    if f.format != FORMAT {
        return Err(Error::Shard(format!("{name}: not a gpdp shard file (format {:?})", f.format)));
    }
    Ok(f.study)
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
    let mut seen: Vec<Option<String>> = vec![None; count];
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
        if let Some(other) = &seen[f.index] {
            return Err(Error::Shard(format!("merge: shard {}/{count} given twice ({other} and {name})", f.index)));
        }
        seen[f.index] = Some(name.clone());
        let shard = Shard { index: f.index, count };
        let got: Vec<usize> = f.results.iter().map(|r| r.0).collect();
        if got != shard.units(units) {
            return Err(Error::Shard(format!(
                "merge: {name} (shard {shard}) holds units {got:?} but shard {shard} of {units} units owns {:?} — incomplete or corrupted",
                shard.units(units)
            )));
        }
    }
    let missing: Vec<usize> = (0..count).filter(|&i| seen[i].is_none()).collect();
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
        return Err(Error::Shard(format!("merge: missing shard(s) {} of this run", list.join(", "))));
    }
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
}
