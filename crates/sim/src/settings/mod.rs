//! Reading user settings: a scenario document (TOML or JSON) as a tree of values,
//! read table by table into typed parameters, every error naming its key path
//! (`traffic[0].cc.target: expected a duration like "25ms", got "soon"`).
//!
//! Each part of the simulator reads its own settings with a [`Table`]: a
//! congestion controller its `cc` table, a queue discipline its `queue` table,
//! the scenario its top level. A table remembers the keys it was asked for, so an
//! unknown key is reported with the keys that would have been accepted.
pub mod readers;
pub mod units;

use crate::engine::SimTime;
use std::fmt;
pub use units::QueueLimit;

/// A document tree: what TOML and JSON both parse into.
pub type Value = serde_json::Value;

/// A settings error: the key path at fault and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// Key path such as `links[2].rate` (empty for the whole document).
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Result of reading settings.
pub type Result<T> = std::result::Result<T, ScenarioError>;

/// An error at `path`.
pub fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> Result<T> {
    Err(ScenarioError::new(path, msg))
}

/// `path.key`, or `key` at the top level.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// How a value was written, for error messages: `the string "x"`, `the number 3`.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("{n}"),
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a table".into(),
    }
}

/// A value that can be read from a document tree.
pub trait Read: Sized {
    /// Read `v`, found at `path`.
    fn read(v: &Value, path: &str) -> Result<Self>;
}

impl Read for bool {
    fn read(v: &Value, path: &str) -> Result<Self> {
        v.as_bool().ok_or_else(|| ScenarioError::new(path, format!("expected true or false, got {}", describe(v))))
    }
}

impl Read for String {
    fn read(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::String(s) => Ok(s.clone()),
            _ => err(path, format!("expected a string, got {}", describe(v))),
        }
    }
}

impl Read for f64 {
    /// A finite number (integers accepted).
    fn read(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::Number(n) => match n.as_f64() {
                Some(x) if x.is_finite() => Ok(x),
                _ => err(path, format!("expected a finite number, got {n}")),
            },
            Value::String(s) if matches!(s.to_ascii_lowercase().trim_start_matches(['+', '-']), "nan" | "inf" | "infinity") => {
                err(path, format!("expected a finite number, got {s}"))
            }
            _ => err(path, format!("expected a number, got {}", describe(v))),
        }
    }
}

macro_rules! read_whole {
    ($($t:ty),*) => {$(
        impl Read for $t {
            /// A whole number in the type's range.
            fn read(v: &Value, path: &str) -> Result<Self> {
                let bad = || ScenarioError::new(path, format!(
                    "expected a whole number from {} to {}, got {}", <$t>::MIN, <$t>::MAX, describe(v)));
                match v {
                    Value::Number(n) => {
                        if let Some(u) = n.as_u64() {
                            <$t>::try_from(u).map_err(|_| bad())
                        } else if let Some(i) = n.as_i64() {
                            <$t>::try_from(i).map_err(|_| bad())
                        } else {
                            Err(bad())
                        }
                    }
                    _ => Err(bad()),
                }
            }
        }
    )*};
}
read_whole!(u8, u16, u32, u64);

/// A value written as a string with a unit, parsed by `parse`.
fn read_unit<T>(v: &Value, path: &str, example: &str, parse: fn(&str) -> std::result::Result<T, String>) -> Result<T> {
    match v {
        Value::String(s) => parse(s).map_err(|m| ScenarioError::new(path, m)),
        Value::Number(n) => err(path, format!("expected {example}, got {n} (write the unit)")),
        _ => err(path, format!("expected {example}, got {}", describe(v))),
    }
}

/// A duration written with its unit ("25ms").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Duration(pub SimTime);

impl Read for Duration {
    fn read(v: &Value, path: &str) -> Result<Self> {
        read_unit(v, path, "a duration like \"25ms\"", units::parse_duration).map(Duration)
    }
}

/// A rate written with its unit ("10Mbps"), in bits per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

/// A rate written with its unit, in whole bits per second (a link's rate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WholeRate(pub u64);

