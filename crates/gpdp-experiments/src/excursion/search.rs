//! Hyperparameter search over θ = (ℓ, r, σ): a coarse grid, then rounds of
//! multiplicative refinement around the best candidates (the paper's App. D:
//! "a coarse grid over (ℓ, r, σ) followed by two rounds of grid refinement
//! around the top-3 best average-BCE candidates"), either unconstrained or
//! subject to the privacy constraint ε_L(θ) < ε₀. Both searches minimise the
//! same objective on the same (D, f*) pairs.
//!
//! Candidates sharing (ℓ, r) are evaluated together, so a study can reuse one
//! posterior computation (factorisation or Kalman smoother) across all σ.
//! Results do not depend on the number of threads: groups are evaluated in
//! parallel but collected in a fixed order, and ties are broken by (ℓ, r, σ).

use std::collections::BTreeMap;

use rayon::prelude::*;

/// One hyperparameter setting θ = (ℓ, r, σ). σ = 0 is allowed in a search
/// grid (the posterior-mean set; never private: ε = ∞).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Lengthscale ℓ.
    pub lengthscale: f64,
    /// Ridge r.
    pub ridge: f64,
    /// Scale σ.
    pub scale: f64,
}

/// What a study provides to the search.
pub trait Objective: Sync {
    /// The mean objective (e.g. integrated BCE) over the study's pairs for
    /// each σ in `scales`, at fixed (ℓ, r).
    fn evaluate(&self, lengthscale: f64, ridge: f64, scales: &[f64]) -> Vec<f64>;
    /// ε of the release with these hyperparameters (∞ when σ = 0).
    fn epsilon(&self, c: &Candidate) -> f64;
}

/// Memoises an [`Objective`], so that several searches (unconstrained and
/// constrained) over the same pairs evaluate each candidate once.
pub struct Memo<'a> {
    inner: &'a dyn Objective,
    cache: std::sync::Mutex<std::collections::HashMap<(i64, i64, i64), f64>>,
}

impl<'a> Memo<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a dyn Objective) -> Self {
        Memo { inner, cache: Default::default() }
    }
}

impl Objective for Memo<'_> {
    fn evaluate(&self, lengthscale: f64, ridge: f64, scales: &[f64]) -> Vec<f64> {
        let k = |s: f64| (key(lengthscale), key(ridge), key(s));
        let missing: Vec<f64> = {
            let c = self.cache.lock().expect("cache lock");
            scales.iter().copied().filter(|s| !c.contains_key(&k(*s))).collect()
        };
        if !missing.is_empty() {
            let vals = self.inner.evaluate(lengthscale, ridge, &missing);
            let mut c = self.cache.lock().expect("cache lock");
            for (s, v) in missing.iter().zip(vals) {
                c.insert(k(*s), v);
            }
        }
        let c = self.cache.lock().expect("cache lock");
        scales.iter().map(|s| c[&k(*s)]).collect()
    }

    fn epsilon(&self, c: &Candidate) -> f64 {
        self.inner.epsilon(c)
    }
}

/// The search grid and refinement rule.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSpec {
    /// Coarse ℓ values.
    pub lengthscales: Vec<f64>,
    /// Coarse r values.
    pub ridges: Vec<f64>,
    /// Coarse σ values (0 allowed).
    pub scales: Vec<f64>,
    /// Refinement rounds after the coarse grid.
    pub rounds: usize,
    /// Anchors per round: the best `top_k` candidates so far.
    pub top_k: usize,
    /// Multiplicative factors for ℓ around an anchor.
    pub ell_factors: Vec<f64>,
    /// Multiplicative factors for r.
    pub ridge_factors: Vec<f64>,
    /// Multiplicative factors for σ.
    pub scale_factors: Vec<f64>,
    /// σ values tried around an anchor with σ = 0.
    pub zero_scale_values: Vec<f64>,
    /// Allowed ranges (lo, hi) for ℓ, r, σ (refined values are clipped).
    pub ell_range: (f64, f64),
    /// Allowed range for r.
    pub ridge_range: (f64, f64),
    /// Allowed range for σ.
    pub scale_range: (f64, f64),
}

