//! Scenarios: a TOML file, TOML text or the same structure as JSON (what the
//! Python layer sends), read into the `Config` the simulator runs. The only
//! module that knows TOML.
mod build;
mod classes;
mod trace;

pub use crate::settings::{ScenarioError, Value};
use crate::settings::join;
pub use build::build;

use crate::config::Config;
use crate::settings::Result;
use crate::transport::cc::Registry;
use std::path::Path;

/// Parse JSON text into a document tree.
pub fn parse_json(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        let mut msg = e.to_string();
        if let Some(i) = msg.find(" at line ") {
            msg.truncate(i);
        }
        if msg.contains("recursion limit") {
            msg = TOO_DEEP.to_string();
        }
        ScenarioError::new("", format!("invalid JSON: {msg}"))
    })
}

/// Parse TOML text into a document tree. Non-finite floats (TOML's `nan`, `inf`)
/// become the strings "nan" / "inf" / "-inf", which number keys reject by name; a
/// date or time is refused naming its key (no scenario value is one). The parser
/// refuses nesting deeper than its recursion limit.
pub fn parse_toml(text: &str) -> Result<Value> {
    let t: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| line_column(text, s.start)).map(|(l, c)| format!(" (at line {l}, column {c})"));
        // The parser's own words for its recursion limit ("cannot recurse further") name no cause.
        let what = if e.message().contains("recurs") { TOO_DEEP } else { e.message().trim_end() };
        ScenarioError::new("", format!("invalid TOML: {what}{}", at.unwrap_or_default()))
    })?;
    from_toml(toml::Value::Table(t), "")
}

/// What a document nested beyond the parsers' recursion limits is told.
const TOO_DEEP: &str = "arrays or tables nested too deeply (no scenario needs more than a few levels)";

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset.min(text.len()))];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

fn from_toml(v: toml::Value, path: &str) -> Result<Value> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map(Value::Number).unwrap_or_else(|| {
            Value::String(if f.is_nan() { "nan".into() } else if f > 0.0 { "inf".into() } else { "-inf".into() })
        }),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => {
            let what = format!("a TOML date or time ({d}) is not a scenario value (durations and rates are strings, like \"25ms\" or \"10Mbps\")");
            return Err(ScenarioError::new(if path.is_empty() { "scenario" } else { path }, what));
        }
        toml::Value::Array(a) => {
            Value::Array(a.into_iter().enumerate().map(|(i, v)| from_toml(v, &format!("{path}[{i}]"))).collect::<Result<_>>()?)
        }
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| from_toml(v, &join(path, &k)).map(|v| (k, v))).collect::<Result<_>>()?)
        }
    })
}

/// Parse and validate a JSON scenario; `base_dir` resolves relative file names.
pub fn load_json(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>)> {
    build(&parse_json(text)?, base_dir, seed, &Registry::new())
}

/// Parse and validate a TOML scenario.
pub fn load_toml(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>)> {
    build(&parse_toml(text)?, base_dir, seed, &Registry::new())
}
