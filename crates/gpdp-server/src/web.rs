//! The map viewer, embedded in the binary: `web/index.html` at `/` and
//! `web/app.js` at `/app.js` (plain JavaScript, no bundler).

pub const INDEX_HTML: &str = include_str!("../web/index.html");
pub const APP_JS: &str = include_str!("../web/app.js");
