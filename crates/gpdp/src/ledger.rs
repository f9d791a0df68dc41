//! A crash-safe privacy-budget ledger (docs/ledger.md).
//!
//! A data holder declares a budget (ε, δ) per dataset; every release of that
//! dataset is recorded with its public parameters, and a new release is
//! refused when the **composed** guarantee of all recorded releases plus the
//! new one would exceed the budget. Composition is exact RDP composition at
//! a common order, then one conversion ([`RdpAccountant`]) — tighter than
//! adding the releases' ε.
//!
//! Protocol (SQLite in WAL mode, `synchronous = FULL`, every step one
//! transaction):
//!
//! 1. [`Ledger::reserve`] — in an immediate (write-locking) transaction,
//!    re-derive every recorded release from its stored parameters, compose
//!    them with the new one, refuse if the budget would be exceeded, else
//!    insert the new release as `reserved` and commit (fsynced). Only then
//!    may the caller draw.
//! 2. [`Ledger::commit`] — after the published files are in place, mark the
//!    release `committed` with a hash of the files.
//!
//! A release killed between 1 and 2 stays `reserved`, and a reserved release
//! counts against the budget exactly like a committed one: the ledger may
//! over-count (a release that never published), never under-count.
//! Concurrent releases serialise on SQLite's write lock during step 1, so
//! together they never exceed the budget.
//!
//! The caller checks the data against the release's public data policy
//! (`Mechanism::check_data`) *before* step 1, so that a refused release
//! records nothing. The file itself: only a gpdp ledger (SQLite application
//! id [`APPLICATION_ID`], the ledger's tables) is ever written to — anything
//! else is refused and left byte-identical; a new ledger appears complete or
//! not at all; [`Ledger::open_read_only`] needs no write access. Dataset
//! names are exact strings; [`names`] has how near-duplicates are refused and
//! how names are shown (docs/ledger.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::mechanism::{Mechanism, NeighbouringRelation};
use crate::model::data::Dataset;
use crate::model::draws::Draws;
use crate::model::kernel::{Kernel, KernelKind};
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::cache::AccountingCache;
use crate::privacy::conversion::Conversion;
use crate::privacy::event::PrivacyEvent;
use crate::privacy::gaussian;
use crate::privacy::release::ReleaseParams;
use crate::privacy::table::{LEDGER_ORDERS, RdpTable};
use crate::spec::ReleaseSpec;

mod file;
pub mod names;

use file::db;
pub use file::{APPLICATION_ID, SCHEMA_VERSION};
use names::quoted;

/// How long a release waits for another process's ledger transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// The public parameters of one recorded release, as stored (round-trips
/// exactly: every number is written in its shortest exact decimal form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedParams {
    /// Kernel family.
    pub kernel: KernelKind,
    /// Lengthscale ℓ.
    pub lengthscale: f64,
    /// Domain Ω, as text (`interval:…`, `box:…`, `ball:…`).
    pub domain: String,
    /// n.
    pub n: usize,
    /// Ridge r.
    pub ridge: f64,
    /// Scale σ (finite for a release).
    pub scale: f64,
    /// GP noise η.
    pub gp_noise: f64,
    /// M_Y.
    pub response_bound: f64,
    /// Sensitivity choice, as text.
    pub sensitivity: String,
    /// ‖f*‖_H for Lemma B.8.
    pub rkhs_norm: Option<f64>,
    /// Proven bound, as text.
    pub bound: String,
    /// L.
    pub draws: u64,
    /// The neighbouring relation of the release's guarantee (absent, i.e.
    /// replace-one, in entries recorded before gpdp stored it).
    #[serde(default, skip_serializing_if = "is_replace_one")]
    pub relation: NeighbouringRelation,
    /// With exact Gaussian accounting (change-one-response): the release's
    /// Gaussian distance μ over all its draws. It may depend on the public
    /// covariates, which the ledger does not store, so it is kept here; the
    /// composition of Gaussian entries adds μ² (docs/ledger.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaussian_mu: Option<f64>,
}

fn is_replace_one(r: &NeighbouringRelation) -> bool {
    *r == NeighbouringRelation::ReplaceOne
}

