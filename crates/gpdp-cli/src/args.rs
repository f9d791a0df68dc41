//! Command-line arguments shared by `account`, `calibrate` and `release`.

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp::privacy::SensitivityConstants;
use gpdp::spec::ModelSpec;
use gpdp::{BoundChoice, Domain, Draws, KernelKind, ReleaseParams, SensitivityChoice, Solve};

/// Parses a finite float: NaN and ±∞ are refused (a NaN would pass every
/// `>` check unnoticed; an infinite bound or budget is never meant).
pub fn parse_f64(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number"))?;
    if v.is_finite() { Ok(v) } else { Err(format!("'{s}' is not a finite number")) }
}

/// Parses the kernel scale σ: a finite float, or `inf`/`∞` (the documented
/// covariance-only bound).
pub fn parse_scale(s: &str) -> std::result::Result<f64, String> {
    let t = s.trim();
    if t == "∞" || t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("+inf") {
        return Ok(f64::INFINITY);
    }
    parse_f64(s).map_err(|e| format!("{e} (σ may be a finite number > 0 or inf)"))
}

/// Parses the kernel scale σ of a release: a finite float (a release draws
/// from the posterior, whose mean term needs a finite σ; σ = inf is the
/// covariance-only bound of `gpdp account` and `gpdp calibrate`).
pub fn parse_release_scale(s: &str) -> std::result::Result<f64, String> {
    match parse_scale(s) {
        Ok(v) if v.is_infinite() => Err(format!(
            "'{s}': a release needs a finite σ > 0 (σ = inf, the covariance-only bound, is for `gpdp account` and `gpdp calibrate`)"
        )),
        other => other,
    }
}

/// Parses a unit label (e.g. µg/m³): printable text of at most 40
/// characters — it is drawn into figures and written into SVG, where a
/// control character is not even allowed.
pub fn parse_units(s: &str) -> std::result::Result<String, String> {
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{:?}: the unit label holds the control character {} — give printable text such as µg/m³",
            gpdp::io::excerpt(s),
            c.escape_unicode()
        ));
    }
    if s.trim().is_empty() {
        return Err("the unit label is empty; give e.g. µg/m³, or leave --units out".into());
    }
    if s.chars().count() > 40 {
        return Err(format!("{:?}: a unit label of at most 40 characters, please", gpdp::io::excerpt(s)));
    }
    Ok(s.trim().to_string())
}

/// The public description of a release: kernel, domain, sizes and knobs.
#[derive(Args, Debug, Clone)]
pub struct ReleaseArgs {
    /// Kernel k (normalised, isotropic, Euclidean distance d): exponential
    /// exp(−d/ℓ), matern32, matern52, squared-exponential exp(−d²/2ℓ²),
    /// constant, diagonal.
    #[arg(long, value_name = "KERNEL")]
    pub kernel: Option<KernelKind>,

    /// Kernel lengthscale ℓ > 0, in the units of the covariates (ignored by
    /// the constant and diagonal kernels).
    #[arg(long, value_name = "ℓ", value_parser = parse_f64)]
    pub lengthscale: Option<f64>,

    /// Covariate domain Ω (where every private covariate lies; gives κ =
    /// k(diam Ω)): interval:a,b | box:a1,b1,a2,b2,… | ball:c1,…,cd,radius.
    #[arg(long, value_name = "SPEC")]
    pub domain: Option<Domain>,

    /// Effective ridge r > 0 (r² = noise variance λ² / kernel scale σ²).
    /// Larger r = more private.
    #[arg(long, value_name = "r", value_parser = parse_f64)]
    pub ridge: Option<f64>,

    /// Kernel scale σ > 0 (prior GP(0, σ²k)), or `inf` for a
    /// covariance-only release. Larger σ = more private (mean term only).
    /// Units: σ (and η) are in the responses' units — the prior sd of f
    /// around the prior mean, which is (LO + HI)/2 with --response-range
    /// LO,HI and 0 with --response-bound M_Y. A σ of 0.1–1 times the
    /// range's half-width (or M_Y) is usual; report.json's
    /// data_policy.scale_meaning says it in words.
    /// For a release, σ = 0 with --gp-noise η > 0 releases μ_D + GP(0, η²k),
    /// whose noise does not depend on the data: exact Gaussian accounting
    /// (docs/proofs/data-free-noise.md).
    #[arg(long, value_name = "σ", value_parser = parse_scale)]
    pub scale: Option<f64>,

    /// Standard deviation scale η ≥ 0 of independent GP(0, η²k) noise added
    /// to each released path (Proposition 2), in the units of σ.
    #[arg(long = "gp-noise", value_name = "η", value_parser = parse_f64)]
    pub gp_noise: Option<f64>,