impl Read for WholeRate {
    fn read(v: &Value, path: &str) -> Result<Self> {
        let bps = read_unit(v, path, "a rate like \"10Mbps\"", units::parse_rate)?;
        units::whole_bps(bps, v.as_str().unwrap_or_default()).map(WholeRate).map_err(|m| ScenarioError::new(path, m))
    }
}

impl Read for Rate {
    fn read(v: &Value, path: &str) -> Result<Self> {
        read_unit(v, path, "a rate like \"10Mbps\"", units::parse_rate).map(Rate)
    }
}

/// A size written with its unit ("3MB"), in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub f64);

impl Read for Size {
    fn read(v: &Value, path: &str) -> Result<Self> {
        read_unit(v, path, "a size like \"3MB\"", units::parse_size).map(Size)
    }
}

impl Read for QueueLimit {
    fn read(v: &Value, path: &str) -> Result<Self> {
        read_unit(v, path, "a queue limit like \"80ms\", \"100pkts\" or \"150KB\"", units::parse_queue_limit)
    }
}

impl<T: Read> Read for Vec<T> {
    fn read(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::Array(items) => items.iter().enumerate().map(|(i, x)| T::read(x, &format!("{path}[{i}]"))).collect(),
            _ => err(path, format!("expected a list, got {}", describe(v))),
        }
    }
}

/// One table of a document, read key by key. Unknown keys are reported by
/// [`Table::finish`] with the keys that were asked for.
pub struct Table<'v> {
    path: String,
    map: &'v serde_json::Map<String, Value>,
    /// Keys asked for (present or not), in the order asked.
    known: Vec<&'static str>,
}

impl<'v> Table<'v> {
    /// Read `v` (found at `path`) as a table.
    pub fn new(v: &'v Value, path: impl Into<String>) -> Result<Self> {
        let path = path.into();
        match v {
            Value::Object(map) => Ok(Table { path, map, known: Vec::new() }),
            _ => err(path, format!("expected a table, got {}", describe(v))),
        }
    }

