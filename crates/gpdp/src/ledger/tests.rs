use super::*;
use crate::model::domain::Domain;

fn params(ridge: f64) -> ReleaseParams {
    ReleaseParams::new(Kernel::exponential(0.3).unwrap(), Domain::interval(0.0, 1.0).unwrap(), 100, ridge, 1.0)
}

fn temp_ledger(name: &str) -> (PathBuf, Ledger) {
    let dir = std::env::temp_dir().join(format!("gpdp-ledger-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ledger.sqlite");
    let l = Ledger::open(&path).unwrap();
    (path, l)
}

#[test]
fn parameters_round_trip_exactly() {
    let mut p = params(0.123_456_789_012_345_67);
    p.gp_noise = 0.1 + 0.2;
    p.domain = "box:0,1.5,-2,0.3333333333333333".parse().unwrap();
    p.bound = crate::privacy::rdp::BoundChoice::Paper;
    p.sensitivity = "generic".parse().unwrap();
    let r = RecordedParams::new(&p, Draws::new(3).unwrap()).unwrap();
    let json = serde_json::to_string(&r).unwrap();
    let back: RecordedParams = serde_json::from_str(&json).unwrap();
    let (q, l) = back.params().unwrap();
    assert_eq!((q, l), (p, Draws::new(3).unwrap()));
}

/// Composition at a common order is what the budget is checked against:
/// two releases compose to less than the sum of their ε, the release that
/// would exceed the budget is refused with nothing recorded, and a reserved
/// (uncommitted) release counts.
#[test]
fn composes_refuses_and_counts_reservations() {
    let (path, mut l) = temp_ledger("compose");
    let alone = params(2.0).check().unwrap().epsilon(Draws::ONE, 1e-5, Conversion::Improved).unwrap().epsilon;
    let two = {
        let mut a = Accountant::new();
        a.compose(params(2.0).check().unwrap(), Draws::ONE).compose(params(2.0).check().unwrap(), Draws::ONE);
        a.epsilon(1e-5, Conversion::Improved).unwrap().epsilon
    };
    assert!(two < 2.0 * alone);
    l.init("sensors", two * 1.0001, 1e-5, Conversion::Improved).unwrap();
    assert!(l.init("sensors", 5.0, 1e-5, Conversion::Improved).is_err(), "a budget cannot be reset");
    let r1 = l.reserve("sensors", &params(2.0), Draws::ONE).unwrap();
    assert!((r1.epsilon - alone).abs() < 1e-12 && (r1.composed_epsilon - alone).abs() < 1e-12);
    // Not committed (as if killed after drawing): it still counts.
    let r2 = l.reserve("sensors", &params(2.0), Draws::ONE).unwrap();
    assert!((r2.composed_epsilon - two).abs() < 1e-9 * two);
    l.commit(r2.id, "abc", "/tmp/out").unwrap();
    let e = l.reserve("sensors", &params(2.0), Draws::ONE).unwrap_err();
    assert!(matches!(e, Error::BudgetExceeded(_)) && e.to_string().contains("nothing was drawn"), "{e}");
    let entries = l.entries("sensors").unwrap();
    assert_eq!(entries.iter().map(|e| e.status.as_str()).collect::<Vec<_>>(), ["reserved", "committed"]);
    assert!(l.commit(r2.id, "abc", "/tmp/out").is_err(), "committed twice");
    // Reopened from disk: the same state.
    drop(l);
    let l = Ledger::open(&path).unwrap();
    assert_eq!(l.entries("sensors").unwrap().len(), 2);
    let e = Ledger::open(&path).unwrap().budget("other").unwrap_err().to_string();
    assert!(e.contains("has no budget") && e.contains("gpdp ledger init"), "{e}");
}

/// Four threads, each with its own connection, race to reserve against one
/// budget: together they never exceed it, and exactly as many releases fit
/// as fit one after the other.
#[test]
fn concurrent_reservations_never_exceed_the_budget() {
    let (path, mut l) = temp_ledger("concurrent");
    let alone = params(2.0).check().unwrap().epsilon(Draws::ONE, 1e-5, Conversion::Improved).unwrap().epsilon;
    let budget = 3.5 * alone;
    l.init("d", budget, 1e-5, Conversion::Improved).unwrap();
    drop(l);
    // How many fit sequentially.
    let mut acc = Accountant::new();
    let mut fit = 0;
    loop {
        acc.compose(params(2.0).check().unwrap(), Draws::ONE);
        if acc.epsilon(1e-5, Conversion::Improved).unwrap().epsilon > budget {
            break;
        }
        fit += 1;
    }
    assert!(fit >= 3, "{fit}");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut l = Ledger::open(&path).unwrap();
                let mut ok = 0;
                for _ in 0..fit {
                    match l.reserve("d", &params(2.0), Draws::ONE) {
                        Ok(r) => {
                            assert!(r.composed_epsilon <= budget);
                            ok += 1;
                        }
                        Err(Error::BudgetExceeded(_)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                ok
            })
        })
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, fit);
    let l = Ledger::open(&path).unwrap();
    let entries = l.entries("d").unwrap();
    assert_eq!(entries.len(), fit);
    assert!(entries.iter().all(|e| e.composed_epsilon <= budget));
}