impl RecordedParams {
    /// The stored form of `p` released `draws` times.
    pub fn new(p: &ReleaseParams, draws: Draws) -> Result<Self> {
        if matches!(p.domain, crate::model::domain::Domain::Points(_)) {
            return Err(Error::Unsupported(
                "the ledger records domains as text; a finite-set domain cannot be recorded".into(),
            ));
        }
        Ok(RecordedParams {
            kernel: p.kernel.kind(),
            lengthscale: p.kernel.lengthscale(),
            domain: p.domain.to_string(),
            n: p.n,
            ridge: p.ridge,
            scale: p.scale,
            gp_noise: p.gp_noise,
            response_bound: p.response_bound,
            sensitivity: p.sensitivity.to_string(),
            rkhs_norm: p.rkhs_norm,
            bound: p.bound.to_string(),
            draws: draws.get(),
            relation: NeighbouringRelation::ReplaceOne,
            gaussian_mu: None,
        })
    }

    /// The stored form of one use of `mechanism`: its parameters, draws,
    /// relation and (with exact Gaussian accounting) its distance μ.
    pub fn of(mechanism: &Mechanism) -> Result<Self> {
        let p = mechanism.params();
        let mut r = RecordedParams::new(&p.release, p.draws)?;
        r.relation = p.relation;
        r.gaussian_mu = mechanism.privacy().gaussian.as_ref().map(|g| g.mu);
        Ok(r)
    }

    /// The privacy event this entry accounts: a Gaussian mechanism of
    /// distance μ, or the GP release of its parameters.
    fn event(&self) -> Result<PrivacyEvent> {
        match self.gaussian_mu {
            Some(mu) => PrivacyEvent::gaussian(mu),
            None => {
                let (params, draws) = self.params()?;
                Ok(PrivacyEvent::gp_release(params.check()?, draws))
            }
        }
    }

    /// Back to release parameters and draws.
    pub fn params(&self) -> Result<(ReleaseParams, Draws)> {
        let kernel = Kernel::new(self.kernel, self.lengthscale)?;
        let mut p = ReleaseParams::new(kernel, self.domain.parse()?, self.n, self.ridge, self.scale);
        p.gp_noise = self.gp_noise;
        p.response_bound = self.response_bound;
        p.sensitivity = self.sensitivity.parse()?;
        p.rkhs_norm = self.rkhs_norm;
        p.bound = self.bound.parse()?;
        Ok((p, Draws::new(self.draws)?))
    }
}

/// A dataset's budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budget {
    /// The dataset's name.
    pub dataset: String,
    /// ε of the budget.
    pub epsilon: f64,
    /// δ of the budget.
    pub delta: f64,
    /// The conversion used to compare the composed guarantee with it.
    pub conversion: Conversion,
    /// When it was declared (UTC, RFC 3339).
    pub created: String,
}

/// One recorded release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Its id in the ledger.
    pub id: i64,
    /// `reserved` (counted; drawing may have happened) or `committed` (published).
    pub status: String,
    /// Its public parameters (the accountant's).
    pub params: RecordedParams,
    /// Its release spec (every public keyword), when recorded (schema 2).
    pub spec: Option<ReleaseSpec>,
    /// The gpdp version that reserved it; `None` for an entry of a ledger
    /// written before gpdp recorded it (schema 1).
    pub gpdp_version: Option<String>,
    /// The accounted Rényi curve of this release on [`LEDGER_ORDERS`]:
    /// composition sums these stored curves, never re-deriving a release.
    pub curve: RdpTable,
    /// Which gpdp derived the stored curve when migrating a schema-1 ledger
    /// (its entries had no curve); `None` when the reserving gpdp stored it.
    pub migrated_by: Option<String>,
    /// ε of this release alone at the budget's δ.
    pub epsilon: f64,
    /// ε of everything recorded up to and including it, composed, at the budget's δ.
    pub composed_epsilon: f64,
    /// When it was reserved.
    pub reserved_at: String,
    /// When it was committed.
    pub committed_at: Option<String>,
    /// SHA-256 of the published files (set at commit).
    pub files_hash: Option<String>,
    /// Where it was published.
    pub out: Option<String>,
}

