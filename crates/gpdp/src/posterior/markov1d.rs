//! Exact O(n + m) computations for the 1-D exponential kernel.
//!
//! k(x, x') = exp(−|x − x'|/ℓ) on R is the covariance of a stationary
//! Ornstein–Uhlenbeck process, which is Markov: between sorted points at
//! distance Δ, f(x') = φ·f(x) + √(1 − φ²)·z with φ = exp(−Δ/ℓ). With
//! observations y_i = f(x_i) + e_i, e_i ~ N(0, r²), the GP posterior of docs/model.md
//! (σ = 1, normalised) is the Kalman smoother of this state-space model:
//! exact, in O(n + m) instead of an O(n³) factorisation and O(n²m) solves.
//!
//! - [`Markov1d::posterior`]: μ_D and k_D(x, x) at the query points (Kalman
//!   filter + Rauch–Tung–Striebel smoother);
//! - [`Markov1d::sample_posterior`]: exact joint draws from GP(μ_D, k_D) at
//!   the query points (forward filtering, backward sampling);
//! - [`prior_sample`]: exact joint draws from GP(0, k) at any points.
//!
//! Repeated covariates are sequential observations at the same state
//! (Δ = 0, φ = 1, no process noise).

use crate::error::{Error, Result, positive};
use crate::rng::ReleaseRng;

#[derive(Debug, Clone, Copy)]
enum Event {
    /// An observation: index into y.
    Obs(usize),
    /// A query point: index into the query list.
    Query(usize),
}

/// Training covariates and query points merged in sorted order, reusable
/// across (ℓ, r) and responses.
#[derive(Debug, Clone)]
pub struct Markov1d {
    pos: Vec<f64>,
    events: Vec<Event>,
    n: usize,
    m: usize,
    // Workspace (filtered / predicted moments per event).
    mf: Vec<f64>,
    pf: Vec<f64>,
    mp: Vec<f64>,
    pp: Vec<f64>,
    phi: Vec<f64>,
}

fn check_finite(what: &'static str, v: &[f64]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(Error::Data { row: i + 1, message: format!("{what} is {} (must be finite)", v[i]) }),
        None => Ok(()),
    }
}

impl Markov1d {
    /// Merges training covariates `x` and query points `q` (any order).
    pub fn new(x: &[f64], q: &[f64]) -> Result<Self> {
        check_finite("covariate", x)?;
        check_finite("query point", q)?;
        let mut ev: Vec<(f64, Event)> = x.iter().enumerate().map(|(i, &p)| (p, Event::Obs(i))).collect();
        ev.extend(q.iter().enumerate().map(|(j, &p)| (p, Event::Query(j))));
        // Sort by position; observations before queries at equal positions.
        ev.sort_by(|a, b| {
            a.0.total_cmp(&b.0).then_with(|| match (a.1, b.1) {
                (Event::Obs(_), Event::Query(_)) => std::cmp::Ordering::Less,
                (Event::Query(_), Event::Obs(_)) => std::cmp::Ordering::Greater,
                _ => std::cmp::Ordering::Equal,
            })
        });
        let k = ev.len();
        Ok(Markov1d {
            pos: ev.iter().map(|e| e.0).collect(),
            events: ev.into_iter().map(|e| e.1).collect(),
            n: x.len(),
            m: q.len(),
            mf: vec![0.0; k],
            pf: vec![0.0; k],
            mp: vec![0.0; k],
            pp: vec![0.0; k],
            phi: vec![0.0; k],
        })
    }

    /// Forward Kalman filter for GP(0, exp(−|·|/ℓ)) with noise variance r².
    fn filter(&mut self, y: &[f64], ell: f64, ridge: f64) {
        let r2 = ridge * ridge;
        let (mut m, mut p) = (0.0f64, 1.0f64);
        for k in 0..self.events.len() {
            let phi = if k == 0 { 0.0 } else { (-(self.pos[k] - self.pos[k - 1]) / ell).exp() };
            if k > 0 {
                m *= phi;
                p = phi * phi * p + (1.0 - phi * phi);
            }
            self.phi[k] = phi;
            self.mp[k] = m;
            self.pp[k] = p;
            if let Event::Obs(i) = self.events[k] {
                let gain = p / (p + r2);
                m += gain * (y[i] - m);
                p *= r2 / (p + r2);
            }
            self.mf[k] = m;
            self.pf[k] = p;
        }
    }

