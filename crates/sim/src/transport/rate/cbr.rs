//! Constant bit rate: UDP-like datagrams at a fixed rate, no feedback. With
//! rate U·C/N and random start phases these are the ideally smooth senders of the
//! lower-bounds paper.
use super::{RateControl, RateProtocol};
use crate::settings::units::MAX_RATE_BPS;
use crate::settings::{Rate, Result, Table};
use serde::{Deserialize, Serialize};

/// A constant-rate sender.
#[derive(Clone, Debug)]
pub struct Cbr {
    rate_bps: f64,
}

/// CBR's one parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrParams {
    /// Sending rate of each flow (bits per second, counting whole packets; a
    /// fraction allowed: N ideally smooth senders share C at U·C/N each).
    pub rate_bps: f64,
}

impl RateProtocol for Cbr {
    const NAME: &'static str = "cbr";
    type Params = CbrParams;

    /// `{ rate = "1Mbps" }`.
    fn read(mut t: Table) -> Result<CbrParams> {
        let rate: Rate = t.req("rate", "the sending rate of each flow, e.g. \"1Mbps\"")?;
        t.finish("the cbr protocol")?;
        Ok(CbrParams { rate_bps: rate.0 })
    }

    fn check(p: &CbrParams) -> std::result::Result<(), (&'static str, String)> {
        if !(p.rate_bps.is_finite() && p.rate_bps >= 0.0 && p.rate_bps <= MAX_RATE_BPS as f64) {
            return Err(("rate_bps", format!("expected a rate from 0 to 10^15 bits per second, got {}", p.rate_bps)));
        }
        Ok(())
    }

    fn file_key(key: &'static str) -> &'static str {
        match key {
            "rate_bps" => "rate",
            k => k,
        }
    }

    fn new(p: &CbrParams) -> Self {
        Cbr { rate_bps: p.rate_bps }
    }
}

impl RateControl for Cbr {
    #[inline]
    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
}
