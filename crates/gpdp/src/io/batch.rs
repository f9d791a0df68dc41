//! Batches of release descriptions for the accountant (`gpdp account
//! --batch`): a CSV whose columns are named like the command-line flags, one
//! release per row.
//!
//! Rules (each refusal names the file, the row and line, and the column):
//! - every column must be a known parameter ([`COLUMNS`]) or declared as a
//!   pass-through column; a misspelt column is refused, never ignored;
//! - a `delta` column asks for ε(δ), an `epsilon` column for δ(ε): not both,
//!   and not against the opposite flag; without either column the flags
//!   decide; an empty cell takes the flag's value;
//! - numbers are finite unless documented (`scale` may be `inf`).

use std::collections::HashMap;

use crate::error::{Error, Result, fmt_value};
use crate::model::domain::Domain;
use crate::model::draws::Draws;
use crate::model::kernel::KernelKind;
use crate::privacy::{Accounting, BoundChoice, ReleaseParams, SensitivityChoice};
use crate::spec::ModelSpec;

/// The parameter columns a batch may have.
pub const COLUMNS: [&str; 15] = [
    "kernel",
    "lengthscale",
    "domain",
    "n",
    "ridge",
    "scale",
    "gp_noise",
    "draws",
    "delta",
    "epsilon",
    "response_bound",
    "sensitivity",
    "rkhs_norm",
    "conversion",
    "bound",
];

/// What the accountant answers for a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Question {
    /// ε for this δ.
    EpsilonFor(f64),
    /// δ for this ε.
    DeltaFor(f64),
}

/// Values for columns a batch does not have (the command-line flags).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchDefaults {
    /// Kernel family.
    pub kernel: Option<KernelKind>,
    /// ℓ.
    pub lengthscale: Option<f64>,
    /// Ω.
    pub domain: Option<Domain>,
    /// n.
    pub n: Option<usize>,
    /// r.
    pub ridge: Option<f64>,
    /// σ.
    pub scale: Option<f64>,
    /// η.
    pub gp_noise: Option<f64>,
    /// L.
    pub draws: Option<Draws>,
    /// δ (asks for ε).
    pub delta: Option<f64>,
    /// ε (asks for δ).
    pub epsilon: Option<f64>,
    /// M_Y.
    pub response_bound: Option<f64>,
    /// Sensitivity lemma.
    pub sensitivity: Option<SensitivityChoice>,
    /// ‖f*‖_H.
    pub rkhs_norm: Option<f64>,
    /// Conversion.
    pub conversion: Option<Accounting>,
    /// The bound (tight or paper).
    pub bound: Option<BoundChoice>,
}

/// One release description of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchRow {
    /// The release, unchecked (the accountant checks it).
    pub params: ReleaseParams,
    /// L.
    pub draws: Draws,
    /// The conversion.
    pub conversion: Accounting,
    /// ε for δ, or δ for ε.
    pub question: Question,
    /// The row's line in the file (1-based).
    pub line: usize,
}

/// A parsed batch: the header and records as read, and one row each.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The header, as read.
    pub headers: Vec<String>,
    /// The records, as read (for echoing them in the output).
    pub records: Vec<Vec<String>>,
    /// The parsed rows.
    pub rows: Vec<BatchRow>,
}

fn input(message: String) -> Error {
    Error::Input(message)
}