/// A reservation: the release may now draw; commit it once published
/// ([`Ledger::commit`] consumes it).
#[derive(Debug, PartialEq, Serialize)]
pub struct Reservation {
    /// The entry's id.
    pub id: i64,
    /// ε of this release alone at the budget's δ.
    pub epsilon: f64,
    /// The composed guarantee of the dataset with this release.
    pub composed_epsilon: f64,
    /// The budget.
    pub budget: Budget,
}

/// A dry-run composition of one more release with a dataset's recorded
/// ones ([`Ledger::composition`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Composition {
    /// The dataset's budget.
    pub budget: Budget,
    /// Releases recorded so far.
    pub entries: usize,
    /// ε the recorded releases have spent ([`spent_epsilon`]).
    pub spent: f64,
    /// ε of the new release alone at the budget's δ.
    pub alone: f64,
    /// The composed ε of the recorded releases and the new one.
    pub composed: f64,
}

impl Composition {
    /// Whether the new release fits: composed ε ≤ the budget's.
    pub fn fits(&self) -> bool {
        self.composed <= self.budget.epsilon
    }

    /// The budget's ε minus the spent ε (not below 0).
    pub fn remaining(&self) -> f64 {
        (self.budget.epsilon - self.spent).max(0.0)
    }
}

/// The ledger file.
///
/// The protocol: declare a budget once, check the data and reserve before
/// drawing, commit once the release is published.
///
/// ```
/// use gpdp::ledger::Ledger;
/// use gpdp::{Conversion, Dataset, Domain, Grid, Kernel, MechanismParams, Points, Query, ReleaseParams, ReleaseRng, ResponseScale};
///
/// let dir = std::env::temp_dir().join(format!("gpdp-doc-ledger-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let mut ledger = Ledger::open(&dir.join("budget.sqlite"))?;
/// ledger.init("sensors", 100.0, 1e-3, Conversion::Improved)?;
///
/// let domain = Domain::interval(0.0, 1.0)?;
/// let model = ReleaseParams::new(Kernel::exponential(0.3)?, domain.clone(), 3, 1.0, 5.0);
/// let mechanism = MechanismParams::new(model, 1e-3, ResponseScale::Bound(1.0)).check()?;
/// let data = Dataset::new(Points::from_1d(&[0.1, 0.5, 0.9]), vec![0.2, -0.3, 0.8])?;
///
/// let reservation = ledger.reserve_for("sensors", &mechanism, &data)?; // before drawing
/// let query = Query::Grid(Grid::parse("20", &domain)?);
/// let release = mechanism.release(&data, &query, &mut ReleaseRng::from_os()?)?;
/// assert_eq!(release.paths.len(), 1);
/// ledger.commit(reservation, "sha256 of the published files", "out/")?;
///
/// // The next reservation composes with the stored curve of the first.
/// let next = ledger.reserve("sensors", &mechanism)?;
/// assert!(next.composed_epsilon > next.epsilon);
/// std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), gpdp::Error>(())
/// ```
#[derive(Debug)]
pub struct Ledger {
    conn: Connection,
    path: PathBuf,
    read_only: bool,
    /// The bounded memo tables of the accountant (joint certificates),
    /// kept for the life of the ledger handle.
    cache: AccountingCache,
}

fn now() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // RFC 3339 in UTC from the Unix time (days → civil date, Howard Hinnant's algorithm).
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

impl Ledger {
    /// Opens (creating if needed) the ledger at `path` for reading and
    /// writing.
    ///
    /// A missing file is created atomically: a complete, fsynced ledger
    /// appears at `path`, or nothing does. An existing file is used only if
    /// it is a gpdp ledger — it carries the gpdp application id
    /// ([`APPLICATION_ID`]), or is an unmarked ledger of an older gpdp with
    /// exactly the ledger's tables (marked on this open) — and anything else
    /// (another application's database, a non-SQLite file, an empty file) is
    /// refused with nothing written to it: the file stays byte-identical.
    pub fn open(path: &Path) -> Result<Self> {
        let mut conn = file::open_read_write(path)?;
        migrate(&mut conn, path)?;
        Ok(Ledger { conn, path: path.to_path_buf(), read_only: false, cache: AccountingCache::default() })
    }

