//! Post-processing of released values: anything computed from the released
//! draws (and public inputs) alone inherits their guarantee.
//!
//! - [`grid`]: released values on a regular 2-D grid;
//! - [`smoothing`]: data-independent Gaussian smoothing of a grid;
//! - [`excursion`]: excursion sets {f ≥ t}, L-path vote sets, and the
//!   (non-private) posterior excursion probability p_D;
//! - [`contour`]: excursion sets as polygons with holes, level-set polylines;
//! - [`geojson`]: those polygons as GeoJSON;
//! - [`metrics`]: how well a set matches a known truth (studies only).

#[cfg(feature = "maps")]
pub mod contour;
pub mod excursion;
#[cfg(feature = "maps")]
pub mod geojson;
pub mod grid;
pub mod metrics;
pub mod palette;
pub mod smoothing;

#[cfg(feature = "maps")]
pub use contour::{Polygon, boundary_lines, excursion_polygons, signed_area};
pub use excursion::{excursion_probability, normal_cdf, vote_set};
#[cfg(feature = "maps")]
pub use geojson::excursion_geojson;
pub use grid::Grid2;
pub use smoothing::gaussian_smooth;
