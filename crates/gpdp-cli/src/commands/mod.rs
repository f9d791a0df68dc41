//! One module per subcommand: each parses its flags, calls the library and
//! writes its outputs through [`crate::output`].

pub mod account;
pub mod calibrate;
pub mod demo;
pub mod excursion;
pub mod excursion2d;
pub mod figure;
pub mod hexbin;
pub mod ledger;
pub mod merge;
pub mod mia;
pub mod plan;
pub mod posterior;
pub mod realdata;
pub mod release;
pub mod serve;
pub mod thompson;
pub mod thompson_study;
