//! Scenarios: the user-facing specification (`spec`), its strict parsing with
//! key-path errors, and its validation into a `Config` the simulator runs.
pub mod build;
pub mod spec;
pub mod units;


pub use build::{Config, ClassKind, ClassParams, LinkParams, Protocol, SizeDist, TcpParams};
use std::fmt;
use std::path::Path;

/// A scenario error: the key path at fault and what was expected.
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
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn from_serde<E: fmt::Display>(e: serde_path_to_error::Error<E>) -> ScenarioError {
    let path = e.path().to_string();
    let mut msg = e.inner().to_string();
    // serde_json appends " at line L column C" of the JSON the Python layer built:
    // meaningless to the user, whose file is TOML; the key path says where.
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
    }
    ScenarioError::new(if path == "." { String::new() } else { path }, msg)
}

/// Parse a scenario from JSON text (what the Python API sends).
pub fn parse_json(text: &str) -> Result<spec::ScenarioSpec, ScenarioError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(from_serde)
}

/// Parse a scenario from TOML text.
pub fn parse_toml(text: &str) -> Result<spec::ScenarioSpec, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError::new("", e.to_string()))?;
    serde_path_to_error::deserialize(de).map_err(from_serde)
}

/// Parse and validate; `base_dir` resolves relative file names (flow lists, CDFs).
pub fn load_json(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>), ScenarioError> {
    build::build(parse_json(text)?, base_dir, seed)
}

/// Parse and validate a TOML scenario.
pub fn load_toml(text: &str, base_dir: &Path, seed: Option<u64>) -> Result<(Config, Vec<String>), ScenarioError> {
    build::build(parse_toml(text)?, base_dir, seed)
}