/// Parses a batch CSV called `name` (for messages). `keep` are the
/// pass-through columns (copied, not interpreted).
pub fn read_batch(name: &str, bytes: &[u8], defaults: &BatchDefaults, keep: &[String]) -> Result<Batch> {
    let (mut rdr, headers) = super::table::open_csv(name, bytes)?;
    let mut col: HashMap<&str, usize> = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        if col.insert(h.as_str(), i).is_some() {
            return Err(input(format!("{name}: column '{}' appears twice in the header", super::excerpt(h))));
        }
    }
    let unknown: Vec<&str> =
        headers.iter().map(String::as_str).filter(|h| !COLUMNS.contains(h) && !keep.iter().any(|k| k == h)).collect();
    if !unknown.is_empty() {
        return Err(input(format!(
            "{name}: unknown column(s) {} (accepted: {}; declare other columns to copy through with --keep)",
            super::name_list(&unknown),
            COLUMNS.join(", ")
        )));
    }
    if let Some(k) = keep.iter().find(|k| COLUMNS.contains(&k.as_str())) {
        return Err(input(format!("--keep {k}: '{k}' is a parameter column, not a pass-through one")));
    }
    match (col.contains_key("delta"), col.contains_key("epsilon")) {
        (true, true) => return Err(input(format!("{name}: give a delta column or an epsilon column, not both"))),
        (true, false) if defaults.epsilon.is_some() => {
            return Err(input(format!(
                "{name}: the delta column asks for ε at each δ but --epsilon asks for δ; drop one of them"
            )));
        }
        (false, true) if defaults.delta.is_some() => {
            return Err(input(format!(
                "{name}: the epsilon column asks for δ at each ε but --delta asks for ε; drop one of them"
            )));
        }
        (false, false) if defaults.delta.is_some() == defaults.epsilon.is_some() => {
            return Err(input(format!(
                "{name}: no delta or epsilon column: give exactly one of --delta (to get ε) or --epsilon (to get δ)"
            )));
        }
        _ => {}
    }
    let mut records = Vec::new();
    let mut rows = Vec::new();
    let mut domains: HashMap<String, Domain> = HashMap::new();
    let mut lines = super::table::Lines::new(bytes);
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 1;
        let rec = rec.map_err(|e| input(format!("{name} row {row}: unreadable record: {e}")))?;
        let line = rec.position().map_or(row + 1, |p| lines.at(p.byte()));
        if rec.len() != headers.len() {
            return Err(input(format!(
                "{name} row {row} (line {line}): {} fields, but the header has {}",
                rec.len(),
                headers.len()
            )));
        }
        let fields: Vec<String> = rec.iter().map(|s| s.to_string()).collect();
        let parsed = parse_row(&fields, &col, defaults, &mut domains, line)
            .map_err(|e| input(format!("{name} row {row} (line {line}): {e}")))?;
        rows.push(parsed);
        records.push(fields);
    }
    if rows.is_empty() {
        return Err(input(format!("{name}: no parameter rows")));
    }
    Ok(Batch { headers, records, rows })
}

/// The error of parsing a long `column` value `s`, quoting only an excerpt
/// of it (the parser's own message echoes the whole value).
fn cut(column: &str, s: &str, e: Error) -> Error {
    let msg = e.to_string();
    if msg.len() <= 300 {
        return e;
    }
    input(format!("column {column}: '{}' is not valid ({})", super::excerpt(s), super::excerpt(&msg)))
}