    /// Number L ≥ 1 of independent posterior draws released (composition).
    #[arg(long, value_name = "L")]
    pub draws: Option<Draws>,

    /// Response bound M_Y > 0: every |y_i| ≤ M_Y (the data must be clipped
    /// or rejected accordingly).
    #[arg(long = "response-bound", value_name = "M_Y", value_parser = parse_f64)]
    pub response_bound: Option<f64>,

    /// Which bound on the mean sensitivity Δ_n: auto (the smallest valid
    /// one), generic (B.1; with --bound tight the smallest of B.1, coupled
    /// and operator), exponential-1d (B.7), constant (B.4), diagonal (B.5),
    /// rkhs (B.8, needs --rkhs-norm and, in a release, --assume-rkhs-responses;
    /// half the paper's constant with --bound tight).
    #[arg(long, value_name = "LEMMA")]
    pub sensitivity: Option<SensitivityChoice>,

    /// RKHS norm B = ‖f*‖_H of the noiseless response function, for
    /// --sensitivity rkhs (Lemma B.8).
    #[arg(long = "rkhs-norm", value_name = "B", value_parser = parse_f64)]
    pub rkhs_norm: Option<f64>,

    /// RDP → (ε, δ) conversion: improved (Canonne–Kamath–Steinke 2020 /
    /// Balle et al. 2020; tighter) or paper (Mironov 2017, as in the paper);
    /// or pld: exact privacy-loss-distribution accounting (much tighter),
    /// proven only for covariance-only releases (--scale inf, --gp-noise 0;
    /// docs/proofs/pld-covariance-only.md) and not usable with a ledger.
    #[arg(long, value_name = "CONV")]
    pub conversion: Option<gpdp::Accounting>,

    /// Which proven bound: tight (default; the signed covariance term, the
    /// generic sensitivity min(B.1, coupled, operator), B.8 with half the
    /// constant, the bounded-mean refinement for the 1-D exponential kernel —
    /// docs/proofs/tight-accountant.md), joint (the tight bound or, for a
    /// finite σ without GP noise, the certified supremum of the exact
    /// two-point divergence over the proven region, whichever is smaller at
    /// each order — docs/proofs/joint-accountant.md; the tightest, and the
    /// slowest: 10–50 ms per new query, cached) or paper (Theorem 3.1 /
    /// Prop. 2 with the paper's lemmas, as the paper states them).
    #[arg(long, value_name = "BOUND")]
    pub bound: Option<BoundChoice>,
}

/// The bound of a study: `--bound`, else tight — or paper with the published
/// constants, which are the paper's bound with Δ̂/√2 (`--bound tight` with
/// them is refused).
pub fn study_bound(flag: Option<BoundChoice>, constants: SensitivityConstants) -> Result<BoundChoice> {
    match (flag, constants) {
        (Some(BoundChoice::Tight | BoundChoice::Joint), SensitivityConstants::Published) => bail!(
            "--sensitivity-constants published reproduces the paper's tables, which use the paper's bound: give --bound paper (the default with published constants) or use the proven constants"
        ),
        (Some(b), _) => Ok(b),
        (None, SensitivityConstants::Published) => Ok(BoundChoice::Paper),
        (None, SensitivityConstants::Proven) => Ok(BoundChoice::Tight),
    }
}

/// What a study's accountant was, in words, for its summaries; `lemma` is
/// the paper's lemma for the study (B.7 in 1-D, B.1 in 2-D).
pub fn accountant_words(bound: BoundChoice, constants: SensitivityConstants, lemma: &str) -> String {
    match (constants.label(), bound) {
        (Some(label), _) => {
            format!("published constants (the paper's bound with the Lemma {lemma} bound divided by √2) — this {label}")
        }
        (None, BoundChoice::Paper) => format!("the paper's bound (Theorem 3.1 with Lemma {lemma}), proven constants"),
        (None, BoundChoice::Joint) => "the joint bound (the tight bound, or the certified joint supremum of the exact two-point divergence where smaller; docs/proofs/joint-accountant.md)".to_string(),
        (None, BoundChoice::Tight) => "the tight bound (signed covariance term, the smallest valid sensitivity bound; docs/proofs/tight-accountant.md)".to_string(),
    }
}

/// Refuses with every missing flag at once (one line).
pub fn require(missing: Vec<&str>) -> Result<()> {
    require_with_example(missing, None)
}