    /// [`Ledger::open`] for a ledger that must already exist (a release
    /// spends from a declared budget): a missing file is refused and nothing
    /// is created — a refused command leaves no empty ledger behind.
    pub fn open_existing(path: &Path) -> Result<Self> {
        if std::fs::symlink_metadata(path).is_err() {
            return Err(Error::Input(format!(
                "ledger {}: no such file; declare the dataset's budget first (gpdp ledger init --ledger {} --dataset NAME --epsilon ε --delta δ)",
                path.display(),
                path.display()
            )));
        }
        Self::open(path)
    }

    /// Opens the existing ledger at `path` for reading only: nothing is
    /// written to it (nor any file created next to it), and neither it nor
    /// its directory need be writable: without a write-ahead log (no other
    /// connection open) the file is read as immutable — a snapshot, meant
    /// for a short read — else through SQLite's locks. Refused like [`Ledger::open`] if it is not a gpdp
    /// ledger, and if it does not exist. [`Ledger::init`],
    /// [`Ledger::reserve`] and [`Ledger::commit`] are refused on it.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let conn = file::open_read_only(path)?;
        Ok(Ledger { conn, path: path.to_path_buf(), read_only: true, cache: AccountingCache::default() })
    }

    /// Whether it was opened with [`Ledger::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn writable(&self, what: &str) -> Result<()> {
        if self.read_only {
            return Err(Error::Unsupported(format!(
                "ledger {} was opened read-only: cannot {what}",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// The ledger's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Declares the budget (ε, δ) of `dataset`; refused if it already has
    /// one, if another dataset's name differs from it only by case or
    /// surrounding whitespace ([`names::fold`]; the message names that
    /// dataset). The conversion is an RDP [`Conversion`] by type: the ledger
    /// composes RDP curves ("pld" is refused when parsed).
    pub fn init(&mut self, dataset: &str, epsilon: f64, delta: f64, conversion: Conversion) -> Result<Budget> {
        self.writable("declare a budget")?;
        if dataset.trim().is_empty() {
            return Err(Error::Setting { name: "dataset", value: dataset.into(), reason: "needs a name".into() });
        }
        crate::error::positive("budget ε", epsilon)?;
        crate::error::unit_open("budget δ", delta)?;
        let path = self.path.clone();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| db(e, &path))?;
        let exists: Option<f64> = tx
            .query_row("SELECT epsilon FROM budgets WHERE dataset = ?1", [dataset], |r| r.get(0))
            .optional()
            .map_err(|e| db(e, &path))?;
        if exists.is_some() {
            return Err(Error::Setting {
                name: "dataset",
                value: names::escaped(dataset),
                reason: format!("already has a budget in {} (budgets cannot be changed or reset)", path.display()),
            });
        }
        if let Some(other) = similar_name(&tx, dataset, &path)? {
            return Err(Error::Setting {
                name: "dataset",
                value: names::escaped(dataset),
                reason: format!(
                    "differs from the existing dataset {} in {} only by case or surrounding whitespace; dataset names are exact strings, so this would open a second budget for what is probably the same data — use {} to record releases against its budget, or choose a clearly different name",
                    quoted(&other),
                    path.display(),
                    quoted(&other)
                ),
            });
        }
        let created = now();
        tx.execute(
            "INSERT INTO budgets (dataset, epsilon, delta, conversion, created) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![dataset, epsilon, delta, conversion.name(), created],
        )
        .map_err(|e| db(e, &path))?;
        tx.commit().map_err(|e| db(e, &path))?;
        Ok(Budget { dataset: dataset.into(), epsilon, delta, conversion, created })
    }

    /// The budget of `dataset`.
    pub fn budget(&self, dataset: &str) -> Result<Budget> {
        budget_in(&self.conn, dataset, &self.path)
    }

    /// Every budget.
    pub fn budgets(&self) -> Result<Vec<Budget>> {
        let path = &self.path;
        let mut st = self.conn.prepare("SELECT dataset FROM budgets ORDER BY dataset").map_err(|e| db(e, path))?;
        let names: Vec<String> = st
            .query_map([], |r| r.get(0))
            .map_err(|e| db(e, path))?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| db(e, path))?;
        names.iter().map(|n| self.budget(n)).collect()
    }

    /// The releases recorded for `dataset`, oldest first.
    pub fn entries(&self, dataset: &str) -> Result<Vec<Entry>> {
        entries_in(&self.conn, dataset, &self.path)
    }

    /// Checks `data` against the mechanism's public data policy, then
    /// reserves (step 1): a dataset the policy refuses records nothing.
    pub fn reserve_for(&mut self, dataset: &str, mechanism: &Mechanism, data: &Dataset) -> Result<Reservation> {
        mechanism.check_data(data)?;
        self.reserve(dataset, mechanism)
    }

    /// Reserves the budget for one use of `mechanism` (all its draws) on
    /// `dataset` (step 1 of the protocol): refused ([`Error::BudgetExceeded`])
    /// when the composed guarantee would exceed the budget. The entry stores
    /// the mechanism's spec, this gpdp's version and its accounted Rényi
    /// curve on [`LEDGER_ORDERS`]; the composed guarantee sums the stored
    /// curves of every recorded release and this one (no release is
    /// re-derived) and converts once. Check the data first
    /// ([`Ledger::reserve_for`]); draw only after this returns.
    pub fn reserve(&mut self, dataset: &str, mechanism: &Mechanism) -> Result<Reservation> {
        self.writable("reserve a release")?;
        let recorded = RecordedParams::of(mechanism)?;
        let spec = ReleaseSpec::of(mechanism)?;
        let curve = RdpTable::of(&recorded.event()?, &LEDGER_ORDERS)?;
        let path = self.path.clone();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| db(e, &path))?;
        let budget = budget_in(&tx, dataset, &path)?;
        let entries = entries_in(&tx, dataset, &path)?;
        let c = compose_with(&self.cache, budget, &entries, mechanism, &recorded, &curve)?;
        if !c.fits() {
            return Err(Error::BudgetExceeded(format!(
                "the budget of dataset {} is ε = {} at δ = {:e}; its {} recorded release(s) with this one would compose to ε = {:.4} (this release alone: ε = {:.4}); spent ε = {:.4}, remaining ε = {:.4} — nothing was drawn",
                quoted(dataset),
                c.budget.epsilon,
                c.budget.delta,
                c.entries,
                c.composed,
                c.alone,
                c.spent,
                c.remaining()
            )));
        }
        let (alone, composed, budget) = (c.alone, c.composed, c.budget);
        let json = |v: &dyn erased::Json| v.json().map_err(|e| Error::Input(format!("ledger: {e}")));
        tx.execute(
            "INSERT INTO releases (dataset, status, params, epsilon, composed_epsilon, reserved_at, spec, gpdp_version, curve) VALUES (?1, 'reserved', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![dataset, json(&recorded)?, alone, composed, now(), json(&spec)?, GPDP_VERSION, json(&curve)?],
        )
        .map_err(|e| db(e, &path))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(|e| db(e, &path))?;
        Ok(Reservation { id, epsilon: alone, composed_epsilon: composed, budget })
    }

    /// What [`Ledger::reserve`] would compute for `mechanism` on `dataset`,
    /// without recording anything (a read; the ledger may be read-only).
    /// Another process may record a release in between: only `reserve`'s
    /// own check, in its transaction, decides.
    pub fn composition(&self, dataset: &str, mechanism: &Mechanism) -> Result<Composition> {
        let recorded = RecordedParams::of(mechanism)?;
        let curve = RdpTable::of(&recorded.event()?, &LEDGER_ORDERS)?;
        let budget = budget_in(&self.conn, dataset, &self.path)?;
        let entries = entries_in(&self.conn, dataset, &self.path)?;
        compose_with(&self.cache, budget, &entries, mechanism, &recorded, &curve)
    }

    /// The largest target ε whose release, built by `make(target)`, fits in
    /// the remaining budget of `dataset` ([`Ledger::composition`]), and that
    /// release; `None` when none down to 10⁻⁶ of the budget's ε fits.
    ///
    /// The composed ε grows with the target (a larger target gives a less
    /// private release), so the largest fitting target is found by
    /// bisection on [0, budget ε] to a relative 10⁻⁶ (on the fitting side:
    /// the returned release always fits). A target that `make` refuses
    /// counts as not fitting. Everything here is a function of public
    /// inputs and the ledger.
    pub fn largest_fitting_target(
        &self,
        dataset: &str,
        mut make: impl FnMut(f64) -> Result<Mechanism>,
    ) -> Result<Option<(f64, Mechanism)>> {
        let budget = self.budget(dataset)?;
        let mut fits = |t: f64| -> Result<Option<Mechanism>> {
            let Ok(m) = make(t) else { return Ok(None) };
            Ok(self.composition(dataset, &m)?.fits().then_some(m))
        };
        let mut hi = budget.epsilon;
        if let Some(m) = fits(hi)? {
            return Ok(Some((hi, m)));
        }
        // A fitting lower end, halving from the budget.
        let mut lo = 0.5 * hi;
        let mut best = loop {
            if lo < 1e-6 * budget.epsilon {
                return Ok(None);
            }
            match fits(lo)? {
                Some(m) => break m,
                None => {
                    hi = lo;
                    lo *= 0.5;
                }
            }
        };
        while hi - lo > 1e-6 * lo {
            let mid = 0.5 * (lo + hi);
            match fits(mid)? {
                Some(m) => {
                    lo = mid;
                    best = m;
                }
                None => hi = mid,
            }
        }
        Ok(Some((lo, best)))
    }

    /// Marks a reserved release as published (step 2 of the protocol).
    pub fn commit(&mut self, reservation: Reservation, files_hash: &str, out: &str) -> Result<()> {
        self.commit_id(reservation.id, files_hash, out)
    }

    /// [`Ledger::commit`] by the entry's id (a reservation made by another
    /// process, e.g. recorded in an operator's log).
    pub fn commit_id(&mut self, id: i64, files_hash: &str, out: &str) -> Result<()> {
        self.writable("commit a release")?;
        let path = self.path.clone();
        let n = self
            .conn
            .execute(
                "UPDATE releases SET status = 'committed', committed_at = ?2, files_hash = ?3, out = ?4 WHERE id = ?1 AND status = 'reserved'",
                params![id, now(), files_hash, out],
            )
            .map_err(|e| db(e, &path))?;
        if n != 1 {
            return Err(Error::Input(format!("ledger {}: no reserved release with id {id}", path.display())));
        }
        Ok(())
    }
}

