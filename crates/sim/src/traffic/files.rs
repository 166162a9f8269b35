//! Reading the CSV files traffic comes from (flow lists, empirical size CDFs).
//! Errors name the scenario key that gave the file and the line at fault, and
//! never echo the file's content.
use crate::settings::{err, Result, ScenarioError};
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

/// The rows of a CSV file with the given columns (by header name): each row is
/// (line number, cells of those columns).
pub fn read_csv(path: &Path, key: &str, columns: &[&str]) -> Result<Vec<(usize, Vec<String>)>> {
    let bytes = std::fs::read(path).map_err(|e| ScenarioError::new(key, format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|_| ScenarioError::new(key, format!("{} is not a text (UTF-8) file", path.display())))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| ScenarioError::new(key, format!("{} is empty", path.display())))?;
    let head: Vec<&str> = header.split(',').map(|h| h.trim()).collect();
    let mut ix = Vec::new();
    for c in columns {
        match head.iter().position(|h| h == c) {
            Some(i) => ix.push(i),
            None => {
                return err(key, format!("{}: the first line must be a header naming the columns {}", path.display(), columns.join(", ")))
            }
        }
    }
    Ok(lines
        .map(|(n, l)| {
            let cells: Vec<&str> = l.split(',').map(|c| c.trim()).collect();
            (n + 1, ix.iter().map(|&i| cells.get(i).copied().unwrap_or_default().to_string()).collect())
        })
        .collect())
}

/// Cell `v` of column `col` at `line` as a finite number.
pub fn num(v: &str, path: &Path, line: usize, col: &str, key: &str) -> Result<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| ScenarioError::new(key, format!("{} line {line}: column {col:?} expected a finite number", path.display())))
}
