//! The sharded studies as data: one typed, serialisable configuration per
//! study ([`Excursion1dStudy`], [`Excursion2dStudy`], [`MiaSweepStudy`],
//! [`ThompsonStudy`]),
//! the [`Study`] a shard file records, and [`merge_files`], which merges the
//! shard files of one run into the study's typed results ([`MergedStudy`]).
//!
//! A configuration holds every setting that determines the study's results
//! (sizes, grids, seeds, accountant settings) and nothing that does not (the
//! output folder, threads, progress, time limits, `--force`). Two runs with
//! equal configurations and the same gpdp version give the same results, so
//! shards merge exactly when their configurations are equal. Every
//! configuration refuses unknown fields when it is read.
//!
//! A front end maps its own spelling (e.g. the CLI's flags) onto these
//! types in one place, runs the units they define, and writes its outputs
//! from the configuration and the results only — so that the merged run
//! and the unsharded one write the same bytes.

use gpdp::privacy::SensitivityConstants;
use gpdp::{BoundChoice, Conversion, Draws};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::excursion::pairs1d::TargetRejection;
use crate::excursion::study1d::{Study1dConfig, Study1dOutcome, Study1dResult, paper_search_spec};
use crate::excursion::study2d::{Study2dConfig, Study2dResult};
use crate::mia::{Design, MiaConfig, SweepRow, SweepSpec, sweep_configs};
use crate::shard::{self, ShardFile};
pub use crate::thompson::ThompsonStudy;
use crate::thompson::UnitResult;

/// (De)serialises a value by its name (`Display` / `FromStr`), for the gpdp
/// enums that are not `Deserialize` themselves (the conversion, the bound).
mod by_name {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, T, D>(d: D) -> std::result::Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// The 1-D excursion-set study (`gpdp excursion 1d`): one study per
/// (n, M_ξ) in `sizes` × `noises` (sizes outermost), each a
/// [`Study1dConfig`] ([`Excursion1dStudy::units`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Excursion1dStudy {
    /// Training-set sizes n, one study each.
    pub sizes: Vec<usize>,
    /// Noise bounds M_ξ, one study each.
    pub noises: Vec<f64>,
    /// Main (D, f*) pairs.
    pub pairs: usize,
    /// Validation pairs (the cutoffs only).
    pub validation_pairs: usize,
    /// Monte Carlo repetitions B of the release per pair.
    pub draws_per_pair: usize,
    /// Paths per release L.
    pub draws: Draws,
    /// Privacy budget ε₀ (feasible: ε < ε₀).
    pub epsilon_max: f64,
    /// δ.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    #[serde(with = "by_name")]
    pub conversion: Conversion,
    /// Constants of Lemma B.7.
    pub sensitivity_constants: SensitivityConstants,
    /// The accountant's proven bound (resolved: never "the default").
    #[serde(with = "by_name")]
    pub bound: BoundChoice,
    /// Mesh points m on [0, 1].
    pub mesh_points: usize,
    /// ℓ_gen of the generating GP.
    pub generating_lengthscale: f64,
    /// Redrawing of degenerate targets (`None`: off, as in the paper).
    pub target_rejection: Option<TargetRejection>,
    /// Coarse grid of lengthscales ℓ.
    pub lengthscales: Vec<f64>,
    /// Coarse grid of ridges r.
    pub ridges: Vec<f64>,
    /// Coarse grid of scales σ.
    pub scales: Vec<f64>,
    /// Refinement rounds of the unconstrained search.
    pub rounds: usize,
    /// Refinement rounds of the constrained search.
    pub private_rounds: usize,
    /// Anchors per refinement round.
    pub top_k: usize,
    /// Refinement factors for ℓ.
    pub ell_factors: Vec<f64>,
    /// Refinement factors for r.
    pub ridge_factors: Vec<f64>,
    /// Refinement factors for σ > 0.
    pub scale_factors: Vec<f64>,
    /// σ values tried around an anchor with σ = 0.
    pub zero_scale_values: Vec<f64>,
    /// Points of the cutoff grid for C.
    pub cutoff_points: usize,
    /// Base seed.
    pub seed: u64,
}