fn budget_in(conn: &Connection, dataset: &str, path: &Path) -> Result<Budget> {
    let row = conn
        .query_row("SELECT epsilon, delta, conversion, created FROM budgets WHERE dataset = ?1", [dataset], |r| {
            Ok((r.get::<_, f64>(0)?, r.get::<_, f64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
        })
        .optional()
        .map_err(|e| db(e, path))?;
    let Some((epsilon, delta, conversion, created)) = row else {
        let reason = match similar_name(conn, dataset, path)? {
            Some(other) => format!(
                "has no budget in {}; dataset names are exact strings, and the dataset {} differs from it only by case or surrounding whitespace — did you mean it?",
                path.display(),
                quoted(&other)
            ),
            None => format!(
                "has no budget in {}; declare one first: gpdp ledger init --ledger {} --dataset {} --epsilon E --delta D",
                path.display(),
                path.display(),
                quoted(dataset)
            ),
        };
        return Err(Error::Setting { name: "dataset", value: names::escaped(dataset), reason });
    };
    Ok(Budget { dataset: dataset.into(), epsilon, delta, conversion: conversion.parse()?, created })
}

/// The name of another dataset in the ledger that equals `dataset` up to
/// case and surrounding whitespace ([`names::fold`]), if any.
fn similar_name(conn: &Connection, dataset: &str, path: &Path) -> Result<Option<String>> {
    let mut st = conn.prepare("SELECT dataset FROM budgets ORDER BY dataset").map_err(|e| db(e, path))?;
    let all: Vec<String> = st
        .query_map([], |r| r.get(0))
        .map_err(|e| db(e, path))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| db(e, path))?;
    let key = names::fold(dataset);
    Ok(all.into_iter().find(|n| n != dataset && names::fold(n) == key))
}

fn entries_in(conn: &Connection, dataset: &str, path: &Path) -> Result<Vec<Entry>> {
    // A schema-1 ledger opened read-only has no curve columns: derive them.
    let v2 = file::has_curve_columns(conn, path)?;
    let columns = if v2 { "spec, gpdp_version, curve, migrated_by" } else { "NULL, NULL, NULL, NULL" };
    let mut st = conn
        .prepare(&format!(
            "SELECT id, status, params, epsilon, composed_epsilon, reserved_at, committed_at, files_hash, out, {columns}
             FROM releases WHERE dataset = ?1 ORDER BY id"
        ))
        .map_err(|e| db(e, path))?;
    type Row = (i64, String, String, f64, f64, String, Option<String>, Option<String>, Option<String>);
    type Extra = (Option<String>, Option<String>, Option<String>, Option<String>);
    let rows = st
        .query_map([dataset], |r| {
            let row: Row =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?);
            let extra: Extra = (r.get(9)?, r.get(10)?, r.get(11)?, r.get(12)?);
            Ok((row, extra))
        })
        .map_err(|e| db(e, path))?;
    let mut out = Vec::new();
    for row in rows {
        let ((id, status, params, epsilon, composed_epsilon, reserved_at, committed_at, files_hash, out_dir), extra) =
            row.map_err(|e| db(e, path))?;
        let unreadable = |what: &str, e: String| {
            Error::Input(format!("ledger {}: release {id} has unreadable {what}: {e}", path.display()))
        };
        let params: RecordedParams =
            serde_json::from_str(&params).map_err(|e| unreadable("parameters", e.to_string()))?;
        let (spec, gpdp_version, curve, migrated_by) = extra;
        let spec = spec.map(|s| serde_json::from_str(&s)).transpose().map_err(|e| unreadable("spec", e.to_string()))?;
        let curve = match curve {
            Some(c) => serde_json::from_str(&c).map_err(|e| unreadable("Rényi curve", e.to_string()))?,
            None => derived_curve(&params)?,
        };
        out.push(Entry {
            id,
            status,
            params,
            spec,
            gpdp_version,
            curve,
            migrated_by,
            epsilon,
            composed_epsilon,
            reserved_at,
            committed_at,
            files_hash,
            out: out_dir,
        });
    }
    Ok(out)
}

