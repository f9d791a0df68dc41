//! Bounded memo tables of the accountant, owned by the caller.
//!
//! Certifying the joint bound at one order costs a branch and bound
//! (`joint::certified_sup`), so its results, the per-problem order grids,
//! the cheap estimates used to choose which orders to certify, and the
//! order a conversion chose for a certified curve are remembered. They are
//! remembered in an [`AccountingCache`], a handle the caller owns (a server's
//! state, a ledger, a Python session) and passes to
//! [`super::accountant::RdpAccountant::with_cache`].
//!
//! # What is guaranteed
//!
//! * **Bounded**: each of the four tables holds at most
//!   [`AccountingCache::capacity`] entries; inserting into a full table
//!   evicts its least recently used entry. [`AccountingCache::len`] and
//!   [`AccountingCache::approx_bytes`] report the size.
//! * **No effect on values**: every value stored is a deterministic function
//!   of its key (the public parameters of the release and the order), and a
//!   remembered order is re-evaluated, never reused as a number, so a cold
//!   cache, a warm cache and an evicted entry give bit-identical ε and δ.
//! * Callers that pass no cache share one process-wide cache of
//!   [`DEFAULT_CAPACITY`] entries per table ([`AccountingCache::shared`]),
//!   so memory stays bounded in a long-lived process either way.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

/// Entries per table of [`AccountingCache::shared`] and of
/// [`AccountingCache::default`].
pub const DEFAULT_CAPACITY: usize = 4096;

/// A least-recently-used map with a fixed entry cap. Lookups and inserts
/// of present keys are O(1); an insert into a full map scans for the oldest
/// entry (O(cap)), which is negligible next to the work whose result is
/// being stored.
#[derive(Debug)]
struct Lru<K, V> {
    cap: usize,
    tick: u64,
    map: HashMap<K, (V, u64)>,
}

impl<K: Hash + Eq + Copy, V: Clone> Lru<K, V> {
    fn new(cap: usize) -> Self {
        Lru { cap, tick: 0, map: HashMap::new() }
    }

    fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let t = self.tick;
        self.map.get_mut(k).map(|(v, used)| {
            *used = t;
            v.clone()
        })
    }

    fn insert(&mut self, k: K, v: V) {
        if self.cap == 0 {
            return;
        }
        self.tick += 1;
        if !self.map.contains_key(&k) && self.map.len() >= self.cap {
            if let Some(oldest) = self.map.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| *k) {
                self.map.remove(&oldest);
            }
        }
        self.map.insert(k, (v, self.tick));
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

/// Heap bytes of the vectors held by a table of vectors.
fn vecs<K>(m: &HashMap<K, (Arc<Vec<f64>>, u64)>) -> usize {
    m.values().map(|(v, _)| 8 * v.len() + 40).sum()
}

/// Key of a certified supremum or estimate table: the joint problem's
/// public parameters, the order, and a kind tag.
pub(crate) type ProblemKey = [u64; 8];

/// The certified joint supremum at one order: (upper, found, boxes).
pub(crate) type CertifiedValue = (f64, f64, usize);

#[derive(Debug)]
struct Tables {
    certified: Lru<ProblemKey, CertifiedValue>,
    estimates: Lru<ProblemKey, Arc<Vec<f64>>>,
    grids: Lru<u64, Arc<Vec<f64>>>,
    chosen: Lru<[u64; 3], (f64, bool)>,
    chains: Lru<ChainKey, Option<ChainValue>>,
}

/// A chain statement's fields (`privacy::chain`), in its field order.
pub(crate) type ChainValue = [f64; 7];

/// The chain route's key: the joint problem's key (`joint::key_of`, kind 2),
/// then τ, L and δ (bits).
pub(crate) type ChainKey = [u64; 11];

/// A bounded cache of the accountant's expensive intermediate results (see
/// the module docs). Cloning gives another handle to the same tables; it is
/// `Send + Sync` (the tables sit behind one mutex).
#[derive(Debug, Clone)]
pub struct AccountingCache {
    cap: usize,
    tables: Arc<Mutex<Tables>>,
}

impl Default for AccountingCache {
    /// A new, empty cache of [`DEFAULT_CAPACITY`] entries per table.
    fn default() -> Self {
        AccountingCache::with_capacity(DEFAULT_CAPACITY)
    }
}

impl AccountingCache {
    /// A new, empty cache holding at most `entries` entries per table (0:
    /// remember nothing).
    pub fn with_capacity(entries: usize) -> Self {
        AccountingCache {
            cap: entries,
            tables: Arc::new(Mutex::new(Tables {
                certified: Lru::new(entries),
                estimates: Lru::new(entries),
                grids: Lru::new(entries),
                chosen: Lru::new(entries),
                chains: Lru::new(entries),
            })),
        }
    }

