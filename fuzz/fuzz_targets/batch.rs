//! The `account --batch` reader (`gpdp::io::read_batch`) and the accountant on
//! every row it accepts: any input must give reports or errors, never a
//! panic; every reported ε is ≥ 0 (or ∞) and every δ in [0, 1].
#![no_main]

use gpdp::io::{BatchDefaults, Question, read_batch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let keep = vec!["label".to_string()];
    let Ok(batch) = read_batch("fuzz.csv", bytes, &BatchDefaults::default(), &keep) else { return };
    assert_eq!(batch.rows.len(), batch.records.len());
    for row in batch.rows.iter().take(8) {
        let Ok(rel) = row.params.check() else { continue };
        let report = match row.question {
            Question::EpsilonFor(d) => rel.epsilon(row.draws, d, row.conversion),
            Question::DeltaFor(e) => rel.delta(row.draws, e, row.conversion),
        };
        if let Ok(r) = report {
            assert!(r.epsilon >= 0.0 && !r.epsilon.is_nan(), "ε = {}", r.epsilon);
            assert!((0.0..=1.0).contains(&r.delta), "δ = {}", r.delta);
            let _ = r.flat_fields();
        }
    }
});
