//! Shard files of `gpdp merge` (`gpdp_experiments::shard::from_bytes`, with
//! the typed `Study` settings and the result types of the three sharded
//! studies), then `merge` on what was accepted, and the library's
//! `study::merge_files` (which dispatches on the recorded study) on the raw
//! bytes. Any input gives a shard file or an error, never a panic.
//!
//! The first input byte selects the study's result type and the mode: the
//! rest of the input is either a whole file (mostly refused by the envelope
//! or its checksum) or a payload that the target wraps in an envelope with
//! the correct SHA-256, so that the payload decoder is fuzzed too.
//! An accepted file re-encodes to the same bytes as its re-encoding (the
//! writer is deterministic) and merges without a panic.
#![no_main]

use gpdp_experiments::excursion::study1d::Study1dOutcome;
use gpdp_experiments::excursion::study2d::Study2dResult;
use gpdp_experiments::mia::SweepRow;
use gpdp_experiments::shard::{ShardFile, from_bytes, merge, study_of, to_bytes};
use gpdp_experiments::study::{Study, merge_files};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// A shard file around `payload`, as `to_bytes` lays it out, with its checksum.
fn envelope(payload: &[u8]) -> Vec<u8> {
    use ciborium::Value;
    let v = Value::Map(vec![
        (Value::Text("format".into()), Value::Text(gpdp_experiments::shard::FORMAT.into())),
        (Value::Text("sha256".into()), Value::Bytes(Sha256::digest(payload).to_vec())),
        (Value::Text("payload".into()), Value::Bytes(payload.to_vec())),
    ]);
    let mut out = Vec::new();
    ciborium::into_writer(&v, &mut out).unwrap();
    out
}

fn check<T: Serialize + DeserializeOwned>(bytes: &[u8]) {
    let accepted: Result<ShardFile<Study, T>, _> = from_bytes("fuzz.cbor", bytes);
    let study = study_of::<Study>("fuzz.cbor", bytes);
    let _ = merge_files(&[("fuzz.cbor".to_string(), bytes.to_vec())]);
    let Ok(f) = accepted else {
        // study_of reads the same envelope: it may accept a file whose
        // results are not of type T, never the other way round.
        return;
    };
    assert_eq!(study.ok().as_ref(), Some(&f.study), "study_of refused an accepted file");
    let once = to_bytes(&f).unwrap();
    let back: ShardFile<Study, T> = from_bytes("again.cbor", &once).unwrap();
    assert_eq!(to_bytes(&back).unwrap(), once, "re-encoding is not deterministic");
    let _ = merge(vec![("fuzz.cbor".to_string(), f)]);
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&mode, rest)) = bytes.split_first() else { return };
    let wrapped;
    let file = if mode & 1 == 1 {
        wrapped = envelope(rest);
        &wrapped[..]
    } else {
        rest
    };
    match (mode >> 1) % 4 {
        0 => check::<SweepRow>(file),
        1 => check::<Study1dOutcome>(file),
        2 => check::<Study2dResult>(file),
        _ => check::<f64>(file),
    }
});
