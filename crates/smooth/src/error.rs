//! Errors that name the argument at fault, so bindings can raise a clear `ValueError`.
use std::fmt;

/// An invalid argument: which one (`arg`) and why (`reason`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The argument's name as the Python API spells it.
    pub arg: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl ParamError {
    /// An error about argument `arg`.
    pub fn new(arg: &'static str, reason: impl Into<String>) -> Self {
        Self { arg, reason: reason.into() }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.arg, self.reason)
    }
}

impl std::error::Error for ParamError {}
