//! The paper's experiments as library code: membership inference (§4,
//! App. C) and excursion-set utility studies (§5, App. D). The `gpdp` CLI
//! calls these; they print nothing and write no files.

#![warn(missing_docs)]

pub mod plume;
