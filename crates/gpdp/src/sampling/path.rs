//! One posterior draw evaluated lazily and consistently anywhere.

use std::collections::HashMap;

use faer::Mat;

use super::{Process, cholesky};
use crate::error::{Error, Result};
use crate::model::points::Points;
use crate::rng::ReleaseRng;

/// One draw f of the released process, revealed batch by batch.
///
/// `eval(X₂)` after `eval(X₁)` samples f(X₂) from the exact conditional law
/// of f(X₂) given everything this path has revealed so far, by extending the
/// Cholesky factor of the revealed set block by block:
///
/// ```text
/// L_new = [ L_R   0  ]     W = L_R⁻¹ Σ_RN,   L_c = chol(Σ_NN + jI − WᵀW),
///         [ Wᵀ   L_c ]     f_N = μ_N + Wᵀ w_R + L_c z,  z ~ N(0, I)
/// ```
///
/// where w_R = L_R⁻¹(f_R − μ_R) are the standard normals behind the revealed
/// values. The result has the same joint law as evaluating one fixed draw at
/// X₁ ∪ X₂ (docs/model.md, lazy evaluation), so adaptive queries cost no extra
/// privacy budget. A point already revealed returns its stored value exactly.
/// Every new point carries the data-free jitter j of [`Process::jitter`]
/// (independent noise, post-processing). The path reveals at most
/// `max_points` distinct points (memory grows as its square).
#[derive(Debug, Clone)]
pub struct SamplePath {
    process: Process,
    max_points: usize,
    revealed: Points,
    values: Vec<f64>,
    whitened: Vec<f64>,
    chol: Mat<f64>,
    index: HashMap<Vec<u64>, usize>,
    jitter: f64,
}

fn key(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| if *v == 0.0 { 0 } else { v.to_bits() }).collect()
}

impl SamplePath {
    /// A new, unrevealed draw that will reveal at most `max_points` distinct
    /// points. `max_points` also fixes the jitter scale (j =
    /// [`Process::jitter`] of that many points), so that every batch uses the
    /// same public jitter.
    pub fn new(process: Process, max_points: usize) -> Self {
        let dim = process.posterior().train_x().dim();
        let jitter = process.jitter(max_points.max(1));
        SamplePath {
            process,
            max_points: max_points.max(1),
            revealed: Points::new(Vec::new(), dim).expect("dimension ≥ 1"),
            values: Vec::new(),
            whitened: Vec::new(),
            chol: Mat::zeros(0, 0),
            index: HashMap::new(),
            jitter,
        }
    }

    /// A path that has already revealed `values` at the distinct points
    /// `revealed` (in internal units, as [`Self::values`] gives them) — e.g.
    /// reloaded from storage after a restart. Its state is rebuilt from
    /// them: the factor L of Σ_RR + jI (the revealed set's covariance with
    /// the jitter every revealed value carries) and the normals
    /// w = L⁻¹(f_R − μ_R) behind the values. Later batches are then exact
    /// conditional draws given all of them, and revealed points return their
    /// stored values exactly — the same law as the path that revealed them
    /// (its factor was built block by block; this one at once, equal up to
    /// rounding).
    pub fn restore(process: Process, max_points: usize, revealed: Points, values: Vec<f64>) -> Result<Self> {
        let mut path = SamplePath::new(process, max_points);
        if revealed.dim() != path.revealed.dim() {
            return Err(Error::Dimension(format!(
                "restored points are {}-D but the path is {}-D",
                revealed.dim(),
                path.revealed.dim()
            )));
        }
        let m = revealed.len();
        if values.len() != m {
            return Err(Error::Input(format!("restoring a path: {m} points but {} values", values.len())));
        }
        if m > path.max_points {
            return Err(Error::TooLarge(format!(
                "restoring a path: {m} revealed points but the path may reveal at most {}",
                path.max_points
            )));
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(Error::Input(format!("restoring a path: a stored value is not finite ({v})")));
        }
        for (i, x) in revealed.iter().enumerate() {
            if path.index.insert(key(x), i).is_some() {
                return Err(Error::Input(format!("restoring a path: point {i} ({x:?}) is revealed twice")));
            }
        }
        if m == 0 {
            return Ok(path);
        }
        crate::posterior::check_dense("the revealed set of a sample path", m, m)?;
        let mu = path.process.mean(&revealed)?;
        let mut c = path.process.covariance(&revealed, &revealed)?;
        for i in 0..m {
            c[(i, i)] += path.jitter;
        }
        let chol = cholesky(&c, "the covariance of a restored sample path")?;
        let mut w = Mat::<f64>::from_fn(m, 1, |i, _| values[i] - mu[i]);
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(chol.as_ref(), w.as_mut(), faer::Par::Seq);
        path.whitened = (0..m).map(|i| w[(i, 0)]).collect();
        path.values = values;
        path.revealed = revealed;
        path.chol = chol;
        Ok(path)
    }