    /// The path of this table.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path of `key` in this table.
    pub fn key_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    fn ask(&mut self, key: &'static str) -> Option<&'v Value> {
        if !self.known.contains(&key) {
            self.known.push(key);
        }
        // An explicit null (a Python None) means absent.
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Whether `key` is present (it counts as known).
    pub fn has(&mut self, key: &'static str) -> bool {
        self.ask(key).is_some()
    }

    /// Whether `key` is present, without counting it as known (to give a better
    /// message than "unknown key" for keys that belong to another kind of table).
    pub fn present(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    /// The raw value of `key`, if present.
    pub fn raw(&mut self, key: &'static str) -> Option<&'v Value> {
        self.ask(key)
    }

    /// `key`, if present.
    pub fn get<T: Read>(&mut self, key: &'static str) -> Result<Option<T>> {
        match self.ask(key) {
            Some(v) => T::read(v, &join(&self.path, key)).map(Some),
            None => Ok(None),
        }
    }

    /// `key`, or `default` if absent.
    pub fn or<T: Read>(&mut self, key: &'static str, default: T) -> Result<T> {
        Ok(self.get(key)?.unwrap_or(default))
    }

    /// `key`, which must be present; `what` says what it is for.
    pub fn req<T: Read>(&mut self, key: &'static str, what: &str) -> Result<T> {
        match self.get(key)? {
            Some(v) => Ok(v),
            None => err(join(&self.path, key), format!("missing: {what}")),
        }
    }

    /// The sub-table `key`, if present.
    pub fn table(&mut self, key: &'static str) -> Result<Option<Table<'v>>> {
        let path = join(&self.path, key);
        self.ask(key).map(|v| Table::new(v, path)).transpose()
    }

    /// The list `key`, as (path, value) items, if present.
    pub fn list(&mut self, key: &'static str) -> Result<Option<Vec<(String, &'v Value)>>> {
        let path = join(&self.path, key);
        match self.ask(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items.iter().enumerate().map(|(i, v)| (format!("{path}[{i}]"), v)).collect())),
            Some(v) => err(path, format!("expected a list, got {}", describe(v))),
        }
    }

    /// Keys present but never asked for.
    fn unknown(&self) -> impl Iterator<Item = &'v str> + '_ {
        self.map.iter().filter(|(k, v)| !v.is_null() && !self.known.contains(&k.as_str())).map(|(k, _)| k.as_str())
    }

    /// Reject keys that were never asked for; `what` names the table for the message
    /// ("a link", "the newreno controller").
    pub fn finish(self, what: &str) -> Result<()> {
        if let Some(k) = self.unknown().next() {
            let hint = closest(k, &self.known).map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default();
            let takes = if self.known.is_empty() {
                format!("{what} takes no keys")
            } else {
                format!("{what} takes: {}", self.known.join(", "))
            };
            return err(join(&self.path, k), format!("unknown key{hint}; {takes}"));
        }
        Ok(())
    }
}

/// The known key closest to `k` by edit distance, if close enough to be a typo.
fn closest<'a>(k: &str, known: &[&'a str]) -> Option<&'a str> {
    let d = |a: &str, b: &str| -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push((prev[j] + (ca != *cb) as usize).min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    };
    known.iter().map(|c| (d(k, c), *c)).filter(|(dist, c)| *dist <= 2.max(c.len() / 4)).min().map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_typed_values_and_names_the_key() {
        let doc = json!({"a": 3, "b": "25ms", "c": 1.5, "d": [1, 2], "e": {"x": true}, "n": null});
        let mut t = Table::new(&doc, "top").unwrap();
        assert_eq!(t.req::<u32>("a", "").unwrap(), 3);
        assert_eq!(t.get::<Duration>("b").unwrap(), Some(Duration(SimTime::from_millis(25))));
        assert_eq!(t.or::<f64>("c", 0.0).unwrap(), 1.5);
        assert_eq!(t.get::<Vec<u64>>("d").unwrap(), Some(vec![1, 2]));
        let mut e = t.table("e").unwrap().unwrap();
        assert!(e.req::<bool>("x", "").unwrap());
        e.finish("e").unwrap();
        assert_eq!(t.get::<u32>("n").unwrap(), None); // null is absent
        assert_eq!(t.req::<u32>("m", "the m").unwrap_err().to_string(), "top.m: missing: the m");
        t.finish("the top").unwrap();
    }

    #[test]
    fn type_errors_name_the_key_and_what_was_written() {
        let doc = json!({"a": "3", "b": -1, "c": 1.5, "d": 1e30, "e": 5000000000u64, "f": "nan", "g": 10});
        let mut t = Table::new(&doc, "").unwrap();
        assert_eq!(t.get::<u32>("a").unwrap_err().to_string(), "a: expected a whole number from 0 to 4294967295, got \"3\"");
        assert!(t.get::<u64>("b").unwrap_err().to_string().starts_with("b: expected a whole number"));
        assert!(t.get::<u32>("c").unwrap_err().to_string().ends_with("got 1.5"));
        assert!(t.get::<u64>("d").is_err());
        assert!(t.get::<u32>("e").is_err());
        assert_eq!(t.get::<f64>("f").unwrap_err().to_string(), "f: expected a finite number, got nan");
        assert_eq!(t.get::<Duration>("g").unwrap_err().to_string(), "g: expected a duration like \"25ms\", got 10 (write the unit)");
    }

    #[test]
    fn unknown_keys_are_listed_with_a_suggestion() {
        let doc = json!({"rate": "1Mbps", "dealy": "5ms"});
        let mut t = Table::new(&doc, "links[0]").unwrap();
        t.get::<Rate>("rate").unwrap();
        t.get::<Duration>("delay").unwrap();
        let e = t.finish("a link").unwrap_err().to_string();
        assert_eq!(e, "links[0].dealy: unknown key (did you mean `delay`?); a link takes: rate, delay");
        let doc = json!({"x": 1});
        assert_eq!(Table::new(&doc, "cc").unwrap().finish("newreno").unwrap_err().to_string(), "cc.x: unknown key; newreno takes no keys");
        assert_eq!(Table::new(&json!(3), "cc").err().unwrap().to_string(), "cc: expected a table, got 3");
    }
}