    fn check(&self, y: &[f64], ell: f64, ridge: f64) -> Result<()> {
        positive("lengthscale ℓ", ell)?;
        crate::error::ridge(ridge)?;
        if y.len() != self.n {
            return Err(Error::Dimension(format!("{} responses for {} covariates", y.len(), self.n)));
        }
        check_finite("response y", y)
    }

    /// Posterior mean μ_D and normalised variance k_D(x, x) at the query
    /// points (in the order given to [`Markov1d::new`]).
    pub fn posterior(&mut self, y: &[f64], ell: f64, ridge: f64) -> Result<(Vec<f64>, Vec<f64>)> {
        self.check(y, ell, ridge)?;
        self.filter(y, ell, ridge);
        let k = self.events.len();
        let (mut mean, mut var) = (vec![0.0; self.m], vec![0.0; self.m]);
        if k == 0 {
            return Ok((mean, var));
        }
        let (mut ms, mut ps) = (self.mf[k - 1], self.pf[k - 1]);
        if let Event::Query(j) = self.events[k - 1] {
            mean[j] = ms;
            var[j] = ps;
        }
        for t in (0..k - 1).rev() {
            let phi = self.phi[t + 1];
            let j_gain = self.pf[t] * phi / self.pp[t + 1];
            ms = self.mf[t] + j_gain * (ms - self.mp[t + 1]);
            ps = self.pf[t] + j_gain * j_gain * (ps - self.pp[t + 1]);
            if let Event::Query(j) = self.events[t] {
                mean[j] = ms;
                var[j] = ps.max(0.0);
            }
        }
        Ok((mean, var))
    }

    /// `draws` exact joint draws of the normalised posterior GP(μ_D, k_D) at
    /// the query points (multiply the deviation from μ_D by σ for scale σ).
    pub fn sample_posterior(
        &mut self,
        y: &[f64],
        ell: f64,
        ridge: f64,
        draws: usize,
        rng: &mut ReleaseRng,
    ) -> Result<Vec<Vec<f64>>> {
        self.check(y, ell, ridge)?;
        self.filter(y, ell, ridge);
        let k = self.events.len();
        let mut out = vec![vec![0.0; self.m]; draws];
        if k == 0 {
            return Ok(out);
        }
        for path in out.iter_mut() {
            let mut f = self.mf[k - 1] + self.pf[k - 1].max(0.0).sqrt() * rng.normal();
            if let Event::Query(j) = self.events[k - 1] {
                path[j] = f;
            }
            for t in (0..k - 1).rev() {
                let phi = self.phi[t + 1];
                let j_gain = self.pf[t] * phi / self.pp[t + 1];
                let mean = self.mf[t] + j_gain * (f - self.mp[t + 1]);
                let var = (self.pf[t] * (1.0 - j_gain * phi)).max(0.0);
                f = mean + var.sqrt() * rng.normal();
                if let Event::Query(j) = self.events[t] {
                    path[j] = f;
                }
            }
        }
        Ok(out)
    }
}

