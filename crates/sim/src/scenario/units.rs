//! Strict parsing of values with explicit units: rates ("10Mbps"), sizes ("3MB"),
//! durations ("25ms") and queue limits ("80ms", "100pkts", "150KB").
//!
//! Prefixes are decimal (k = 10^3, M = 10^6, G = 10^9) as in networking practice;
//! binary sizes are written KiB, MiB, GiB.
use crate::engine::SimTime;

/// Split "12.5 Mbps" into (12.5, "Mbps"). The number must be finite.
fn split(s: &str) -> Option<(f64, &str)> {
    let t = s.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '+' || *c == '-'))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// A link or sending rate in bits per second, e.g. "10Mbps", "1.5 Gbps", "64kbps".
pub fn parse_rate(s: &str) -> Option<f64> {
    let (v, unit) = split(s)?;
    let mult = match unit {
        "bps" | "bit/s" => 1.0,
        "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
        "Mbps" | "Mbit/s" => 1e6,
        "Gbps" | "Gbit/s" => 1e9,
        _ => return None,
    };
    Some(v * mult)
}

/// A data size in bytes, e.g. "3MB", "1500B", "64KiB".
pub fn parse_size(s: &str) -> Option<f64> {
    let (v, unit) = split(s)?;
    let mult = match unit {
        "B" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(v * mult)
}

/// A duration, e.g. "25ms", "2000s", "1.5us", "10min".
pub fn parse_duration(s: &str) -> Option<SimTime> {
    let (v, unit) = split(s)?;
    let ns = match unit {
        "ns" => v,
        "us" | "µs" => v * 1e3,
        "ms" => v * 1e6,
        "s" => v * 1e9,
        "min" => v * 60e9,
        "h" => v * 3600e9,
        _ => return None,
    };
    if !(ns >= 0.0) || ns >= u64::MAX as f64 {
        return None;
    }
    Some(SimTime(ns.round() as u64))
}

/// A queue limit.
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
pub fn parse_queue_limit(s: &str) -> Option<QueueLimit> {
    let (v, unit) = split(s)?;
    match unit {
        "p" | "pkt" | "pkts" | "packets" => {
            if v.fract() != 0.0 || v < 0.0 {
                return None;
            }
            Some(QueueLimit::Packets(v as u64))
        }
        _ => {
            if let Some(b) = parse_size(s) {
                return Some(QueueLimit::Bytes(b.round() as u64));
            }
            parse_duration(s).map(QueueLimit::Time)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_rate("10Mbps"), Some(10e6));
        assert_eq!(parse_rate("1.5 Gbps"), Some(1.5e9));
        assert_eq!(parse_rate("ten"), None);
        assert_eq!(parse_rate("10"), None);
        assert_eq!(parse_size("3MB"), Some(3e6));
        assert_eq!(parse_size("2KiB"), Some(2048.0));
        assert_eq!(parse_duration("25ms"), Some(SimTime(25_000_000)));
        assert_eq!(parse_duration("2000s"), Some(SimTime(2_000_000_000_000)));
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_queue_limit("80ms"), Some(QueueLimit::Time(SimTime(80_000_000))));
        assert_eq!(parse_queue_limit("100pkts"), Some(QueueLimit::Packets(100)));
        assert_eq!(parse_queue_limit("150KB"), Some(QueueLimit::Bytes(150_000)));
        assert_eq!(parse_queue_limit("1.5pkts"), None);
    }
}
