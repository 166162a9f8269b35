//! Scenarios: a TOML file, TOML text or the same structure as JSON (what the
//! Python layer sends), read into the `Config` the simulator runs. The only
//! module that knows TOML.
mod build;
mod classes;
mod trace;

pub use crate::settings::{ScenarioError, Value};
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
        ScenarioError::new("", format!("invalid JSON: {msg}"))
    })
}

/// Parse TOML text into a document tree. Non-finite floats (TOML's `nan`, `inf`)
/// become the strings "nan" / "inf" / "-inf", which number keys reject by name.
pub fn parse_toml(text: &str) -> Result<Value> {
    let t: toml::Table = toml::from_str(text).map_err(|e| ScenarioError::new("", format!("invalid TOML: {}", e.message())))?;
    Ok(from_toml(toml::Value::Table(t)))
}

fn from_toml(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map(Value::Number).unwrap_or_else(|| {
            Value::String(if f.is_nan() { "nan".into() } else if f > 0.0 { "inf".into() } else { "-inf".into() })
        }),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(from_toml).collect()),
        toml::Value::Table(t) => Value::Object(t.into_iter().map(|(k, v)| (k, from_toml(v))).collect()),
    }
}

/// Parse and validate a JSON scenario; `base_dir` resolves relative file names.
pub fn load_json(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>)> {
    build(&parse_json(text)?, base_dir, seed, &Registry::new())
}

/// Parse and validate a TOML scenario.
pub fn load_toml(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>)> {
    build(&parse_toml(text)?, base_dir, seed, &Registry::new())
}
