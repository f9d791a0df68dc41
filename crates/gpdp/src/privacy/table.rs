//! Tabulated Rényi-DP curves: certified upper bounds ε_α at a fixed,
//! increasing list of orders (docs/accountant.md, "Tables").
//!
//! # What is guaranteed
//!
//! An [`RdpTable`] with orders α_1 < … < α_m and values ε_1, …, ε_m states
//! that the mechanism it describes is (α_k, ε_k)-RDP for every k. Rényi
//! divergences are non-decreasing in the order, so the mechanism is also
//! (α, ε_k)-RDP for every α ≤ α_k: the table is read as the piecewise
//! constant curve R(α) = ε_k for α_{k−1} < α ≤ α_k (α_0 = 1), undefined
//! (no statement) beyond α_m. An infinite value states nothing at that
//! order. Summing tables order by order is RDP composition.
//!
//! Tables are built by [`RdpTable::of`] (in [`super::accountant`]) from a
//! privacy event, each value the certified bound the conversion would use at
//! that order (floating-point allowance included), rounded up; and by
//! [`super::accountant::RdpAccountant::table`] for a composition. Serialised
//! with serde, every finite value round-trips exactly (shortest
//! round-tripping decimal; +∞ is the string "inf"); deserialising validates
//! like [`RdpTable::new`].

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, fmt_value};
use crate::privacy::curve::RdpCurve;

/// The ledger's fixed order grid: α − 1 log-spaced from 10⁻³ to 10⁴, 24
/// points per decade (169 orders), each α = 1 + g with (1 + g) − 1 = g
/// exactly. Converting a table on this grid instead of the continuous curve
/// costs at most +1.32% of ε on the Figure-3 and issue-10/13 settings and
/// +0.78% on 200 random releases with ε ≤ 100 (docs/accountant.md §12;
/// tested in `tight_targets::ledger_tables_are_upper_bounds_with_a_small_loss`).
pub static LEDGER_ORDERS: LazyLock<Vec<f64>> = LazyLock::new(|| {
    const PER_DECADE: i32 = 24;
    let mut v: Vec<f64> = (-3 * PER_DECADE..=4 * PER_DECADE)
        .map(|i| {
            let g = 10f64.powf(f64::from(i) / f64::from(PER_DECADE));
            1.0 + g
        })
        .collect();
    v.dedup();
    v
});

/// A Rényi-DP curve given as certified upper bounds at fixed orders (see the
/// module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawTable", into = "RawTable")]
pub struct RdpTable {
    orders: Vec<f64>,
    values: Vec<f64>,
}

/// The serialised form of an [`RdpTable`] (validated on the way in).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    orders: Vec<f64>,
    values: Vec<Bound>,
}

/// A value that may be +∞ (the JSON string "inf").
#[derive(Clone, Copy)]
struct Bound(f64);

impl Serialize for Bound {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        crate::privacy::report::ser_maybe_inf(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Num(f64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Num(x) => Ok(Bound(x)),
            Repr::Text(t) if t == "inf" => Ok(Bound(f64::INFINITY)),
            Repr::Text(t) => Err(serde::de::Error::custom(format!("a number or \"inf\", not {t:?}"))),
        }
    }
}

impl TryFrom<RawTable> for RdpTable {
    type Error = Error;
    fn try_from(r: RawTable) -> Result<Self> {
        RdpTable::new(r.orders, r.values.into_iter().map(|b| b.0).collect())
    }
}

impl From<RdpTable> for RawTable {
    fn from(t: RdpTable) -> Self {
        RawTable { orders: t.orders, values: t.values.into_iter().map(Bound).collect() }
    }
}