    /// The distinct points revealed so far, in the order revealed.
    pub fn points(&self) -> &Points {
        &self.revealed
    }

    /// The values at [`Self::points`] (internal units: before any response
    /// range maps them back to data units).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The most distinct points this path will reveal.
    pub fn max_points(&self) -> usize {
        self.max_points
    }

    /// The jitter variance added to each revealed value.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Number of distinct points revealed so far.
    pub fn revealed(&self) -> usize {
        self.values.len()
    }

    /// How many distinct points of `q` are not revealed yet.
    pub fn unrevealed(&self, q: &Points) -> usize {
        let mut pending = std::collections::HashSet::new();
        q.iter().map(key).filter(|k| !self.index.contains_key(k) && pending.insert(k.clone())).count()
    }

    /// The path's values at `q`, sampling new points conditionally.
    pub fn eval(&mut self, q: &Points, rng: &mut ReleaseRng) -> Result<Vec<f64>> {
        if q.dim() != self.revealed.dim() {
            return Err(Error::Dimension(format!(
                "query points are {}-D but the path is {}-D",
                q.dim(),
                self.revealed.dim()
            )));
        }
        // New distinct points in this batch.
        let mut new = Points::new(Vec::new(), q.dim())?;
        let mut pending: HashMap<Vec<u64>, usize> = HashMap::new();
        for x in q.iter() {
            let k = key(x);
            if !self.index.contains_key(&k) && !pending.contains_key(&k) {
                pending.insert(k, self.values.len() + new.len());
                new.push(x)?;
            }
        }
        if self.values.len() + new.len() > self.max_points {
            return Err(Error::TooLarge(format!(
                "this path may reveal at most {} distinct points ({} revealed, {} new asked); its memory grows as the square of the revealed set",
                self.max_points,
                self.values.len(),
                new.len()
            )));
        }
        if !new.is_empty() {
            self.extend(&new, rng)?;
            self.index.extend(pending);
        }
        Ok(q.iter().map(|x| self.values[self.index[&key(x)]]).collect())
    }

    fn extend(&mut self, new: &Points, rng: &mut ReleaseRng) -> Result<()> {
        let (m, k) = (self.values.len(), new.len());
        crate::posterior::check_dense("the revealed set of a sample path", m + k, m + k)?;
        let mu = self.process.mean(new)?;
        let mut snn = self.process.covariance(new, new)?;
        for i in 0..k {
            snn[(i, i)] += self.jitter;
        }
        let mut cond_mean = mu;
        let lc;
        let w = if m > 0 {
            let mut w = self.process.covariance(&self.revealed, new)?;
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                self.chol.as_ref(),
                w.as_mut(),
                faer::Par::Seq,
            );
            crate::linalg::sub_mul(snn.as_mut(), w.transpose(), w.as_ref());
            for (j, cm) in cond_mean.iter_mut().enumerate() {
                *cm += (0..m).map(|i| w[(i, j)] * self.whitened[i]).sum::<f64>();
            }
            Some(w)
        } else {
            None
        };
        lc = cholesky(&snn, "the conditional covariance of a sample path")?;
        let z: Vec<f64> = (0..k).map(|_| rng.normal()).collect();
        let mut chol = Mat::<f64>::zeros(m + k, m + k);
        for j in 0..m {
            for i in j..m {
                chol[(i, j)] = self.chol[(i, j)];
            }
        }
        if let Some(w) = &w {
            for j in 0..m {
                for i in 0..k {
                    chol[(m + i, j)] = w[(j, i)];
                }
            }
        }
        for j in 0..k {
            for i in j..k {
                chol[(m + i, m + j)] = lc[(i, j)];
            }
        }
        for i in 0..k {
            let v = cond_mean[i] + (0..=i).map(|j| lc[(i, j)] * z[j]).sum::<f64>();
            self.values.push(v);
        }
        self.whitened.extend_from_slice(&z);
        self.revealed.extend(new)?;
        self.chol = chol;
        Ok(())
    }
}