impl Excursion1dStudy {
    /// The study's units, in unit order: (n, M_ξ) over `sizes` × `noises`.
    /// Not validated here (`Study1dConfig::validate`, which running a unit
    /// calls, names the offending field).
    pub fn units(&self) -> Vec<Study1dConfig> {
        let mut search = paper_search_spec();
        search.lengthscales = self.lengthscales.clone();
        search.ridges = self.ridges.clone();
        search.scales = self.scales.clone();
        search.rounds = self.rounds;
        search.top_k = self.top_k;
        search.ell_factors = self.ell_factors.clone();
        search.ridge_factors = self.ridge_factors.clone();
        search.scale_factors = self.scale_factors.clone();
        search.zero_scale_values = self.zero_scale_values.clone();
        let mut out = Vec::new();
        for &n in &self.sizes {
            for &noise in &self.noises {
                out.push(Study1dConfig {
                    n,
                    noise,
                    pairs: self.pairs,
                    validation_pairs: self.validation_pairs,
                    mesh_points: self.mesh_points,
                    generating_lengthscale: self.generating_lengthscale,
                    target_rejection: self.target_rejection,
                    draws_per_pair: self.draws_per_pair,
                    draws: self.draws,
                    epsilon_max: self.epsilon_max,
                    delta: self.delta,
                    conversion: self.conversion,
                    constants: self.sensitivity_constants,
                    bound: self.bound,
                    search: search.clone(),
                    private_rounds: self.private_rounds,
                    cutoff_points: self.cutoff_points,
                    seed: self.seed,
                    ..Study1dConfig::default()
                });
            }
        }
        out
    }
}

/// The 2-D excursion-set study (`gpdp excursion 2d`): one study per M_ξ in
/// `noises`, each a [`Study2dConfig`] ([`Excursion2dStudy::units`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Excursion2dStudy {
    /// Noise half-widths M_ξ, one study each.
    pub noises: Vec<f64>,
    /// Sensors n.
    pub n: usize,
    /// Worlds of the hyperparameter search.
    pub search_worlds: usize,
    /// Worlds for the cutoff C.
    pub validation_worlds: usize,
    /// Evaluation worlds.
    pub eval_worlds: usize,
    /// Evaluation grid points per axis.
    pub eval_grid: usize,
    /// Search grid points per axis.
    pub search_grid: usize,
    /// Path grid points per axis.
    pub path_grid: usize,
    /// Private paths per evaluation world.
    pub paths_per_world: Draws,
    /// Gaussian smoothing of released paths, in path-grid cells.
    pub smooth: f64,
    /// ε₀.
    pub epsilon_max: f64,
    /// δ (resolved: the CLI's default is n^−1.1).
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    #[serde(with = "by_name")]
    pub conversion: Conversion,
    /// Constants of Lemma B.1.
    pub sensitivity_constants: SensitivityConstants,
    /// The accountant's proven bound (resolved).
    #[serde(with = "by_name")]
    pub bound: BoundChoice,
    /// Refinement rounds of the search.
    pub rounds: usize,
    /// Anchors per refinement round.
    pub top_k: usize,
    /// Plume sigmoid steepness γ.
    pub gamma: f64,
    /// Plume sigmoid centre quantile.
    pub quantile: f64,
    /// Master seed.
    pub seed: u64,
}

