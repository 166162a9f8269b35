//! Strict parsing of values with explicit units: rates ("10Mbps"), sizes ("3MB"),
//! durations ("25ms") and queue limits ("80ms", "100pkts", "150KB").
//!
//! Prefixes are decimal (k = 10^3, M = 10^6, G = 10^9) as in networking practice;
//! binary sizes are written KiB, MiB, GiB. Each parser returns `Err` with what
//! was wrong; the caller adds the key path.
use crate::engine::SimTime;

/// The fastest rate a scenario may configure: 10^15 bit/s (1 Pbit/s).
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;

/// Split "12.5 Mbps" into (12.5, "Mbps"). The number must be finite.
fn split(s: &str) -> Option<(f64, &str)> {
    let t = s.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E')))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    // An exponent needs digits after it: "5e" is 5 of the unit "e...", not 5e0.
    let mut end = end;
    while end > 0 && matches!(t.as_bytes()[end - 1], b'e' | b'E' | b'+' | b'-') {
        end -= 1;
    }
    let (num, unit) = t.split_at(end);
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// A link or sending rate in bits per second, e.g. "10Mbps", "1.5 Gbps", "64kbps".
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let bad = || format!("expected a rate like \"10Mbps\", got {s:?}");
    let (v, unit) = split(s).ok_or_else(bad)?;
    let mult = match unit {
        "bps" | "bit/s" => 1.0,
        "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
        "Mbps" | "Mbit/s" => 1e6,
        "Gbps" | "Gbit/s" => 1e9,
        "Tbps" | "Tbit/s" => 1e12,
        _ => return Err(bad()),
    };
    let bps = v * mult;
    if !(bps > 0.0) {
        return Err(format!("expected a positive rate, got {s:?}"));
    }
    if bps > MAX_RATE_BPS as f64 {
        return Err(format!("expected a rate of at most 1Pbps, got {s:?}"));
    }
    Ok(bps)
}

/// A rate in whole bits per second (a link's), from `bps` as parsed.
pub fn whole_bps(bps: f64, written: &str) -> Result<u64, String> {
    let whole = bps.round();
    if whole < 1.0 || (bps - whole).abs() > 1e-6 * whole {
        return Err(format!("expected a whole number of bits per second, got {written:?} ({bps} bit/s)"));
    }
    Ok(whole as u64)
}

/// A data size in bytes, e.g. "3MB", "1500B", "64KiB" (fractions allowed: a mean).
pub fn parse_size(s: &str) -> Result<f64, String> {
    let bad = || format!("expected a size like \"3MB\", got {s:?}");
    let (v, unit) = split(s).ok_or_else(bad)?;
    let mult = match unit {
        "B" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let b = v * mult;
    if b < 0.0 {
        return Err(format!("expected a non-negative size, got {s:?}"));
    }
    if b > 1e18 {
        return Err(format!("expected a size of at most 1EB (10^18 bytes), got {s:?}"));
    }
    Ok(b)
}

/// A duration, e.g. "25ms", "2000s", "1.5us", "10min"; at most `SimTime::LONGEST`.
pub fn parse_duration(s: &str) -> Result<SimTime, String> {
    let bad = || format!("expected a duration like \"25ms\", got {s:?}");
    let (v, unit) = split(s).ok_or_else(bad)?;
    let ns = match unit {
        "ns" => v,
        "us" | "µs" => v * 1e3,
        "ms" => v * 1e6,
        "s" => v * 1e9,
        "min" => v * 60e9,
        "h" => v * 3600e9,
        _ => return Err(bad()),
    };
    if ns < 0.0 {
        return Err(format!("expected a non-negative duration, got {s:?}"));
    }
    if ns.round() > SimTime::LONGEST.0 as f64 {
        return Err(format!("expected a duration of at most 1e9s (about 31.7 years), got {s:?}"));
    }
    Ok(SimTime(ns.round() as u64))
}

/// A queue limit as written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    /// At most this many packets waiting.
    Packets(u64),
    /// At most this many bytes waiting.
    Bytes(u64),
    /// At most this much time's worth of the link's rate waiting.
    Time(SimTime),
}

/// "100pkts" / "100packets" / "100p", "150KB", or "80ms".
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, String> {
    let bad = || format!("expected a queue limit like \"80ms\", \"100pkts\" or \"150KB\", got {s:?}");
    let (v, unit) = split(s).ok_or_else(bad)?;
    match unit {
        "p" | "pkt" | "pkts" | "packets" => {
            if v.fract() != 0.0 || !(0.0..=1e18).contains(&v) {
                return Err(format!("expected a whole number of packets (at most 10^18), got {s:?}"));
            }
            Ok(QueueLimit::Packets(v as u64))
        }
        _ => {
            match parse_size(s) {
                Ok(b) => return Ok(QueueLimit::Bytes(b.round() as u64)),
                Err(e) if e.contains("at most") => return Err(e),
                Err(_) => {}
            }
            parse_duration(s).map(QueueLimit::Time).map_err(|_| bad())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_rate("10Mbps"), Ok(10e6));
        assert_eq!(parse_rate("1.5 Gbps"), Ok(1.5e9));
        assert_eq!(whole_bps(parse_rate("0.1Gbps").unwrap(), ""), Ok(100_000_000));
        assert!(whole_bps(parse_rate("0.5bps").unwrap(), "").unwrap_err().contains("whole number"));
        assert!(parse_rate("ten").is_err());
        assert!(parse_rate("10").is_err());
        assert!(parse_rate("0Mbps").unwrap_err().contains("positive"));
        assert!(parse_rate("2Pbps").is_err());
        assert!(parse_rate("5000Tbps").unwrap_err().contains("at most"));
        assert_eq!(parse_size("3MB"), Ok(3e6));
        assert_eq!(parse_size("2KiB"), Ok(2048.0));
        assert_eq!(parse_size("1e3B"), Ok(1000.0));
        assert_eq!(parse_duration("25ms"), Ok(SimTime(25_000_000)));
        assert_eq!(parse_duration("2000s"), Ok(SimTime(2_000_000_000_000)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("18446744073s").unwrap_err().contains("at most 1e9s"));
        assert_eq!(parse_duration("1e9s"), Ok(SimTime::LONGEST));
        assert_eq!(parse_queue_limit("80ms"), Ok(QueueLimit::Time(SimTime(80_000_000))));
        assert_eq!(parse_queue_limit("100pkts"), Ok(QueueLimit::Packets(100)));
        assert_eq!(parse_queue_limit("150KB"), Ok(QueueLimit::Bytes(150_000)));
        assert!(parse_queue_limit("1.5pkts").is_err());
        assert!(parse_queue_limit("1e30pkts").is_err());
    }
}
