//! Readers of a value at one key of a table, with its range, shared by the protocols'
//! and disciplines' own readers (the range is checked again, on every way in, by each
//! one's `check()`; these name the key as the file writes it, and read units).
use super::{describe, err, Duration, Read, Result, ScenarioError, Table, Value};
use crate::engine::SimTime;

/// A positive number at `key` (finite: the reader refuses NaN and infinities), at most `max`.
pub fn positive_or(t: &mut Table, key: &'static str, what: &str, default: f64, max: f64) -> Result<f64> {
    let v: f64 = t.or(key, default)?;
    if v <= 0.0 {
        return err(t.key_path(key), format!("expected {what}, got {v}"));
    }
    if v > max {
        return err(t.key_path(key), format!("expected {what} of at most {max:e}, got {v}"));
    }
    Ok(v)
}

/// A positive finite number at most `hi` at `key`, if present.
pub fn positive(t: &mut Table, key: &'static str, hi: f64) -> Result<Option<f64>> {
    let Some(v) = t.raw(key) else { return Ok(None) };
    let path = t.key_path(key);
    let x = f64::read(v, &path)?;
    if x > 0.0 && x <= hi {
        Ok(Some(x))
    } else {
        err(path, format!("expected a positive number at most {hi}, got {}", describe(v)))
    }
}

/// A finite number from 0 to `hi` at `key`, if present.
pub fn nonnegative(t: &mut Table, key: &'static str, hi: f64) -> Result<Option<f64>> {
    let Some(v) = t.raw(key) else { return Ok(None) };
    let path = t.key_path(key);
    let x = f64::read(v, &path)?;
    if (0.0..=hi).contains(&x) {
        Ok(Some(x))
    } else {
        err(path, format!("expected a number from 0 to {hi}, got {}", describe(v)))
    }
}

/// A whole number from `lo` to `hi` at `key`, if present.
pub fn whole(t: &mut Table, key: &'static str, lo: u32, hi: u32) -> Result<Option<u32>> {
    let Some(v) = t.raw(key) else { return Ok(None) };
    let path = t.key_path(key);
    match v.as_u64() {
        Some(x) if (lo as u64..=hi as u64).contains(&x) => Ok(Some(x as u32)),
        _ => err(path, format!("expected a whole number from {lo} to {hi}, got {}", describe(v))),
    }
}

/// A name from `names`, or an error at `key` listing them.
pub fn pick<T: Copy>(t: &mut Table, key: &'static str, names: &[(&str, T)]) -> Result<Option<T>> {
    let Some(v) = t.raw(key) else { return Ok(None) };
    let path = t.key_path(key);
    let list = names.iter().map(|(n, _)| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    match v.as_str().and_then(|s| names.iter().find(|(n, _)| *n == s)) {
        Some(&(_, x)) => Ok(Some(x)),
        None => err(path, format!("expected one of {list}, got {}", describe(v))),
    }
}

/// A positive duration at `key`.
pub fn positive_duration(t: &mut Table, key: &'static str, default: Option<SimTime>, what: &str) -> Result<SimTime> {
    let d = match (t.get::<Duration>(key)?, default) {
        (Some(d), _) => d.0,
        (None, Some(d)) => d,
        (None, None) => return err(t.key_path(key), format!("missing: {what}")),
    };
    if d == SimTime::ZERO {
        return err(t.key_path(key), format!("expected a positive duration ({what}), got \"0s\""));
    }
    Ok(d)
}

/// A positive time `key` of at most 1e9 s, or `default`.
pub fn positive_time(t: &mut Table, key: &'static str, default: SimTime) -> Result<SimTime> {
    match t.get::<Duration>(key)? {
        None => Ok(default),
        Some(v) if v.0 > SimTime::ZERO && v.0 <= SimTime::LONGEST => Ok(v.0),
        Some(v) => err(t.key_path(key), format!("expected a positive time of at most 1e9 s, got {} ns", v.0 .0)),
    }
}

/// A positive duration at `key`, or `word` (returned as None).
pub fn duration_or(t: &mut Table, key: &'static str, word: &str, default: Option<SimTime>) -> Result<Option<SimTime>> {
    let path = t.key_path(key);
    let Some(v) = t.raw(key) else { return Ok(default) };
    if v.as_str() == Some(word) {
        return Ok(None);
    }
    let expected = || format!("expected a positive duration like \"20ms\" or \"{word}\", got {}", describe(v));
    match v {
        Value::String(_) => {
            let d = Duration::read(v, &path).map_err(|_| ScenarioError::new(&path, expected()))?;
            if d.0 == SimTime::ZERO {
                return err(path, expected());
            }
            Ok(Some(d.0))
        }
        _ => err(path, expected()),
    }
}