impl Excursion2dStudy {
    /// The study's units, in unit order (one per M_ξ). Not validated here
    /// (`Study2dConfig::validate` names the offending field).
    pub fn units(&self) -> Vec<Study2dConfig> {
        self.noises
            .iter()
            .map(|&noise| {
                let mut cfg = Study2dConfig::new(noise);
                cfg.n = self.n;
                cfg.search_worlds = self.search_worlds;
                cfg.validation_worlds = self.validation_worlds;
                cfg.eval_worlds = self.eval_worlds;
                cfg.eval_grid = self.eval_grid;
                cfg.search_grid = self.search_grid;
                cfg.path_grid = self.path_grid;
                cfg.paths_per_world = self.paths_per_world;
                cfg.smooth_px = self.smooth;
                cfg.epsilon_max = self.epsilon_max;
                cfg.delta = self.delta;
                cfg.conversion = self.conversion;
                cfg.constants = self.sensitivity_constants;
                cfg.bound = self.bound;
                cfg.spec.rounds = self.rounds;
                cfg.spec.top_k = self.top_k;
                cfg.plume.gamma = self.gamma;
                cfg.plume.quantile = self.quantile;
                cfg.seed = self.seed;
                cfg
            })
            .collect()
    }
}

/// The membership-inference sweep (`gpdp mia sweep`): the attack for every
/// (r, σ, L) in `ridges` × finite `scales` × `draws` (ridges outermost).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MiaSweepStudy {
    /// Dataset size n.
    pub n: usize,
    /// Target covariate x₀.
    pub x0: f64,
    /// Target response y₀.
    pub y0: f64,
    /// Lengthscale ℓ.
    pub lengthscale: f64,
    /// Label noise M_ξ.
    pub label_noise: f64,
    /// Covariate design.
    pub design: Design,
    /// Shadow datasets per hypothesis.
    pub shadow: usize,
    /// Evaluation datasets per hypothesis.
    pub eval: usize,
    /// Independent repetitions.
    pub repeats: usize,
    /// Master seed.
    pub seed: u64,
    /// δ of the printed ε.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    #[serde(with = "by_name")]
    pub conversion: Conversion,
    /// The accountant's proven bound.
    #[serde(with = "by_name")]
    pub bound: BoundChoice,
    /// Ridges r.
    pub ridges: Vec<f64>,
    /// Scales σ as given, σ = ∞ included (drawn in the ε-vs-r figure only;
    /// the attack runs for the finite ones).
    pub scales: Vec<f64>,
    /// Draws L.
    pub draws: Vec<Draws>,
}

impl MiaSweepStudy {
    /// The attack's settings shared by every unit.
    pub fn base(&self) -> MiaConfig {
        MiaConfig {
            n: self.n,
            lengthscale: self.lengthscale,
            label_noise: self.label_noise,
            target_x: self.x0,
            target_y: self.y0,
            design: self.design,
            n_shadow: self.shadow,
            n_eval: self.eval,
            repeats: self.repeats,
            seed: self.seed,
            delta: self.delta,
            conversion: self.conversion,
            bound: self.bound,
            ..MiaConfig::default()
        }
    }

    /// The grid of the attack: the ridges, the finite scales, the draws.
    pub fn spec(&self) -> SweepSpec {
        SweepSpec {
            ridges: self.ridges.clone(),
            scales: self.scales.iter().copied().filter(|s| s.is_finite()).collect(),
            draws: self.draws.clone(),
        }
    }

    /// Every unit's configuration, in unit order, validated.
    pub fn units(&self) -> Result<Vec<MiaConfig>> {
        sweep_configs(&self.base(), &self.spec())
    }
}

/// A sharded study and its settings: what a shard file records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
// One value per run or shard file: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Study {
    /// `excursion 1d`.
    Excursion1d(Excursion1dStudy),
    /// `excursion 2d`.
    Excursion2d(Excursion2dStudy),
    /// `mia sweep`.
    MiaSweep(MiaSweepStudy),
    /// `thompson study`.
    Thompson(ThompsonStudy),
}

impl Study {
    /// The study's name as the CLI spells its command, e.g. `mia sweep`.
    pub fn name(&self) -> &'static str {
        match self {
            Study::Excursion1d(_) => "excursion 1d",
            Study::Excursion2d(_) => "excursion 2d",
            Study::MiaSweep(_) => "mia sweep",
            Study::Thompson(_) => "thompson study",
        }
    }
}