/// One evaluated candidate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evaluated {
    /// θ.
    pub candidate: Candidate,
    /// Mean objective (lower is better).
    pub objective: f64,
    /// ε of θ.
    pub epsilon: f64,
}

/// Everything evaluated, and the winner.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchResult {
    /// All candidates evaluated, in evaluation order.
    pub evaluated: Vec<Evaluated>,
    /// The best feasible candidate.
    pub best: Evaluated,
    /// Number of rounds actually run (coarse = 0).
    pub rounds: usize,
}

fn key(x: f64) -> i64 {
    // Candidates are de-duplicated at 12 significant decimals.
    (x * 1e12).round() as i64
}

fn better(a: &Evaluated, b: &Evaluated) -> std::cmp::Ordering {
    a.objective
        .total_cmp(&b.objective)
        .then(a.candidate.lengthscale.total_cmp(&b.candidate.lengthscale))
        .then(a.candidate.ridge.total_cmp(&b.candidate.ridge))
        .then(a.candidate.scale.total_cmp(&b.candidate.scale))
}

/// Runs the search. With `epsilon_max = Some(ε₀)` only candidates with
/// ε < ε₀ are feasible (anchors and the winner are feasible ones); refined
/// grids are still evaluated in full so the constrained and unconstrained
/// searches see the same objective values. `progress(done, total)` is
/// called after each batch.
pub fn search(
    spec: &SearchSpec,
    obj: &dyn Objective,
    epsilon_max: Option<f64>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Option<SearchResult> {
    let mut seen: BTreeMap<(i64, i64, i64), Evaluated> = BTreeMap::new();
    let mut order: Vec<(i64, i64, i64)> = Vec::new();
    let feasible = |e: &Evaluated| epsilon_max.is_none_or(|m| e.epsilon < m) && e.objective.is_finite();
    let mut batch: Vec<Candidate> = Vec::new();
    for &l in &spec.lengthscales {
        for &r in &spec.ridges {
            for &s in &spec.scales {
                batch.push(Candidate { lengthscale: l, ridge: r, scale: s });
            }
        }
    }
    let mut rounds = 0;
    loop {
        evaluate_batch(&batch, obj, &mut seen, &mut order, progress);
        if rounds == spec.rounds {
            break;
        }
        let mut pool: Vec<Evaluated> = order.iter().map(|k| seen[k]).filter(|e| feasible(e)).collect();
        pool.sort_by(better);
        let anchors: Vec<Candidate> = pool.iter().take(spec.top_k).map(|e| e.candidate).collect();
        if anchors.is_empty() {
            break;
        }
        batch = refine(spec, &anchors);
        rounds += 1;
    }
    let mut pool: Vec<Evaluated> = order.iter().map(|k| seen[k]).filter(|e| feasible(e)).collect();
    pool.sort_by(better);
    let best = *pool.first()?;
    Some(SearchResult { evaluated: order.iter().map(|k| seen[k]).collect(), best, rounds })
}

fn refine(spec: &SearchSpec, anchors: &[Candidate]) -> Vec<Candidate> {
    let clip = |v: f64, (lo, hi): (f64, f64)| v.clamp(lo, hi);
    let mut out = Vec::new();
    for a in anchors {
        let scales: Vec<f64> = if a.scale == 0.0 {
            spec.zero_scale_values.clone()
        } else {
            spec.scale_factors.iter().map(|f| clip(a.scale * f, spec.scale_range)).collect()
        };
        for fl in &spec.ell_factors {
            for fr in &spec.ridge_factors {
                for &s in &scales {
                    out.push(Candidate {
                        lengthscale: clip(a.lengthscale * fl, spec.ell_range),
                        ridge: clip(a.ridge * fr, spec.ridge_range),
                        scale: s,
                    });
                }
            }
        }
    }
    out
}

fn evaluate_batch(
    batch: &[Candidate],
    obj: &dyn Objective,
    seen: &mut BTreeMap<(i64, i64, i64), Evaluated>,
    order: &mut Vec<(i64, i64, i64)>,
    progress: &(dyn Fn(usize, usize) + Sync),
) {
    // New candidates grouped by (ℓ, r) → (ℓ, r, σ's sorted and unique).
    type Group = (f64, f64, BTreeMap<i64, f64>);
    let mut groups: BTreeMap<(i64, i64), Group> = BTreeMap::new();
    for c in batch {
        let k = (key(c.lengthscale), key(c.ridge), key(c.scale));
        if seen.contains_key(&k) {
            continue;
        }
        groups.entry((k.0, k.1)).or_insert((c.lengthscale, c.ridge, BTreeMap::new())).2.insert(k.2, c.scale);
    }
    let groups: Vec<(f64, f64, Vec<f64>)> =
        groups.into_values().map(|(l, r, s)| (l, r, s.into_values().collect())).collect();
    let total = groups.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Vec<Evaluated>> = groups
        .par_iter()
        .map(|(l, r, scales)| {
            let vals = obj.evaluate(*l, *r, scales);
            let out = scales
                .iter()
                .zip(vals)
                .map(|(&s, v)| {
                    let c = Candidate { lengthscale: *l, ridge: *r, scale: s };
                    Evaluated { candidate: c, objective: v, epsilon: obj.epsilon(&c) }
                })
                .collect();
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
            out
        })
        .collect();
    for e in results.into_iter().flatten() {
        let c = e.candidate;
        let k = (key(c.lengthscale), key(c.ridge), key(c.scale));
        if seen.insert(k, e).is_none() {
            order.push(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth bowl with its minimum at (0.3, 2, 0.7) and ε decreasing in r.
    struct Bowl;
    impl Objective for Bowl {
        fn evaluate(&self, l: f64, r: f64, scales: &[f64]) -> Vec<f64> {
            scales.iter().map(|s| (l / 0.3).ln().powi(2) + (r / 2.0).ln().powi(2) + (s - 0.7).powi(2)).collect()
        }
        fn epsilon(&self, c: &Candidate) -> f64 {
            if c.scale == 0.0 { f64::INFINITY } else { 10.0 / c.ridge }
        }
    }

    fn spec() -> SearchSpec {
        SearchSpec {
            lengthscales: vec![0.1, 1.0],
            ridges: vec![0.5, 5.0],
            scales: vec![0.0, 1.0],
            rounds: 2,
            top_k: 3,
            ell_factors: vec![0.7, 1.0, 1.5],
            ridge_factors: vec![0.5, 1.0, 2.0],
            scale_factors: vec![0.5, 1.0, 1.5],
            zero_scale_values: vec![0.0, 0.5],
            ell_range: (0.01, 10.0),
            ridge_range: (0.01, 100.0),
            scale_range: (0.0, 10.0),
        }
    }

    #[test]
    fn refinement_improves_and_constraint_holds() {
        let un = search(&spec(), &Bowl, None, &|_, _| {}).unwrap();
        let coarse_best = un.evaluated.iter().take(8).map(|e| e.objective).fold(f64::INFINITY, f64::min);
        assert!(un.best.objective < coarse_best);
        assert_eq!(un.rounds, 2);
        let con = search(&spec(), &Bowl, Some(3.0), &|_, _| {}).unwrap();
        assert!(con.best.epsilon < 3.0);
        assert!(con.best.objective >= un.best.objective);
        // Deterministic and duplicate-free.
        assert_eq!(search(&spec(), &Bowl, Some(3.0), &|_, _| {}).unwrap(), con);
        let mut keys: Vec<_> = con
            .evaluated
            .iter()
            .map(|e| (key(e.candidate.lengthscale), key(e.candidate.ridge), key(e.candidate.scale)))
            .collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n);
        assert!(search(&spec(), &Bowl, Some(0.0), &|_, _| {}).is_none());
        // Memoised: same results.
        let memo = Memo::new(&Bowl);
        assert_eq!(search(&spec(), &memo, None, &|_, _| {}).unwrap(), un);
        assert_eq!(search(&spec(), &memo, Some(3.0), &|_, _| {}).unwrap(), con);
    }
}
