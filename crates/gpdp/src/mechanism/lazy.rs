//! A release evaluated lazily: L paths that answer evaluations batch by
//! batch. Each batch is drawn from the exact conditional law of the path
//! given everything it has revealed (docs/model.md), so any sequence of adaptive
//! queries reveals one fixed draw and costs no more than the release.

use super::report::ReleaseReport;
use super::{Diagnostics, Mechanism};
use crate::error::{Error, Result};
use crate::model::points::Points;
use crate::model::query::QuerySummary;
use crate::rng::ReleaseRng;
use crate::sampling::auto::SamplerSummary;
use crate::sampling::{Process, SamplePath};

/// The method name reported for lazy evaluation.
pub const METHOD: &str = "lazy conditional Cholesky (one fixed draw per path, revealed batch by batch)";

/// How the posterior behind lazy paths is solved. Both give the same
/// posterior, so the same released law; they differ in cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PosteriorSystem {
    /// Over the u distinct covariates, repeated ones aggregated (the
    /// default): the cheapest, but the time and memory of fitting and of
    /// every batch grow with u, which depends on the data.
    #[default]
    Distinct,
    /// Over the n records as they are ([`crate::Posterior::fit_per_record`]):
    /// the time and memory depend only on n, the dimension, the revealed
    /// count and the batch — public quantities — never on how many records
    /// share a covariate.
    PerRecord,
}

/// One released path, evaluated on demand.
#[derive(Debug, Clone)]
pub struct PrivatePath {
    path: SamplePath,
}

impl PrivatePath {
    /// The distinct points this path has revealed, in the order revealed.
    pub fn points(&self) -> &Points {
        self.path.points()
    }

    /// Its values at [`Self::points`] in internal units (before a response
    /// range maps them to data units) — what [`Mechanism::restore_paths`]
    /// needs to rebuild the path after a restart.
    pub fn internal_values(&self) -> &[f64] {
        self.path.values()
    }

    /// Points revealed so far.
    pub fn revealed(&self) -> usize {
        self.path.revealed()
    }

    /// How many distinct points of `q` this path has not revealed yet (what
    /// evaluating `q` would add), without drawing anything.
    pub fn unrevealed(&self, q: &Points) -> usize {
        self.path.unrevealed(q)
    }
}

/// L lazily evaluated paths of one release, with its report and generator.
#[derive(Debug, Clone)]
pub struct LazyRelease {
    paths: Vec<PrivatePath>,
    rng: ReleaseRng,
    report: ReleaseReport,
    diagnostics: Diagnostics,
    /// Values are returned in data units when the release has a response range.
    range: Option<crate::model::units::ResponseRange>,
}

impl LazyRelease {
    pub(super) fn new(
        m: &Mechanism,
        process: Process,
        max_points: usize,
        rng: ReleaseRng,
        diagnostics: Diagnostics,
        restored: Option<Vec<(Points, Vec<f64>)>>,
    ) -> Result<Self> {
        if max_points == 0 {
            return Err(Error::InvalidParameter { name: "max points", value: "0".into(), requirement: ">= 1" });
        }
        let l = m.params.draws.to_usize()?;
        let (lf, k) = (l as f64, max_points as f64);
        crate::resources::check_memory(
            "these lazy paths",
            &[crate::resources::Need::doubles(
                "each path's factor of its revealed set while it grows (2 × L × max_points²)",
                2.0 * lf * k * k,
            )],
            "reveal fewer points per path or release fewer paths",
        )?;
        let paths: Vec<PrivatePath> = match restored {
            None => (0..l).map(|_| PrivatePath { path: SamplePath::new(process.clone(), max_points) }).collect(),
            Some(r) if r.len() != l => {
                return Err(Error::Input(format!("restoring a release of {l} paths from {} stored paths", r.len())));
            }
            Some(r) => r
                .into_iter()
                .map(|(pts, vals)| {
                    Ok(PrivatePath { path: SamplePath::restore(process.clone(), max_points, pts, vals)? })
                })
                .collect::<Result<_>>()?,
        };
        let query = QuerySummary {
            kind: "lazy",
            points: max_points,
            counts: None,
            lower: None,
            upper: None,
            order: Some("evaluated on demand; `points` is the most each path reveals"),
        };
        let plan = SamplerSummary {
            policy: m.params.sampler,
            method: METHOD,
            reason: "lazy evaluation: each batch is an exact conditional draw given what the path has revealed".into(),
            lattice: None,
            torus: None,
        };
        let jitter = paths[0].path.jitter();
        let report = ReleaseReport::new(m, &rng, query, plan, jitter);
        Ok(LazyRelease { paths, rng, report, diagnostics, range: m.params.response_range })
    }

    /// The number of paths L.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Never true (L ≥ 1).
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The public report of this release.
    pub fn report(&self) -> &ReleaseReport {
        &self.report
    }

    /// The operator's diagnostics (never publish).
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// Path `l` (0-based) at `points`: stored values for points it has
    /// revealed, exact conditional draws for new ones. A point with a
    /// non-finite coordinate is refused, naming it, before anything is drawn.
    pub fn eval(&mut self, l: usize, points: &Points) -> Result<Vec<f64>> {
        let n = self.paths.len();
        let path = self.paths.get_mut(l).ok_or_else(|| Error::InvalidParameter {
            name: "path index",
            value: l.to_string(),
            requirement: if n == 1 { "0 (the release has one path)" } else { "below the number of paths L" },
        })?;
        points.check_finite("query")?;
        let mut values = path.path.eval(points, &mut self.rng)?;
        if let Some(range) = &self.range {
            values.iter_mut().for_each(|v| *v = range.to_data(*v));
        }
        Ok(values)
    }

    /// The paths.
    pub fn paths(&self) -> &[PrivatePath] {
        &self.paths
    }
}
