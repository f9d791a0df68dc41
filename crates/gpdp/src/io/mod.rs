//! Reading the inputs of a release from files (feature `csv`, on by
//! default): a CSV table of covariates and responses becomes a validated
//! [`crate::Dataset`], or a list of query points. Every error names the
//! file, the record (1-based), its line and the column.

mod table;

pub use table::{Table, read_dataset, read_table, read_table_bytes};