/// A shard file of one of the studies, with results of type `T`.
pub type StudyShard<T> = ShardFile<Study, T>;

/// The merged results of a sharded study, typed per study, with the study's
/// configuration: everything its writer needs.
#[derive(Debug, Clone)]
// One value per merge: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum MergedStudy {
    /// `excursion 1d`: one result per (n, M_ξ), in unit order.
    Excursion1d {
        /// The configuration.
        study: Excursion1dStudy,
        /// The results.
        results: Vec<Study1dResult>,
    },
    /// `excursion 2d`: one result per M_ξ, in unit order.
    Excursion2d {
        /// The configuration.
        study: Excursion2dStudy,
        /// The results.
        results: Vec<Study2dResult>,
    },
    /// `mia sweep`: one row per (r, σ, L), in unit order.
    MiaSweep {
        /// The configuration.
        study: MiaSweepStudy,
        /// The rows.
        rows: Vec<SweepRow>,
    },
    /// `thompson study`: one result per (function, method, seed), in unit
    /// order.
    Thompson {
        /// The configuration.
        study: ThompsonStudy,
        /// The results.
        results: Vec<UnitResult>,
    },
}

/// Decodes every file as a shard with results `T` and merges them.
fn merge_typed<T: serde::de::DeserializeOwned>(files: &[(String, Vec<u8>)]) -> Result<(Study, Vec<T>)> {
    let decoded = files
        .iter()
        .map(|(name, bytes)| Ok((name.clone(), shard::from_bytes::<Study, T>(name, bytes)?)))
        .collect::<Result<Vec<_>>>()?;
    let merged = shard::merge(decoded)?;
    Ok((merged.study, merged.results))
}

/// The refusal of a study whose units do not match the shards' results.
fn unit_mismatch(study: &Study, units: usize, results: usize) -> Error {
    Error::Shard(format!(
        "merge: the {} settings define {units} unit(s) but the shards hold {results} — not shards of this gpdp",
        study.name()
    ))
}

