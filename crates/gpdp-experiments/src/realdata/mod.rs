//! The real-data study: Greater London leasehold flats from HM Land
//! Registry's Price Paid Data (the paper's App. D.2, Figure 4; docs/experiments.md).
//!
//! Data flow (each step its own module):
//!
//! 1. [`ppd`]: stream the yearly Price Paid Data CSVs, keep the paper's
//!    segment (Greater London, standard price paid, added records,
//!    existing leasehold flats, price > 0, postcode present), with counts
//!    of rows read, kept and rejected by reason;
//! 2. [`postcodes`]: stream a postcode directory (ONSPD / NSPL /
//!    Code-Point), keep the coordinates of the postcodes sold; [`join`]:
//!    inner-join the sales with it;
//! 3. [`hexbin`]: bin (easting, northing, ln price) onto a hexagonal
//!    lattice, median per cell;
//! 4. [`response`]: y = clip(median − t, −B, B)/B, centres to [0, 1]²;
//! 5. [`pipeline`]: hyperparameters and cutoff on the selection year (with
//!    ε for the release year's n, [`accounting`]), then the non-private map
//!    and the private release of posterior sample paths on the release year.
//!
//! [`records`] is the streaming CSV record reader both file formats use.

pub mod accounting;
pub mod hexbin;
pub mod join;
pub mod pipeline;
pub mod postcodes;
pub mod ppd;
pub mod records;
pub mod response;