    /// The process-wide cache used by callers that pass none
    /// ([`DEFAULT_CAPACITY`] entries per table).
    pub fn shared() -> &'static AccountingCache {
        static SHARED: OnceLock<AccountingCache> = OnceLock::new();
        SHARED.get_or_init(AccountingCache::default)
    }

    /// The entry cap of each table.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The number of entries held, over all five tables (at most
    /// 5 × [`Self::capacity`]).
    pub fn len(&self) -> usize {
        self.with(|t| t.certified.len() + t.estimates.len() + t.grids.len() + t.chosen.len() + t.chains.len())
            .unwrap_or(0)
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An estimate of the heap bytes held (keys, values, vectors' contents
    /// and the hash tables' per-entry overhead).
    pub fn approx_bytes(&self) -> usize {
        const OVERHEAD: usize = 16;
        self.with(|t| {
            t.certified.len() * (64 + 24 + 8 + OVERHEAD)
                + t.estimates.len() * (64 + 8 + 8 + OVERHEAD)
                + vecs(&t.estimates.map)
                + t.grids.len() * (8 + 8 + 8 + OVERHEAD)
                + vecs(&t.grids.map)
                + t.chosen.len() * (24 + 16 + 8 + OVERHEAD)
                + t.chains.len() * (80 + 64 + 8 + OVERHEAD)
        })
        .unwrap_or(0)
    }

    fn with<R>(&self, f: impl FnOnce(&mut Tables) -> R) -> Option<R> {
        // A poisoned lock only means another thread panicked while holding
        // it; the tables are still consistent maps (values are inserted
        // whole), so keep using them.
        let mut g = match self.tables.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        Some(f(&mut g))
    }

    pub(crate) fn certified(&self, k: &ProblemKey) -> Option<CertifiedValue> {
        self.with(|t| t.certified.get(k)).flatten()
    }

    pub(crate) fn put_certified(&self, k: ProblemKey, v: CertifiedValue) {
        self.with(|t| t.certified.insert(k, v));
    }

    pub(crate) fn estimates(&self, k: &ProblemKey) -> Option<Arc<Vec<f64>>> {
        self.with(|t| t.estimates.get(k)).flatten()
    }

    pub(crate) fn put_estimates(&self, k: ProblemKey, v: Arc<Vec<f64>>) {
        self.with(|t| t.estimates.insert(k, v));
    }

    pub(crate) fn grid(&self, k: u64) -> Option<Arc<Vec<f64>>> {
        self.with(|t| t.grids.get(&k)).flatten()
    }

    pub(crate) fn put_grid(&self, k: u64, v: Arc<Vec<f64>>) {
        self.with(|t| t.grids.insert(k, v));
    }

    pub(crate) fn chosen(&self, k: &[u64; 3]) -> Option<(f64, bool)> {
        self.with(|t| t.chosen.get(k)).flatten()
    }

    pub(crate) fn put_chosen(&self, k: [u64; 3], v: (f64, bool)) {
        self.with(|t| t.chosen.insert(k, v));
    }

    pub(crate) fn chain(&self, k: &ChainKey) -> Option<Option<ChainValue>> {
        self.with(|t| t.chains.get(k)).flatten()
    }

    pub(crate) fn put_chain(&self, k: ChainKey, v: Option<ChainValue>) {
        self.with(|t| t.chains.insert(k, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_keeps_at_most_its_cap_and_evicts_the_oldest() {
        let mut m = Lru::new(3);
        for k in 0..10_000u64 {
            m.insert(k, k as f64);
            assert!(m.len() <= 3);
        }
        assert_eq!(m.get(&9_999), Some(9_999.0));
        assert_eq!(m.get(&0), None);
        // Touching 9_997 makes 9_998 the oldest.
        assert_eq!(m.get(&9_997), Some(9_997.0));
        m.insert(20_000, 0.0);
        assert_eq!(m.get(&9_998), None);
        assert!(m.get(&9_997).is_some());
    }

    #[test]
    fn cache_counts_and_bounds_every_table() {
        let c = AccountingCache::with_capacity(5);
        for k in 0..1000u64 {
            c.put_grid(k, Arc::new(vec![0.0; 10]));
            c.put_chosen([k, 0, 0], (1.0, false));
            c.put_certified([k; 8], (1.0, 1.0, 1));
            c.put_estimates([k; 8], Arc::new(vec![0.0; 10]));
        }
        assert_eq!(c.len(), 20);
        assert!(c.approx_bytes() < 20 * 300, "{}", c.approx_bytes());
        let none = AccountingCache::with_capacity(0);
        none.put_grid(1, Arc::new(vec![]));
        assert!(none.is_empty());
    }
}