/// Merges the shard files of one run, each given as (name for messages,
/// bytes): checks every file (checksum, format, trailing bytes), that all
/// are of one study with equal settings (a difference is refused naming the
/// first differing setting), that they cover every unit exactly once, and
/// returns the study's results in unit order, typed per study. A file of an
/// older shard format is refused, saying that it must be re-run.
pub fn merge_files(files: &[(String, Vec<u8>)]) -> Result<MergedStudy> {
    let Some((first_name, first_bytes)) = files.first() else {
        return Err(Error::Shard("merge: no shard given".into()));
    };
    let first: Study = shard::study_of(first_name, first_bytes)?;
    for (name, bytes) in &files[1..] {
        let s: Study = shard::study_of(name, bytes)?;
        if std::mem::discriminant(&s) != std::mem::discriminant(&first) {
            return Err(Error::Shard(format!(
                "merge: {name} is a shard of {}, but {first_name} is a shard of {} — not shards of one run",
                s.name(),
                first.name()
            )));
        }
    }
    match first {
        Study::Excursion1d(_) => {
            let (study, outcomes) = merge_typed::<Study1dOutcome>(files)?;
            let Study::Excursion1d(st) = &study else { unreachable!("checked above") };
            let units = st.units();
            if units.len() != outcomes.len() {
                return Err(unit_mismatch(&study, units.len(), outcomes.len()));
            }
            let results = units.into_iter().zip(outcomes).map(|(c, o)| Study1dResult::from_outcome(c, o)).collect();
            let Study::Excursion1d(study) = study else { unreachable!("checked above") };
            Ok(MergedStudy::Excursion1d { study, results })
        }
        Study::Excursion2d(_) => {
            let (study, results) = merge_typed::<Study2dResult>(files)?;
            let Study::Excursion2d(st) = &study else { unreachable!("checked above") };
            let units = st.units().len();
            if units != results.len() {
                return Err(unit_mismatch(&study, units, results.len()));
            }
            let Study::Excursion2d(study) = study else { unreachable!("checked above") };
            Ok(MergedStudy::Excursion2d { study, results })
        }
        Study::MiaSweep(_) => {
            let (study, rows) = merge_typed::<SweepRow>(files)?;
            let Study::MiaSweep(st) = &study else { unreachable!("checked above") };
            let units = st.units()?.len();
            if units != rows.len() {
                return Err(unit_mismatch(&study, units, rows.len()));
            }
            let Study::MiaSweep(study) = study else { unreachable!("checked above") };
            Ok(MergedStudy::MiaSweep { study, rows })
        }
        Study::Thompson(_) => {
            let (study, results) = merge_typed::<UnitResult>(files)?;
            let Study::Thompson(st) = &study else { unreachable!("checked above") };
            let units = st.units().len();
            if units != results.len() {
                return Err(unit_mismatch(&study, units, results.len()));
            }
            let Study::Thompson(study) = study else { unreachable!("checked above") };
            Ok(MergedStudy::Thompson { study, results })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::{Shard, to_bytes};
    use ciborium::Value;

    fn excursion1d() -> Excursion1dStudy {
        Excursion1dStudy {
            sizes: vec![50, 100],
            noises: vec![0.1, 0.5],
            pairs: 20,
            validation_pairs: 10,
            draws_per_pair: 5,
            draws: Draws::ONE,
            epsilon_max: 10.0,
            delta: 0.005,
            conversion: Conversion::Paper,
            sensitivity_constants: SensitivityConstants::Published,
            bound: BoundChoice::Paper,
            mesh_points: 100,
            generating_lengthscale: 1.0,
            target_rejection: Some(TargetRejection::default()),
            lengthscales: vec![0.1, 1.0],
            ridges: vec![0.1],
            scales: vec![0.0, 1.0],
            rounds: 1,
            private_rounds: 2,
            top_k: 2,
            ell_factors: vec![1.0],
            ridge_factors: vec![1.0, 2.0],
            scale_factors: vec![0.5],
            zero_scale_values: vec![0.0, 0.1],
            cutoff_points: 11,
            seed: 7,
        }
    }

    fn excursion2d() -> Excursion2dStudy {
        Excursion2dStudy {
            noises: vec![0.1, 0.3],
            n: 40,
            search_worlds: 2,
            validation_worlds: 2,
            eval_worlds: 3,
            eval_grid: 10,
            search_grid: 8,
            path_grid: 8,
            paths_per_world: Draws::new(2).unwrap(),
            smooth: 1.5,
            epsilon_max: 10.0,
            delta: 40f64.powf(-1.1),
            conversion: Conversion::Improved,
            sensitivity_constants: SensitivityConstants::Proven,
            bound: BoundChoice::Tight,
            rounds: 1,
            top_k: 1,
            gamma: 5.0,
            quantile: 0.65,
            seed: 3,
        }
    }

    fn mia_sweep() -> MiaSweepStudy {
        MiaSweepStudy {
            n: 5,
            x0: 0.5,
            y0: 1.0,
            lengthscale: 1.0,
            label_noise: 0.0,
            design: Design::Stratified,
            shadow: 100,
            eval: 100,
            repeats: 1,
            seed: 11,
            delta: 0.05,
            conversion: Conversion::Improved,
            bound: BoundChoice::Tight,
            ridges: vec![0.1, 1.0],
            scales: vec![0.5, f64::INFINITY],
            draws: vec![Draws::ONE, Draws::new(3).unwrap()],
        }
    }

    fn thompson() -> ThompsonStudy {
        use crate::thompson::TestFunction;
        let mut st = ThompsonStudy::new(vec![TestFunction::Forrester, TestFunction::Hartmann3]);
        st.rounds = vec![3, 2];
        st.seeds = 2;
        st.epsilons = vec![2.0];
        st.grid_1d = 16;
        st.candidates = 16;
        st
    }

    #[test]
    fn merged_thompson_study_equals_the_unsharded_study() {
        use crate::thompson::run_shard;
        let study = thompson();
        let whole: Vec<UnitResult> =
            run_shard(&study, Shard::ALL, &|_, _, _| ()).unwrap().into_iter().map(|r| r.1).collect();
        let units = study.units().len();
        let mut files: Vec<(String, Vec<u8>)> = (0..3)
            .map(|i| {
                let sh = Shard { index: i, count: 3 };
                let res = run_shard(&study, sh, &|_, _, _| ()).unwrap();
                let file = ShardFile::new(Study::Thompson(study.clone()), sh, units, res);
                (format!("shard-{i}/shard.cbor"), to_bytes(&file).unwrap())
            })
            .collect();
        files.reverse();
        let MergedStudy::Thompson { study: merged, results } = merge_files(&files).unwrap() else {
            panic!("a thompson study")
        };
        assert_eq!(merged, study);
        assert_eq!(cbor(&results), cbor(&whole));
    }

    fn cbor<T: Serialize>(v: &T) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::into_writer(v, &mut out).unwrap();
        out
    }

    #[test]
    fn every_study_config_round_trips_through_serde() {
        for study in [
            Study::Excursion1d(excursion1d()),
            Study::Excursion2d(excursion2d()),
            Study::MiaSweep(mia_sweep()),
            Study::Thompson(thompson()),
        ] {
            let bytes = cbor(&study);
            let back: Study = ciborium::from_reader(&bytes[..]).unwrap();
            assert_eq!(back, study, "{}", study.name());
            assert_eq!(cbor(&back), bytes, "{}: re-encoding", study.name());
        }
        // The enums without their own Deserialize travel by name.
        let v = Value::serialized(&Study::MiaSweep(mia_sweep())).unwrap();
        let Value::Map(outer) = &v else { panic!("a map") };
        assert_eq!(outer[0].0, Value::Text("mia_sweep".into()));
        let Value::Map(fields) = &outer[0].1 else { panic!("a map") };
        let field = |k: &str| fields.iter().find(|(key, _)| *key == Value::Text(k.into())).map(|e| e.1.clone());
        assert_eq!(field("conversion"), Some(Value::Text("improved".into())));
        assert_eq!(field("bound"), Some(Value::Text("tight".into())));
        assert_eq!(field("design"), Some(Value::Text("stratified".into())));
    }

    #[test]
    fn study_configs_refuse_unknown_fields_and_bad_names() {
        let v = Value::serialized(&Study::Excursion2d(excursion2d())).unwrap();
        type Fields = Vec<(Value, Value)>;
        let with = |edit: &dyn Fn(&mut Fields)| {
            let mut v = v.clone();
            let Value::Map(outer) = &mut v else { panic!() };
            let Value::Map(fields) = &mut outer[0].1 else { panic!() };
            edit(fields);
            ciborium::from_reader::<Study, _>(&cbor(&v)[..]).map_err(|e| e.to_string())
        };
        let e = with(&|f| f.push((Value::Text("threads".into()), Value::Integer(4.into())))).unwrap_err();
        assert!(e.contains("threads"), "{e}");
        let e = with(&|f| {
            for (k, val) in f.iter_mut() {
                if *k == Value::Text("conversion".into()) {
                    *val = Value::Text("bogus".into());
                }
            }
        })
        .unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        assert!(with(&|_| ()).is_ok());
    }

    #[test]
    fn units_follow_the_settings_in_unit_order() {
        let u = excursion1d().units();
        let order: Vec<(usize, f64)> = u.iter().map(|c| (c.n, c.noise)).collect();
        assert_eq!(order, vec![(50, 0.1), (50, 0.5), (100, 0.1), (100, 0.5)]);
        assert!(u.iter().all(|c| c.seed == 7 && c.search.ridge_factors == vec![1.0, 2.0] && c.private_rounds == 2));
        let u = excursion2d().units();
        assert_eq!(u.iter().map(|c| c.noise).collect::<Vec<_>>(), vec![0.1, 0.3]);
        assert!(u.iter().all(|c| c.n == 40 && c.smooth_px == 1.5 && c.spec.top_k == 1 && c.plume.quantile == 0.65));
        let u = mia_sweep().units().unwrap();
        assert_eq!(u.len(), 4, "σ = ∞ is not a unit");
        assert!(u.iter().all(|c| c.scale == 0.5 && c.design == Design::Stratified && c.seed == 11));
    }

    /// The shard files of `study`'s N shards, each running its own units.
    fn mia_shards(study: &MiaSweepStudy, n: usize) -> Vec<(String, Vec<u8>)> {
        (0..n)
            .map(|i| {
                let sh = Shard { index: i, count: n };
                let rows = crate::mia::sweep_shard(&study.base(), &study.spec(), sh, &|_| ()).unwrap();
                let file = ShardFile::new(Study::MiaSweep(study.clone()), sh, study.units().unwrap().len(), rows);
                (format!("shard-{i}/shard.cbor"), to_bytes(&file).unwrap())
            })
            .collect()
    }

    #[test]
    fn merged_mia_sweep_equals_the_unsharded_sweep() {
        let study = mia_sweep();
        let whole: Vec<SweepRow> = crate::mia::sweep_shard(&study.base(), &study.spec(), Shard::ALL, &|_| ())
            .unwrap()
            .into_iter()
            .map(|r| r.1)
            .collect();
        let mut files = mia_shards(&study, 3);
        files.reverse();
        let MergedStudy::MiaSweep { study: merged_study, rows } = merge_files(&files).unwrap() else {
            panic!("a mia sweep")
        };
        assert_eq!(merged_study, study);
        assert_eq!(rows.len(), 4);
        // Equal to the bit: the CSV and figures are written from these rows.
        assert_eq!(cbor(&rows), cbor(&whole));
        assert_eq!(rows, whole);
    }

    #[test]
    fn merge_files_refuses_other_settings_studies_and_missing_shards() {
        let study = mia_sweep();
        let files = mia_shards(&study, 2);
        // Shard 1 of a run with another seed: refused naming the setting.
        let mut other = study.clone();
        other.seed = 12;
        let mixed = vec![files[0].clone(), mia_shards(&other, 2).remove(1)];
        let e = merge_files(&mixed).unwrap_err().to_string();
        assert!(e.contains("shard-1/shard.cbor has setting mia_sweep.seed = 12, where the first has 11"), "{e}");
        // A shard of another study.
        let sh = Shard { index: 1, count: 2 };
        let other_study = ShardFile::<Study, Study2dResult>::new(Study::Excursion2d(excursion2d()), sh, 2, vec![]);
        let mixed = vec![files[0].clone(), ("2d/shard.cbor".into(), to_bytes(&other_study).unwrap())];
        let e = merge_files(&mixed).unwrap_err().to_string();
        assert!(
            e.contains("2d/shard.cbor is a shard of excursion 2d, but shard-0/shard.cbor is a shard of mia sweep"),
            "{e}"
        );
        let e = merge_files(&files[..1]).unwrap_err().to_string();
        assert!(e.contains("missing shard(s) 1/2"), "{e}");
        assert!(merge_files(&[]).is_err());
        // Units that the settings do not define (a hand-made file).
        let one = ShardFile::new(Study::MiaSweep(study.clone()), Shard::ALL, 1, vec![(0, rows_of(&files))]);
        let e = merge_files(&[("x".into(), to_bytes(&one).unwrap())]).unwrap_err().to_string();
        assert!(e.contains("define 4 unit(s) but the shards hold 1"), "{e}");
    }

    fn rows_of(files: &[(String, Vec<u8>)]) -> SweepRow {
        shard::from_bytes::<Study, SweepRow>("f", &files[0].1).unwrap().results.remove(0).1
    }
}
