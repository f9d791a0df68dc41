//! A streaming reader of comma-separated records (RFC 4180) that knows the
//! exact line each record starts on, on the `csv` crate.
//!
//! Both public files of the study are CSV: HM Land Registry's Price Paid
//! Data (no header, every field quoted) and the ONS Postcode Directory (a
//! header row, text fields quoted). They are large (GBs), so records are read
//! one at a time (a `csv::Reader` over the input, one reused `ByteRecord`,
//! reused field buffers); nothing else is kept.
//!
//! Rules (the `csv` crate's, with no header row and a varying number of
//! fields per record):
//! - records end at LF, CRLF or CR; empty lines are skipped and still
//!   counted (LFs), so line numbers are those an editor shows;
//! - a field is either unquoted (everything up to the next comma) or quoted:
//!   `"…"`, where `""` stands for one `"`, and commas and line breaks are
//!   part of the field;
//! - malformed quoting is read leniently, as `csv` does: characters after a
//!   closing quote are appended to the field, and a quoted field still open
//!   at the end of the file runs to the end of the file (the study's parsers
//!   then refuse the record — a wrong number of fields or an unparsable
//!   value — naming the line where it starts);
//! - a field that is not UTF-8 is an error naming its line and field, never
//!   replaced silently (a mangled postcode would just not match).

use std::cell::RefCell;
use std::io::BufRead;
use std::rc::Rc;

use crate::error::{Error, Result, io};

/// Reads records one by one (see the module documentation for the rules).
pub struct RecordReader<R> {
    input: csv::Reader<Window<R>>,
    /// The bytes `input` has taken from the file since the end of the last
    /// record (shared with the `Window` inside `input`).
    window: Rc<RefCell<Recent>>,
    file: String,
    record: csv::ByteRecord,
    /// Field buffers, reused across records (their capacity is kept).
    fields: Vec<String>,
}

/// The bytes read from the file from offset `start` on.
#[derive(Default)]
struct Recent {
    start: u64,
    bytes: Vec<u8>,
}

/// The file as `csv` reads it, with every byte also kept in `Recent` until
/// the record it belongs to is read: `csv` starts a record's position
/// before the empty lines it skips, so the reader finds the record's first
/// line itself (the window holds about one buffer of input at most).
struct Window<R> {
    inner: R,
    recent: Rc<RefCell<Recent>>,
}

impl<R: BufRead> std::io::Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.recent.borrow_mut().bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `input`; `file` names it in errors.
    pub fn new(input: R, file: &str) -> Self {
        let window = Rc::new(RefCell::new(Recent::default()));
        let input = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(Window { inner: input, recent: window.clone() });
        RecordReader { input, window, file: file.to_string(), record: csv::ByteRecord::new(), fields: Vec::new() }
    }

    /// The file name used in errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The next record: its starting line and fields; `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<(u64, &[String])>> {
        let more = self.input.read_byte_record(&mut self.record).map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            match e.into_kind() {
                csv::ErrorKind::Io(e) => io(&self.file, e),
                kind => Error::Malformed {
                    file: self.file.clone(),
                    line,
                    field: "record".into(),
                    message: format!("{kind:?}"),
                },
            }
        })?;
        if !more {
            return Ok(None);
        }
        let line = self.start_line();
        let count = self.record.len();
        for (k, bytes) in self.record.iter().enumerate() {
            let text = std::str::from_utf8(bytes).map_err(|e| Error::Malformed {
                file: self.file.clone(),
                line,
                field: format!("field {}", k + 1),
                message: format!(
                    "byte 0x{:02x} at position {} is not valid UTF-8",
                    bytes[e.valid_up_to()],
                    e.valid_up_to() + 1
                ),
            })?;
            match self.fields.get_mut(k) {
                Some(f) => {
                    f.clear();
                    f.push_str(text);
                }
                None => self.fields.push(text.to_owned()),
            }
        }
        Ok(Some((line, &self.fields[..count])))
    }

    /// The line the record just read starts on: `csv`'s position of it
    /// (where the previous record ended), plus the line ends of the empty
    /// lines between. Drops the window's bytes up to the record's end.
    fn start_line(&mut self) -> u64 {
        let pos = self.record.position().cloned().unwrap_or_else(csv::Position::new);
        let end = self.input.position().byte();
        let mut w = self.window.borrow_mut();
        let from = (pos.byte().saturating_sub(w.start) as usize).min(w.bytes.len());
        let skipped =
            w.bytes[from..].iter().take_while(|b| matches!(b, b'\r' | b'\n')).filter(|&&b| b == b'\n').count();
        let upto = (end.saturating_sub(w.start) as usize).min(w.bytes.len());
        w.bytes.drain(..upto);
        w.start += upto as u64;
        pos.line() + skipped as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_line_and_field() {
        let mut r = RecordReader::new(&b"a,b\n\"E1 6\xffAN\",2\n"[..], "t.csv");
        assert!(r.next_record().unwrap().is_some());
        let e = r.next_record().unwrap_err().to_string();
        assert_eq!(e, "t.csv line 2, field \"field 1\": byte 0xff at position 5 is not valid UTF-8");
    }

    fn all(text: &str) -> Result<Vec<(u64, Vec<String>)>> {
        let mut r = RecordReader::new(text.as_bytes(), "t.csv");
        let mut out = Vec::new();
        while let Some((line, f)) = r.next_record()? {
            out.push((line, f.to_vec()));
        }
        Ok(out)
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn quoting_line_ends_and_line_numbers() {
        let text = "a,b\n\n\"c\",\"d,e\"\r\n\r\n\"f \"\"g\"\"\",\n\"multi\nline\",x\nlast";
        let got = all(text).unwrap();
        assert_eq!(
            got,
            vec![
                (1, s(&["a", "b"])),
                (3, s(&["c", "d,e"])),
                (5, s(&["f \"g\"", ""])),
                (6, s(&["multi\nline", "x"])),
                (8, s(&["last"])),
            ]
        );
        assert_eq!(all("").unwrap(), vec![]);
        assert_eq!(all(",\n").unwrap(), vec![(1, s(&["", ""]))]);
    }

    /// Malformed quoting is read leniently (the `csv` crate's rules); the
    /// record keeps the line it starts on, so the parsers' refusal names it.
    #[test]
    fn malformed_quotes_are_read_leniently_at_the_starting_line() {
        assert_eq!(all("a\n\"b\"c,d\n").unwrap(), vec![(1, s(&["a"])), (2, s(&["bc", "d"]))]);
        assert_eq!(
            all("a\nb,\"open\nstill open\n").unwrap(),
            vec![(1, s(&["a"])), (2, s(&["b", "open\nstill open\n"]))]
        );
    }

    #[test]
    fn long_input_streams_with_exact_line_numbers() {
        let mut text = String::new();
        for k in 0..10_000 {
            text.push_str(&format!("\"{k}\",\"x{k}\"\r\n"));
            if k % 1000 == 0 {
                text.push('\n');
            }
        }
        let got = all(&text).unwrap();
        assert_eq!(got.len(), 10_000);
        assert_eq!(got[1], (3, s(&["1", "x1"])));
        assert_eq!(got[9_999].0, 10_000 + 10);
    }
}