fn parse_row(
    fields: &[String],
    col: &HashMap<&str, usize>,
    d: &BatchDefaults,
    domains: &mut HashMap<String, Domain>,
    line: usize,
) -> Result<BatchRow> {
    let get = |k: &str| -> Option<&str> { col.get(k).map(|&i| fields[i].as_str()).filter(|s| !s.is_empty()) };
    let missing = |k: &str| input(format!("no {k} column value and no --{} flag", k.replace('_', "-")));
    let num = |k: &str, flag: Option<f64>, inf_ok: bool| -> Result<Option<f64>> {
        let Some(s) = get(k) else { return Ok(flag) };
        let t = s.trim();
        let v = if inf_ok && (t.eq_ignore_ascii_case("inf") || t == "∞") {
            f64::INFINITY
        } else {
            t.parse::<f64>().map_err(|_| input(format!("column {k}: '{}' is not a number", super::excerpt(s))))?
        };
        if v.is_nan() || (v.is_infinite() && !inf_ok) {
            return Err(input(format!("column {k}: {} is not a finite number", fmt_value(v))));
        }
        Ok(Some(v))
    };
    let int =
        |k: &str, flag: Option<u64>| -> Result<Option<u64>> {
            match get(k) {
                Some(s) => Ok(Some(s.parse::<u64>().map_err(|_| {
                    input(format!("column {k}: '{}' is not a non-negative integer", super::excerpt(s)))
                })?)),
                None => Ok(flag),
            }
        };
    let kind: KernelKind = match get("kernel") {
        Some(s) => s.parse().map_err(|e: Error| cut("kernel", s, e))?,
        None => d.kernel.ok_or_else(|| missing("kernel"))?,
    };
    let lengthscale = num("lengthscale", d.lengthscale, false)?;
    if lengthscale.is_none() && kind.has_lengthscale() {
        return Err(input(format!("no lengthscale column value and no --lengthscale for the {kind} kernel")));
    }
    let domain = match get("domain") {
        Some(s) => match domains.get(s) {
            Some(dom) => dom.clone(),
            None => {
                let dom: Domain = s.parse().map_err(|e: Error| cut("domain", s, e))?;
                domains.insert(s.to_string(), dom.clone());
                dom
            }
        },
        None => d.domain.clone().ok_or_else(|| missing("domain"))?,
    };
    let n = int("n", d.n.map(|v| v as u64))?.ok_or_else(|| missing("n"))?;
    let n = usize::try_from(n).map_err(|_| input(format!("column n: {n} is too large")))?;
    let ridge = num("ridge", d.ridge, false)?.ok_or_else(|| missing("ridge"))?;
    let scale = num("scale", d.scale, true)?.ok_or_else(|| missing("scale"))?;
    // The columns are spec keys: the one translation of them is ModelSpec's.
    let mut model = ModelSpec::new(kind, domain);
    // A lengthscale cell for a kernel without one is refused (as everywhere);
    // the --lengthscale default applies only to the rows whose kernel has one.
    model.lengthscale =
        if get("lengthscale").is_some() { lengthscale } else { lengthscale.filter(|_| kind.has_lengthscale()) };
    model.ridge = Some(ridge);
    model.scale = Some(scale);
    model.gp_noise = num("gp_noise", d.gp_noise, false)?;
    model.response_bound = num("response_bound", d.response_bound, false)?;
    model.sensitivity = match get("sensitivity") {
        Some(s) => s.parse()?,
        None => d.sensitivity.unwrap_or_default(),
    };
    model.rkhs_norm = num("rkhs_norm", d.rkhs_norm, false)?;
    model.bound = match get("bound") {
        Some(s) => s.parse()?,
        None => d.bound.unwrap_or_default(),
    };
    let params = model.release_params(n, None)?;
    let draws = Draws::new(int("draws", d.draws.map(Draws::get))?.unwrap_or(1))?;
    let conversion = match get("conversion") {
        Some(s) => s.parse()?,
        None => d.conversion.unwrap_or_default(),
    };
    let question = if col.contains_key("epsilon") || (!col.contains_key("delta") && d.epsilon.is_some()) {
        Question::DeltaFor(num("epsilon", d.epsilon, false)?.ok_or_else(|| missing("epsilon"))?)
    } else {
        Question::EpsilonFor(num("delta", d.delta, false)?.ok_or_else(|| missing("delta"))?)
    };
    Ok(BatchRow { params, draws, conversion, question, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> BatchDefaults {
        BatchDefaults::default()
    }

    /// The columns go through ModelSpec, so a row is checked as every front
    /// end checks a release: `rkhs_norm` needs `sensitivity` rkhs (accepted
    /// silently here before), a lengthscale cell for a kernel without one is
    /// refused, and the --lengthscale default skips those kernels.
    #[test]
    fn rows_are_checked_by_the_one_translation_of_the_keys() {
        let rkhs =
            b"kernel,lengthscale,domain,n,ridge,scale,delta,rkhs_norm\nexponential,1,\"interval:0,1\",10,1,5,0.1,2\n";
        let e = read_batch("b.csv", rkhs, &defaults(), &[]).unwrap_err().to_string();
        assert!(e.contains("`rkhs_norm`") && e.contains("`sensitivity` rkhs"), "{e}");
        let with_rkhs = b"kernel,lengthscale,domain,n,ridge,scale,delta,rkhs_norm,sensitivity\nexponential,1,\"interval:0,1\",10,1,5,0.1,2,rkhs\n";
        let b = read_batch("b.csv", with_rkhs, &defaults(), &[]).unwrap();
        assert_eq!(b.rows[0].params.rkhs_norm, Some(2.0));
        let cell = b"kernel,lengthscale,domain,n,ridge,scale,delta\nconstant,1,\"interval:0,1\",10,1,5,0.1\n";
        let e = read_batch("b.csv", cell, &defaults(), &[]).unwrap_err().to_string();
        assert!(e.contains("`lengthscale`") && e.contains("has no lengthscale"), "{e}");
        let mixed = b"kernel,domain,n,ridge,scale,delta\nconstant,\"interval:0,1\",10,1,5,0.1\nexponential,\"interval:0,1\",10,1,5,0.1\n";
        let d = BatchDefaults { lengthscale: Some(0.5), ..defaults() };
        let b = read_batch("b.csv", mixed, &d, &[]).unwrap();
        assert_eq!(b.rows[1].params.kernel, crate::model::kernel::Kernel::exponential(0.5).unwrap());
        assert_eq!(b.rows.len(), 2);
    }

    #[test]
    fn modes_are_explicit_and_unknown_columns_refused() {
        let body = b"kernel,lengthscale,domain,n,ridge,scale,epsilon\nexponential,1,\"interval:0,1\",10,1,5,0.1\n";
        // An epsilon column against --delta: refused, not silently swapped.
        let d = BatchDefaults { delta: Some(1e-5), ..defaults() };
        let e = read_batch("b.csv", body, &d, &[]).unwrap_err().to_string();
        assert!(e.contains("epsilon column asks for δ") && e.contains("--delta"), "{e}");
        // Without the flag: δ for the row's ε.
        let b = read_batch("b.csv", body, &defaults(), &[]).unwrap();
        assert_eq!(b.rows[0].question, Question::DeltaFor(0.1));
        // Misspelt columns are named, with the accepted ones.
        let bad = b"kernel,ridgee,gp-noise\nexponential,1,2\n";
        let e = read_batch("b.csv", bad, &defaults(), &[]).unwrap_err().to_string();
        assert!(e.contains("unknown column(s) 'ridgee', 'gp-noise'") && e.contains("accepted: kernel"), "{e}");
        // Declared pass-through columns are fine; duplicates are not.
        let kept =
            b"label,kernel,lengthscale,domain,n,ridge,scale,delta\na,exponential,1,\"interval:0,1\",10,1,5,0.1\n";
        assert!(read_batch("b.csv", kept, &defaults(), &["label".into()]).is_ok());
        let dup = b"kernel,kernel\nexponential,exponential\n";
        assert!(read_batch("b.csv", dup, &defaults(), &[]).unwrap_err().to_string().contains("appears twice"));
        // Non-finite values are refused (σ = inf is documented).
        let nan = b"kernel,lengthscale,domain,n,ridge,scale,delta\nexponential,1,\"interval:0,1\",10,NaN,5,0.1\n";
        let e = read_batch("b.csv", nan, &defaults(), &[]).unwrap_err().to_string();
        assert!(e.contains("row 1 (line 2): column ridge: NaN is not a finite number"), "{e}");
        let inf = b"kernel,lengthscale,domain,n,ridge,scale,delta\nexponential,1,\"interval:0,1\",10,1,inf,0.1\n";
        assert_eq!(read_batch("b.csv", inf, &defaults(), &[]).unwrap().rows[0].params.scale, f64::INFINITY);
    }
}
