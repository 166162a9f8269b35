//! Reading the CSV files traffic comes from (flow lists, empirical size CDFs).
//! Errors name the scenario key that gave the file and the line at fault, and
//! never echo the file's content.
use crate::settings::{err, Result, ScenarioError};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// `file` relative to `base` (the scenario file's folder), unless absolute.
pub fn resolve(base: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// Longest header line read before the file is known to be a CSV of the right kind.
const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// The rows of a CSV file with the given columns (by header name): each row is
/// (line number, cells of those columns). The header (the first line that is not
/// blank or a `#` comment) is read and checked before anything else, at most
/// 64 KiB of it, so that a file that is not such a CSV (a system file, a binary,
/// a device) is refused without reading it whole; errors never echo its content.
pub fn read_csv(path: &Path, key: &str, columns: &[&str]) -> Result<Vec<(usize, Vec<String>)>> {
    let shown = path.display();
    let cannot = |e: std::io::Error| ScenarioError::new(key, format!("cannot read {shown}: {e}"));
    let not_text = || ScenarioError::new(key, format!("{shown} is not a text (UTF-8) file"));
    let not_header = || {
        ScenarioError::new(key, format!("{shown}: the first line must be a header naming the columns {}", columns.join(", ")))
    };
    if !std::fs::metadata(path).map_err(cannot)?.is_file() {
        return err(key, format!("{shown} is not a regular file"));
    }
    let mut reader = BufReader::new(File::open(path).map_err(cannot)?);
    let mut buf = Vec::new();
    let mut skipped = 0;
    let header = loop {
        buf.clear();
        let n = reader.by_ref().take(MAX_HEADER_BYTES).read_until(b'\n', &mut buf).map_err(cannot)?;
        if n == 0 {
            return err(key, format!("{shown} is empty"));
        }
        if n as u64 == MAX_HEADER_BYTES && buf.last() != Some(&b'\n') {
            return Err(not_header());
        }
        let line = std::str::from_utf8(&buf).map_err(|_| not_text())?;
        if line.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n')) {
            return Err(not_text());
        }
        skipped += 1;
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            break t.to_string();
        }
    };
    let head: Vec<&str> = header.split(',').map(|h| h.trim()).collect();
    // A header is names: letters, digits and underscores.
    if head.iter().any(|h| h.is_empty() || !h.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')) {
        return Err(not_header());
    }
    let ix: Vec<usize> = columns.iter().map(|c| head.iter().position(|h| h == c).ok_or_else(not_header)).collect::<Result<_>>()?;
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).map_err(cannot)?;
    let text = String::from_utf8(rest).map_err(|_| not_text())?;
    let mut rows = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let line = n + 1 + skipped;
        let cells: Vec<&str> = l.split(',').map(|c| c.trim()).collect();
        // Every row has the header's cells: a row missing one (or with one too many)
        // would otherwise be read with an empty cell, or skipped as another class's.
        if cells.len() != head.len() {
            let want = head.join(", ");
            return err(key, format!("{shown} line {line}: expected {} cells ({want}), got {}", head.len(), cells.len()));
        }
        rows.push((line, ix.iter().map(|&i| cells[i].to_string()).collect()));
    }
    Ok(rows)
}

/// Cell `v` of column `col` at `line` as a finite number.
pub fn num(v: &str, path: &Path, line: usize, col: &str, key: &str) -> Result<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| ScenarioError::new(key, format!("{} line {line}: column {col:?} expected a finite number", path.display())))
}