impl RdpTable {
    /// A table from its orders and values; refused unless there is at least
    /// one order, the orders are finite, > 1 and strictly increasing, and
    /// there are as many values, each ≥ 0 and finite or +∞. The error names
    /// the field (`orders`/`values`) and the index.
    pub fn new(orders: Vec<f64>, values: Vec<f64>) -> Result<Self> {
        if orders.is_empty() {
            return Err(Error::InvalidParameter {
                name: "RDP table orders",
                value: "[]".into(),
                requirement: "at least one order α > 1",
            });
        }
        for (k, &a) in orders.iter().enumerate() {
            if !(a.is_finite() && a > 1.0) {
                return Err(Error::InvalidParameter {
                    name: "RDP table orders",
                    value: format!("orders[{k}] = {}", fmt_value(a)),
                    requirement: "finite orders α > 1",
                });
            }
            if k > 0 && !(a > orders[k - 1]) {
                return Err(Error::InvalidParameter {
                    name: "RDP table orders",
                    value: format!("orders[{k}] = {} after {}", fmt_value(a), fmt_value(orders[k - 1])),
                    requirement: "strictly increasing orders",
                });
            }
        }
        if values.len() != orders.len() {
            return Err(Error::InvalidParameter {
                name: "RDP table values",
                value: format!("{} values for {} orders", values.len(), orders.len()),
                requirement: "one value per order",
            });
        }
        for (k, &v) in values.iter().enumerate() {
            if !(v >= 0.0) || v == f64::NEG_INFINITY {
                return Err(Error::InvalidParameter {
                    name: "RDP table values",
                    value: format!("values[{k}] = {}", fmt_value(v)),
                    requirement: "RDP bounds ≥ 0 (finite, or inf for no statement)",
                });
            }
        }
        Ok(RdpTable { orders, values })
    }

    /// The orders α_1 < … < α_m.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// The certified bounds ε_1, …, ε_m (+∞: no statement at that order).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The bound the table gives at order α: ε_k of the smallest α_k ≥ α,
    /// or +∞ beyond α_m (or for α ≤ 1).
    pub fn at(&self, alpha: f64) -> f64 {
        if !(alpha > 1.0) {
            return f64::INFINITY;
        }
        let k = self.orders.partition_point(|&o| o < alpha);
        self.values.get(k).copied().unwrap_or(f64::INFINITY)
    }

    /// The table's bound at α = 1 + am1, compared through α − 1 (exact for
    /// doubles α ≥ 1, so a query at a grid order's α − 1 reads that order).
    pub(crate) fn at_am1(&self, am1: f64) -> f64 {
        if !(am1 > 0.0) {
            return f64::INFINITY;
        }
        let k = self.orders.partition_point(|&o| o - 1.0 < am1);
        self.values.get(k).copied().unwrap_or(f64::INFINITY)
    }

    /// α − 1 of each order (exact).
    pub(crate) fn am1s(&self) -> impl Iterator<Item = f64> + '_ {
        self.orders.iter().map(|&o| o - 1.0)
    }

    /// The sum of two tables on the same orders (RDP composition); refused
    /// when the orders differ (compose tables on different grids in an
    /// [`super::accountant::RdpAccountant`], which reads each as its
    /// piecewise-constant curve).
    pub fn compose(&self, other: &RdpTable) -> Result<RdpTable> {
        if self.orders != other.orders {
            return Err(Error::InvalidParameter {
                name: "RDP table orders",
                value: format!("{} and {} orders", self.orders.len(), other.orders.len()),
                requirement: "the same orders in both tables (or compose them in an RdpAccountant)",
            });
        }
        let values = self.values.iter().zip(&other.values).map(|(a, b)| round_up_sum(*a, *b)).collect();
        Ok(RdpTable { orders: self.orders.clone(), values })
    }

    /// Feeds the table's bits into `h`.
    pub(crate) fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        for x in self.orders.iter().chain(&self.values) {
            h.write_u64(x.to_bits());
        }
    }
}

/// a + b rounded up (one rounding of a sum of non-negative numbers).
pub(crate) fn round_up_sum(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_finite() && s > 0.0 { s.next_up() } else { s }
}

/// A table alone, as a curve for the conversion: admissible up to the last
/// order with a finite value; the table's orders are the conversion's
/// candidate orders.
impl RdpCurve for RdpTable {
    fn am1_max(&self) -> f64 {
        self.orders.iter().zip(&self.values).rev().find(|(_, v)| v.is_finite()).map_or(0.0, |(&o, _)| o - 1.0)
    }