/// The composition [`Ledger::reserve`] checks: the stored curves of
/// `entries` and the new release's `curve` summed and converted once, the
/// re-derived continuous-order refinement, and for a first release its own
/// certified ε (docs/ledger.md, "Composition").
fn compose_with(
    cache: &AccountingCache,
    budget: Budget,
    entries: &[Entry],
    mechanism: &Mechanism,
    recorded: &RecordedParams,
    curve: &RdpTable,
) -> Result<Composition> {
    let alone = match recorded.gaussian_mu {
        Some(mu) => gaussian::epsilon_for_delta(mu, budget.delta)?,
        None => {
            mechanism.accounted_release().epsilon(mechanism.params().draws, budget.delta, budget.conversion)?.epsilon
        }
    };
    let mut acc = RdpAccountant::with_cache(cache.clone());
    for e in entries {
        acc.compose(PrivacyEvent::Tabulated(e.curve.clone()))?;
    }
    acc.compose(PrivacyEvent::Tabulated(curve.clone()))?;
    let mut composed = composed_epsilon(&acc, entries, recorded.gaussian_mu, budget.delta, budget.conversion)?;
    composed = composed.min(rederived_epsilon(cache, entries, recorded.event()?, budget.delta, budget.conversion));
    if entries.is_empty() {
        // One release: its composed guarantee is its own certified one.
        composed = composed.min(alone);
    }
    Ok(Composition { entries: entries.len(), spent: spent_epsilon(entries), alone, composed, budget })
}

