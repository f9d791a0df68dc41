//! A streaming reader of comma-separated records (RFC 4180) that knows the
//! exact line each record starts on.
//!
//! Both public files of the study are CSV: HM Land Registry's Price Paid
//! Data (no header, every field quoted) and the ONS Postcode Directory (a
//! header row, text fields quoted). They are large (GBs), so records are read
//! one at a time into reused buffers; nothing else is kept.
//!
//! Rules:
//! - records end at LF or CRLF; lines that are empty (after removing the line
//!   end) are skipped and still counted, so line numbers are those an editor
//!   shows;
//! - a field is either unquoted (everything up to the next comma) or quoted:
//!   `"…"`, where `""` stands for one `"`, and commas and line breaks are
//!   part of the field; a quoted field must be followed by a comma or the end
//!   of the record;
//! - a quoted field still open at the end of the file is an error at the
//!   line where its record starts;
//! - bytes that are not UTF-8 are replaced by U+FFFD (the study only parses
//!   postcodes, prices, dates and coordinates, which such a byte makes
//!   malformed anyway).

use std::io::BufRead;

use crate::error::{Error, Result, io};

/// Reads records one by one (see the module documentation for the rules).
pub struct RecordReader<R> {
    input: R,
    file: String,
    line: u64,
    raw: Vec<u8>,
    /// Field buffers, reused across records (their capacity is kept).
    fields: Vec<String>,
    /// Fields of the current record.
    count: usize,
    /// Bytes of the field being read.
    field: Vec<u8>,
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `input`; `file` names it in errors.
    pub fn new(input: R, file: &str) -> Self {
        RecordReader {
            input,
            file: file.to_string(),
            line: 0,
            raw: Vec::new(),
            fields: Vec::new(),
            count: 0,
            field: Vec::new(),
        }
    }

    /// The file name used in errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Reads one physical line into `raw` (line end removed); false at EOF.
    fn physical_line(&mut self) -> Result<bool> {
        self.raw.clear();
        let n = self.input.read_until(b'\n', &mut self.raw).map_err(|e| io(&self.file, e))?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.raw.last() == Some(&b'\n') {
            self.raw.pop();
            if self.raw.last() == Some(&b'\r') {
                self.raw.pop();
            }
        }
        Ok(true)
    }

    /// The next record: its starting line and fields; `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<(u64, &[String])>> {
        loop {
            if !self.physical_line()? {
                return Ok(None);
            }
            if !self.raw.is_empty() {
                break;
            }
        }
        let start = self.line;
        self.count = 0;
        let mut field = std::mem::take(&mut self.field);
        field.clear();
        let mut pos = 0;
        loop {
            // At the start of a field.
            if self.raw.get(pos) == Some(&b'"') {
                pos += 1;
                loop {
                    match self.raw.get(pos) {
                        Some(b'"') if self.raw.get(pos + 1) == Some(&b'"') => {
                            field.push(b'"');
                            pos += 2;
                        }
                        Some(b'"') => {
                            pos += 1;
                            break;
                        }
                        Some(&b) => {
                            field.push(b);
                            pos += 1;
                        }
                        None => {
                            // The quoted field continues on the next line.
                            field.push(b'\n');
                            if !self.physical_line()? {
                                return Err(Error::Malformed {
                                    file: self.file.clone(),
                                    line: start,
                                    field: format!("field {}", self.count + 1),
                                    message: "quoted field is not closed before the end of the file".into(),
                                });
                            }
                            pos = 0;
                        }
                    }
                }
                match self.raw.get(pos) {
                    None | Some(b',') => {}
                    Some(_) => {
                        return Err(Error::Malformed {
                            file: self.file.clone(),
                            line: start,
                            field: format!("field {}", self.count + 1),
                            message: "characters after the closing quote".into(),
                        });
                    }
                }
            } else {
                while let Some(&b) = self.raw.get(pos) {
                    if b == b',' {
                        break;
                    }
                    field.push(b);
                    pos += 1;
                }
            }
            // Invalid UTF-8 is an error naming the line and field, never
            // replaced silently (a mangled postcode would just not match).
            let text = std::str::from_utf8(&field).map_err(|e| Error::Malformed {
                file: self.file.clone(),
                line: start,
                field: format!("field {}", self.count + 1),
                message: format!(
                    "byte 0x{:02x} at position {} is not valid UTF-8",
                    field[e.valid_up_to()],
                    e.valid_up_to() + 1
                ),
            })?;
            match self.fields.get_mut(self.count) {
                Some(f) => {
                    f.clear();
                    f.push_str(text);
                }
                None => self.fields.push(text.to_owned()),
            }
            self.count += 1;
            field.clear();
            if self.raw.get(pos) == Some(&b',') {
                pos += 1;
                continue;
            }
            self.field = field;
            return Ok(Some((start, &self.fields[..self.count])));
        }
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

    #[test]
    fn malformed_quotes_name_the_starting_line() {
        let e = all("a\n\"b\"c,d\n").unwrap_err().to_string();
        assert_eq!(e, "t.csv line 2, field \"field 1\": characters after the closing quote");
        let e = all("a\nb,\"open\nstill open\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv line 2, field \"field 2\": quoted field is not closed"), "{e}");
    }
}