    fn rdp(&self, am1: f64) -> Option<(f64, f64)> {
        let v = self.at_am1(am1);
        v.is_finite().then_some((v, 0.0))
    }

    fn orders(&self) -> Vec<f64> {
        self.am1s().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_orders_are_exact_increasing_and_span_the_range() {
        let g = &*LEDGER_ORDERS;
        assert_eq!(g.len(), 169);
        assert!(g.windows(2).all(|w| w[0] < w[1]));
        assert!((g[0] - 1.0 - 1e-3).abs() < 1e-15 && (g[168] - 1.0e4 - 1.0).abs() < 1e-8);
        for &a in g {
            assert_eq!(1.0 + (a - 1.0), a);
        }
    }

    #[test]
    fn validation_names_the_field_and_index() {
        let e = RdpTable::new(vec![2.0, 1.5], vec![0.0, 0.0]).unwrap_err().to_string();
        assert!(e.contains("orders[1]") && e.contains("increasing"), "{e}");
        let e = RdpTable::new(vec![1.0], vec![0.0]).unwrap_err().to_string();
        assert!(e.contains("orders[0]") && e.contains("> 1"), "{e}");
        let e = RdpTable::new(vec![2.0], vec![0.0, 1.0]).unwrap_err().to_string();
        assert!(e.contains("values") && e.contains("one value per order"), "{e}");
        for bad in [-1.0, f64::NAN, f64::NEG_INFINITY] {
            let e = RdpTable::new(vec![2.0], vec![bad]).unwrap_err().to_string();
            assert!(e.contains("values[0]"), "{e}");
        }
        assert!(RdpTable::new(vec![], vec![]).is_err());
        assert!(RdpTable::new(vec![2.0, f64::INFINITY], vec![0.0, 0.0]).is_err());
        assert!(RdpTable::new(vec![2.0, 3.0], vec![0.0, f64::INFINITY]).is_ok());
    }

    #[test]
    fn serde_round_trips_every_value_exactly_and_validates() {
        let orders: Vec<f64> = LEDGER_ORDERS.clone();
        let values: Vec<f64> = orders
            .iter()
            .enumerate()
            .map(|(k, a)| if k > 160 { f64::INFINITY } else { (a.ln() * std::f64::consts::PI).next_up() / 3.0 })
            .collect();
        let t = RdpTable::new(orders, values).unwrap();
        let s = serde_json::to_string(&t).unwrap();
        assert!(s.contains("\"inf\""));
        let back: RdpTable = serde_json::from_str(&s).unwrap();
        assert_eq!(back.orders().len(), t.orders().len());
        for (a, b) in t.orders().iter().chain(t.values()).zip(back.orders().iter().chain(back.values())) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let e = serde_json::from_str::<RdpTable>(r#"{"orders":[2.0,1.5],"values":[0,0]}"#).unwrap_err().to_string();
        assert!(e.contains("orders[1]"), "{e}");
        let e = serde_json::from_str::<RdpTable>(r#"{"orders":[2.0],"values":["-inf"]}"#).unwrap_err().to_string();
        assert!(e.contains("inf"), "{e}");
        assert!(serde_json::from_str::<RdpTable>(r#"{"orders":[2.0],"values":[1],"x":1}"#).is_err());
    }

    #[test]
    fn lookup_is_the_next_order_up_and_compose_sums() {
        let t = RdpTable::new(vec![1.5, 2.0, 4.0], vec![0.1, 0.2, 0.5]).unwrap();
        assert_eq!(t.at(1.2), 0.1);
        assert_eq!(t.at(1.5), 0.1);
        assert_eq!(t.at(1.6), 0.2);
        assert_eq!(t.at(4.0), 0.5);
        assert_eq!(t.at(4.1), f64::INFINITY);
        assert_eq!(t.at_am1(1.0), 0.2);
        let c = t.compose(&t).unwrap();
        assert!(c.values()[1] >= 0.4 && c.values()[1] <= 0.4f64.next_up().next_up());
        let other = RdpTable::new(vec![2.0], vec![0.0]).unwrap();
        assert!(t.compose(&other).unwrap_err().to_string().contains("same orders"));
        assert_eq!(t.am1_max(), 3.0);
    }
}