/// The Rényi curve of a recorded release, derived by this gpdp from its
/// stored parameters (for schema-1 entries, which stored none).
fn derived_curve(p: &RecordedParams) -> Result<RdpTable> {
    RdpTable::of(&p.event()?, &LEDGER_ORDERS)
}

/// The composed ε of the recorded entries and a new release (distance
/// `new_mu` if Gaussian): the stored Rényi curves summed in `acc` and
/// converted once; when every one of them is a Gaussian mechanism, also the
/// exact profile at √(Σ μ²) (Gaussian DP composition, adaptive too), and the
/// smaller of the two valid bounds (docs/ledger.md, "Relations").
/// The ε a dataset has spent: the composed ε of its recorded entries (the
/// last entry's, which composes every entry before it); 0 without entries.
pub fn spent_epsilon(entries: &[Entry]) -> f64 {
    entries.last().map_or(0.0, |e| e.composed_epsilon)
}

/// ε of the entries and `new` composed through their Rényi curves as this
/// gpdp's accountant derives them from the recorded parameters, with the
/// order optimised continuously (no table grid): a second upper bound of
/// the same composition (every derived curve is a proven bound of the
/// recorded release; docs/ledger.md, "Composition"), used with the
/// stored tables' value through the minimum. +∞ when an entry's
/// parameters no longer derive a curve (then the tables alone count).
fn rederived_epsilon(
    cache: &AccountingCache,
    entries: &[Entry],
    new: PrivacyEvent,
    delta: f64,
    conversion: Conversion,
) -> f64 {
    let mut acc = RdpAccountant::with_cache(cache.clone());
    for e in entries {
        // Only where this gpdp derives exactly the stored curve: the stored
        // curves stay authoritative (an entry of another version is never
        // re-derived), and the continuous order only refines their composition.
        let same = e.params.event().and_then(|ev| Ok((RdpTable::of(&ev, &LEDGER_ORDERS)? == e.curve, ev)));
        match same {
            Ok((true, ev)) if acc.compose(ev.clone()).is_ok() => {}
            _ => return f64::INFINITY,
        }
    }
    if acc.compose(new).is_err() {
        return f64::INFINITY;
    }
    acc.epsilon(delta, conversion).map_or(f64::INFINITY, |r| r.epsilon)
}

