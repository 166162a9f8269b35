//! Traffic inputs read from CSV files: flow lists and empirical size CDFs. Errors
//! name the scenario key that gave the file and the line at fault, and never
//! echo the file's content.
use crate::engine::SimTime;
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
fn read_csv(path: &Path, key: &str, columns: &[&str]) -> Result<Vec<(usize, Vec<String>)>> {
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

fn num(v: &str, path: &Path, line: usize, col: &str, key: &str) -> Result<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| ScenarioError::new(key, format!("{} line {line}: column {col:?} expected a finite number", path.display())))
}

/// Flow list CSV: `start` (seconds), `size` (bytes), `class`; the rows of `class`,
/// sorted by start (stable).
pub fn read_flow_list(path: &Path, class: &str, key: &str) -> Result<Vec<(SimTime, u64)>> {
    let mut flows = Vec::new();
    for (line, r) in read_csv(path, key, &["start", "size", "class"])? {
        if r[2] != class {
            continue;
        }
        let start = num(&r[0], path, line, "start", key)?;
        let size = num(&r[1], path, line, "size", key)?;
        if !(0.0..=SimTime::LONGEST.as_secs_f64()).contains(&start) {
            return err(key, format!("{} line {line}: start must be from 0 to 1e9 seconds, got {start}", path.display()));
        }
        if !(1.0..=super::size::MAX_FLOW_BYTES as f64).contains(&size) {
            return err(key, format!("{} line {line}: size must be from 1 to 10^15 bytes, got {size}", path.display()));
        }
        flows.push((SimTime::from_secs_f64(start), size.round() as u64));
    }
    if flows.is_empty() {
        return err(key, format!("{} has no row whose class is {class:?}", path.display()));
    }
    flows.sort_by_key(|f| f.0);
    Ok(flows)
}

/// Empirical CDF CSV: `size` (bytes, increasing), `cdf` (non-decreasing, last = 1).
pub fn read_cdf(path: &Path, key: &str) -> Result<Vec<(f64, f64)>> {
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for (line, r) in read_csv(path, key, &["size", "cdf"])? {
        let s = num(&r[0], path, line, "size", key)?;
        let c = num(&r[1], path, line, "cdf", key)?;
        if !(1.0..=super::size::MAX_FLOW_BYTES as f64).contains(&s) || !(0.0..=1.0).contains(&c) {
            return err(key, format!("{} line {line}: need 1 <= size <= 10^15 and 0 <= cdf <= 1", path.display()));
        }
        if let Some(&(ps, pc)) = pts.last() {
            if s <= ps || c < pc {
                return err(key, format!("{} line {line}: sizes must increase and cdf must not decrease", path.display()));
            }
        }
        pts.push((s, c));
    }
    match pts.last() {
        Some(&(_, c)) if (c - 1.0).abs() < 1e-9 => Ok(pts),
        _ => err(key, format!("{}: the last cdf value must be 1", path.display())),
    }
}
