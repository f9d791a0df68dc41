//! Reading the inputs of a release from files (feature `csv`, on by
//! default): a CSV table of covariates and responses becomes a validated
//! [`crate::Dataset`], or a list of query points; a batch of release
//! descriptions becomes rows for the accountant ([`batch`]). Every error
//! names the file, the record (1-based), its line and the column.

pub mod batch;
mod table;

pub use batch::{Batch, BatchDefaults, BatchRow, Question, read_batch};
pub use table::{
    Columns, MAX_INPUT_BYTES, Table, read_bounded, read_dataset, read_dataset_columns, read_named_columns, read_table,
    read_table_bytes, read_table_columns,
};