fn composed_epsilon(
    acc: &RdpAccountant,
    entries: &[Entry],
    new_mu: Option<f64>,
    delta: f64,
    conversion: Conversion,
) -> Result<f64> {
    let rdp = acc.epsilon(delta, conversion)?.epsilon;
    let mus: Option<Vec<f64>> = entries.iter().map(|e| e.params.gaussian_mu).chain([new_mu]).collect();
    Ok(match mus {
        Some(mus) => gaussian::epsilon_for_delta(gaussian::compose(&mus)?, delta)?.min(rdp),
        None => rdp,
    })
}

/// Brings a schema-1 ledger to schema 2 in one transaction: adds the spec,
/// version and curve columns, and stores for every entry the curve this gpdp
/// derives from its parameters, marked `migrated_by` this version (the
/// parameters of a schema-1 entry are all its accountant needed).
fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    if file::has_curve_columns(conn, path)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| db(e, path))?;
    if !file::has_curve_columns(&tx, path)? {
        tx.execute_batch(
            "ALTER TABLE releases ADD COLUMN spec TEXT;
             ALTER TABLE releases ADD COLUMN gpdp_version TEXT;
             ALTER TABLE releases ADD COLUMN curve TEXT;
             ALTER TABLE releases ADD COLUMN migrated_by TEXT;",
        )
        .map_err(|e| db(e, path))?;
        let rows: Vec<(i64, String)> = {
            let mut st = tx.prepare("SELECT id, params FROM releases ORDER BY id").map_err(|e| db(e, path))?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| db(e, path))?
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| db(e, path))?
        };
        for (id, params) in rows {
            let p: RecordedParams = serde_json::from_str(&params).map_err(|e| {
                Error::Input(format!("ledger {}: release {id} has unreadable parameters: {e}", path.display()))
            })?;
            let curve = serde_json::to_string(&derived_curve(&p)?).map_err(|e| Error::Input(format!("ledger: {e}")))?;
            tx.execute(
                "UPDATE releases SET curve = ?2, migrated_by = ?3 WHERE id = ?1",
                params![id, curve, GPDP_VERSION],
            )
            .map_err(|e| db(e, path))?;
        }
        tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};")).map_err(|e| db(e, path))?;
    }
    tx.commit().map_err(|e| db(e, path))
}

/// This gpdp's version, as entries record it.
pub const GPDP_VERSION: &str = env!("CARGO_PKG_VERSION");

mod erased {
    /// A value serialised to JSON (one closure for several types).
    pub trait Json {
        fn json(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> serde_json::Result<String> {
            serde_json::to_string(self)
        }
    }
}

#[cfg(test)]
mod tests;