/// One exact joint draw of GP(0, exp(−|x − x'|/ℓ)) at `points` (any order,
/// repeats allowed: equal points get equal values).
pub fn prior_sample(points: &[f64], ell: f64, rng: &mut ReleaseRng) -> Result<Vec<f64>> {
    positive("lengthscale ℓ", ell)?;
    check_finite("point", points)?;
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].total_cmp(&points[b]));
    let mut out = vec![0.0; points.len()];
    let mut prev: Option<(f64, f64)> = None;
    for &i in &order {
        let x = points[i];
        let f = match prev {
            None => rng.normal(),
            Some((px, pf)) => {
                let phi = (-(x - px) / ell).exp();
                phi * pf + (1.0 - phi * phi).max(0.0).sqrt() * rng.normal()
            }
        };
        out[i] = f;
        prev = Some((x, f));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dataset, Kernel, Points, Posterior};

    #[test]
    fn kalman_smoother_equals_dense_posterior() {
        let x = [0.9, 0.1, 0.35, 0.35, 0.6, 0.0, 1.0];
        let y = [0.3, -0.7, 1.0, 0.4, -0.2, 0.9, -1.0];
        let q: Vec<f64> = (0..=40).map(|i| -0.1 + 1.2 * i as f64 / 40.0).chain([0.35, 0.6]).collect();
        let mut mk = Markov1d::new(&x, &q).unwrap();
        for (ell, r) in [(0.3, 0.5), (1.0, 0.05), (0.05, 2.0)] {
            let (m, v) = mk.posterior(&y, ell, r).unwrap();
            let d = Dataset::new(Points::from_1d(&x), y.to_vec()).unwrap();
            let p = Posterior::fit(Kernel::exponential(ell).unwrap(), &d, r).unwrap();
            let qp = Points::from_1d(&q);
            let (dm, dv) = (p.mean(&qp).unwrap(), p.variance(&qp).unwrap());
            for j in 0..q.len() {
                assert!((m[j] - dm[j]).abs() < 1e-12, "ℓ={ell} r={r} mean at {}: {} vs {}", q[j], m[j], dm[j]);
                assert!((v[j] - dv[j]).abs() < 1e-12, "ℓ={ell} r={r} var at {}: {} vs {}", q[j], v[j], dv[j]);
            }
        }
    }

    #[test]
    fn ffbs_and_prior_draws_have_the_right_moments() {
        let x = [0.2, 0.5, 0.5, 0.8];
        let y = [1.0, -0.5, 0.0, 0.7];
        let q = [0.0, 0.3, 0.5, 0.55, 1.0];
        let mut mk = Markov1d::new(&x, &q).unwrap();
        let (ell, r) = (0.4, 0.6);
        let mut rng = ReleaseRng::seeded(8);
        let draws = mk.sample_posterior(&y, ell, r, 40_000, &mut rng).unwrap();
        let d = Dataset::new(Points::from_1d(&x), y.to_vec()).unwrap();
        let p = Posterior::fit(Kernel::exponential(ell).unwrap(), &d, r).unwrap();
        let qp = Points::from_1d(&q);
        let (mu, c) = (p.mean(&qp).unwrap(), p.covariance(&qp, &qp).unwrap());
        let n = draws.len() as f64;
        for i in 0..q.len() {
            let mi = draws.iter().map(|d| d[i]).sum::<f64>() / n;
            assert!((mi - mu[i]).abs() < 5.0 * (c[(i, i)] / n).sqrt(), "mean {i}");
            for j in 0..q.len() {
                let mj = draws.iter().map(|d| d[j]).sum::<f64>() / n;
                let cij = draws.iter().map(|d| (d[i] - mi) * (d[j] - mj)).sum::<f64>() / (n - 1.0);
                let se = ((c[(i, i)] * c[(j, j)] + c[(i, j)] * c[(i, j)]) / n).sqrt();
                assert!((cij - c[(i, j)]).abs() < 5.0 * se, "cov {i},{j}: {cij} vs {}", c[(i, j)]);
            }
        }
        // Prior: Var 1, Cov exp(−Δ/ℓ); equal points equal values.
        let pts = [0.7, 0.1, 0.4, 0.4];
        let mut s = vec![];
        for _ in 0..40_000 {
            s.push(prior_sample(&pts, 0.5, &mut rng).unwrap());
        }
        assert!(s.iter().all(|v| v[2] == v[3]));
        let cov = |a: usize, b: usize| s.iter().map(|v| v[a] * v[b]).sum::<f64>() / s.len() as f64;
        assert!((cov(0, 0) - 1.0).abs() < 0.035);
        assert!((cov(0, 1) - (-1.2f64).exp()).abs() < 0.035);
        assert!((cov(1, 2) - (-0.6f64).exp()).abs() < 0.035);
    }
}