/// [`require`], ending the line with a complete example command.
pub fn require_with_example(missing: Vec<&str>, example: Option<&str>) -> Result<()> {
    let eg = example.map(|e| format!(" — e.g. {e}")).unwrap_or_default();
    match missing.len() {
        0 => Ok(()),
        1 => bail!("missing required flag {}{eg}", missing[0]),
        _ => bail!("missing required flags: {}{eg}", missing.join("; ")),
    }
}

/// A complete `gpdp release` command, shown with its missing flags.
pub const RELEASE_EXAMPLE: &str = "gpdp release --data readings.csv --x easting,northing --y pm25 --response-range 0,60 --units µg/m³ --kernel matern32 --lengthscale 2000 --domain box:500000,510000,180000,190000 --scale 30 --target-epsilon 1 --delta 1e-5 --grid 200 --snap grid --out release/";

/// A complete `gpdp account` command, shown with its missing flags.
pub const ACCOUNT_EXAMPLE: &str = "gpdp account --n 400 --kernel exponential --lengthscale 0.14 --domain box:0,1,0,1 --ridge 5.7 --scale 0.12 --delta 1e-5";

/// Fully resolved release parameters (defaults applied).
#[derive(Debug, Clone)]
pub struct Resolved {
    pub params: ReleaseParams,
    pub draws: Draws,
    pub conversion: gpdp::Accounting,
}

impl ReleaseArgs {
    /// Refuses `--conversion pld` and `--bound joint|paper` where the
    /// guarantee is the exact Gaussian statement (`why`: σ = 0, data-free
    /// noise; or change-one-response), which uses neither: a flag that
    /// would be silently ignored is refused instead.
    pub fn refuse_unused_accounting(&self, why: &str) -> Result<()> {
        let pld = matches!(self.conversion, Some(gpdp::Accounting::Pld));
        let bound = self.bound.filter(|b| *b != BoundChoice::Tight);
        if pld || bound.is_some() {
            let flag = match (pld, bound) {
                (true, Some(b)) => format!("--conversion pld and --bound {b}"),
                (true, None) => "--conversion pld".to_string(),
                (false, Some(b)) => format!("--bound {b}"),
                (false, None) => unreachable!(),
            };
            bail!(
                "{flag} does not apply here: {why}, so the guarantee is the Gaussian mechanism's exact (ε, δ) profile at its distance μ (docs/proofs/change-response.md), with no RDP bound or PLD conversion to choose — drop {flag}"
            );
        }
        Ok(())
    }

    /// The model flags that are required and absent, each with what it is
    /// (`need_ridge`/`need_scale` are false when that parameter is solved for).
    pub fn missing(&self, need_ridge: bool, need_scale: bool) -> Vec<&'static str> {
        let mut m = Vec::new();
        match self.kernel {
            None => m.push("--kernel (exponential, matern32, matern52, squared-exponential, constant, diagonal)"),
            Some(k) if k.has_lengthscale() && self.lengthscale.is_none() => m.push("--lengthscale ℓ"),
            Some(_) => {}
        }
        if self.domain.is_none() {
            m.push("--domain (e.g. interval:0,1 or box:0,1,0,1)");
        }
        if need_ridge && self.ridge.is_none() {
            m.push("--ridge r");
        }
        if need_scale && self.scale.is_none() {
            m.push("--scale σ (inf for a covariance-only release)");
        }
        m
    }

    /// The model flags as spec keys: the one mapping of these flags (each
    /// `--k-e-y` is the key `k_e_y`), shared by `gpdp release` (through
    /// [`gpdp::ReleaseSpec::from_model`]), `account` and `calibrate`.
    pub fn model(&self) -> Result<ModelSpec> {
        let kernel = self.kernel.context("missing --kernel")?;
        let domain = self.domain.clone().context("missing --domain (e.g. interval:0,1 or box:0,1,0,1)")?;
        let mut m = ModelSpec::new(kernel, domain);
        m.lengthscale = self.lengthscale;
        m.ridge = self.ridge;
        m.scale = self.scale;
        m.gp_noise = self.gp_noise;
        m.response_bound = self.response_bound;
        m.sensitivity = self.sensitivity.unwrap_or_default();
        m.rkhs_norm = self.rkhs_norm;
        m.bound = self.bound.unwrap_or_default();
        Ok(m)
    }

    /// The release's parameters for n records, every missing flag named at
    /// once; `solving` is the parameter a calibration solves for.
    pub fn resolve(&self, n: usize, solving: Option<Solve>) -> Result<Resolved> {
        require(self.missing(solving != Some(Solve::Ridge), solving != Some(Solve::Scale)))?;
        let params = self.model()?.release_params(n, solving)?;
        let draws = self.draws.unwrap_or_default();
        Ok(Resolved { params, draws, conversion: self.conversion.unwrap_or_default() })
    }
}
