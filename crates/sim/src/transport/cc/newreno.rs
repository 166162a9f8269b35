//! NewReno's window rules (RFC 5681 §§3.1-3.2, with RFC 3465's byte counting as an
//! option). Recovery itself (fast retransmit, RFC 6582's partial ACKs) is in the
//! shared machinery.
use super::{Ack, Congestion, CongestionControl, Window, WindowProtocol};
use crate::settings::{Result, Table};
use serde::{Deserialize, Serialize};

/// TCP NewReno.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    growth: RenoGrowth,
}

/// Reno's window growth: slow start below ssthresh, congestion avoidance above
/// (RFC 5681 §3.1), counting ACKs or, when the ACK says so, bytes (RFC 3465).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RenoGrowth {
    /// RFC 3465 §2.1's bytes_acked: bytes acknowledged in congestion avoidance
    /// since cwnd last grew.
    bytes_acked: u64,
    /// In the slow start that follows a retransmission timeout (RFC 3465 §2.2:
    /// L = 1 segment there, since the ACKs may cover segments sent long before).
    after_timeout: bool,
    /// ns-2's `cwnd_` in segments (a double) while `ack.ns2_arithmetic`: the window
    /// in bytes is its integer part; when the machinery has set the window since
    /// (a loss, a timeout), the window in bytes is taken instead.
    ns2_cwnd: f64,
}

impl RenoGrowth {
    /// Grow the window on an ACK of new data outside recovery.
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if ack.ns2_arithmetic {
            return self.open_ns2(w);
        }
        if ack.byte_counting == 0 {
            if w.cwnd < w.ssthresh {
                // Slow start: cwnd += min(N, SMSS) per ACK (RFC 5681 eq. 2).
                w.cwnd += ack.bytes_acked.min(w.mss);
            } else {
                // Congestion avoidance: cwnd += SMSS*SMSS/cwnd per ACK (RFC 5681 eq. 3),
                // at least one byte, as in ns-3's TcpNewReno.
                w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
            }
            return;
        }
        if w.cwnd < w.ssthresh {
            // RFC 3465 §2.2: cwnd += min(N, L*SMSS).
            let l = if self.after_timeout { 1 } else { ack.byte_counting as u64 };
            w.cwnd += ack.bytes_acked.min(l.saturating_mul(w.mss));
            return;
        }
        self.after_timeout = false;
        // RFC 3465 §2.1: one SMSS per cwnd of bytes acknowledged.
        self.bytes_acked += ack.bytes_acked;
        if self.bytes_acked >= w.cwnd {
            self.bytes_acked -= w.cwnd;
            w.cwnd += w.mss;
        }
    }

    /// ns-2's `opencwnd()` (tcp/tcp.cc:1119-1238, windowOption_ 1, `increase_num_` 1):
    /// `cwnd_ += 1` below ssthresh_, else `cwnd_ += 1/cwnd_`, in segments, per ACK
    /// of new data whatever it covers.
    fn open_ns2(&mut self, w: &mut Window) {
        let cwnd = self.segments(w);
        // cwnd_ < ssthresh_ (an integer): the same test on the integer part in bytes.
        self.set_segments(w, if w.cwnd < w.ssthresh { cwnd + 1.0 } else { cwnd + 1.0 / cwnd });
    }

    /// ns-2's `cwnd_`: exact while the window in bytes is its integer part (the
    /// machinery sets the window through [`RenoGrowth::set_segments`], or to whole segments).
    #[inline]
    pub fn segments(&self, w: &Window) -> f64 {
        let mss = w.mss as f64;
        if (self.ns2_cwnd * mss) as u64 == w.cwnd {
            self.ns2_cwnd
        } else {
            w.cwnd as f64 / mss
        }
    }

    /// Set ns-2's `cwnd_` to `segments`.
    #[inline]
    pub fn set_segments(&mut self, w: &mut Window, segments: f64) {
        self.ns2_cwnd = segments;
        w.cwnd = (segments * w.mss as f64) as u64;
    }

    /// A congestion signal: the counted bytes belonged to the old window.
    #[inline]
    pub fn on_congestion(&mut self, event: Congestion) {
        self.bytes_acked = 0;
        if let Congestion::Timeout { .. } = event {
            self.after_timeout = true;
        }
    }
}

/// NewReno has no parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl WindowProtocol for NewReno {
    const NAME: &'static str = "newreno";
    type Params = NoParams;

    fn read(t: Table) -> Result<NoParams> {
        t.finish("newreno")?;
        Ok(NoParams {})
    }

    fn new(_: &NoParams) -> Self {
        NewReno::default()
    }
}

/// ssthresh = max(FlightSize / 2, 2*SMSS) (RFC 5681 eq. 4).
#[inline]
pub fn halve(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}

impl CongestionControl for NewReno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &Ack) {
        self.growth.on_ack(w, ack);
    }

    #[inline]
    fn on_congestion(&mut self, w: &Window, event: Congestion, flight: u64) -> u64 {
        self.growth.on_congestion(event);
        reno_ssthresh(w, event, flight)
    }

    #[inline]
    fn segments(&self, w: &Window) -> f64 {
        self.growth.segments(w)
    }

    #[inline]
    fn set_segments(&mut self, w: &mut Window, segments: f64) {
        self.growth.set_segments(w, segments)
    }
}

/// Reno's and NewReno's ssthresh on a congestion signal: half the flight, held
/// on a repeated timeout (RFC 5681 §3.1).
#[inline]
pub fn reno_ssthresh(w: &Window, event: Congestion, flight: u64) -> u64 {
    match event {
        Congestion::Timeout { repeated: true } => w.ssthresh,
        _ => halve(flight, w.mss),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn ack(bytes: u64) -> Ack {
        Ack {
            bytes_acked: bytes,
            bytes_delivered: bytes,
            cwnd_limited: true,
            ..Ack::default()
        }
    }

    #[test]
    fn slow_start_avoidance_and_halving() {
        let mut c = NewReno::default();
        let mut w = Window { cwnd: 4000, ssthresh: u64::MAX, mss: 1000 };
        c.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 5000); // + min(N, SMSS)
        c.on_ack(&mut w, &ack(3000));
        assert_eq!(w.cwnd, 6000); // a stretch ACK still adds one SMSS
        c.on_ack(&mut w, &ack(0));
        assert_eq!(w.cwnd, 6000); // duplicates do not grow the window
        w.ssthresh = 6000;
        c.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 6000 + 1000 * 1000 / 6000);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 9000), 4500);
        assert_eq!(c.on_congestion(&w, Congestion::Loss, 3000), 2000); // floor of 2 SMSS
        assert_eq!(c.on_congestion(&w, Congestion::Timeout { repeated: true }, 9000), 6000);
        assert_eq!(c.on_congestion(&w, Congestion::Ecn, 9000), 4500);
        let mut r = ack(1000);
        r.in_recovery = true;
        c.on_ack(&mut w, &r);
        assert_eq!(w.cwnd, 6166); // recovery owns the window
    }

    #[test]
    fn ns2_arithmetic_keeps_cwnd_as_a_real_number() {
        // opencwnd(): +1 per ACK below ssthresh_, whatever the ACK covers; above it
        // +1/cwnd_ with cwnd_ a double: 4 -> 4.25 -> 4.485294 -> 4.708245 -> 4.920638
        // -> 5.123864 (the window, its integer part, reaches 5 on the fifth ACK).
        let mut c = NewReno::default();
        let mut w = Window { cwnd: 2000, ssthresh: 4000, mss: 1000 };
        let ns2 = |bytes| Ack { ns2_arithmetic: true, ..ack(bytes) };
        c.on_ack(&mut w, &ns2(3000));
        assert_eq!(w.cwnd, 3000);
        c.on_ack(&mut w, &ns2(500));
        assert_eq!(w.cwnd, 4000);
        let mut seen = Vec::new();
        for _ in 0..5 {
            c.on_ack(&mut w, &ns2(1000));
            seen.push(w.cwnd / 1000);
        }
        assert_eq!(seen, vec![4, 4, 4, 4, 5]);
        assert!((c.segments(&w) - 5.123_864).abs() < 1e-6, "{}", c.segments(&w));
        // The machinery sets the window exactly (ns-2's halfwin) and growth goes on
        // from the exact value; a window set in bytes is taken as it is.
        c.set_segments(&mut w, 2.561_933);
        assert_eq!(w.cwnd, 2561);
        assert!((c.segments(&w) - 2.561_933).abs() < 1e-12);
        w.cwnd = 7000;
        assert_eq!(c.segments(&w), 7.0);
    }

    #[test]
    fn byte_counting() {
        // RFC 3465 with L = 2: a stretch ACK of 3 segments adds 2 in slow start.
        let mut c = NewReno::default();
        let mut w = Window { cwnd: 4000, ssthresh: u64::MAX, mss: 1000 };
        let abc = |bytes| Ack { byte_counting: 2, ..ack(bytes) };
        c.on_ack(&mut w, &abc(3000));
        assert_eq!(w.cwnd, 6000);
        c.on_ack(&mut w, &abc(500));
        assert_eq!(w.cwnd, 6500); // a partial segment counts its bytes
        // Congestion avoidance: one SMSS once a whole cwnd of bytes is acknowledged.
        w.ssthresh = 6500;
        for _ in 0..6 {
            c.on_ack(&mut w, &abc(1000));
        }
        assert_eq!(w.cwnd, 6500);
        c.on_ack(&mut w, &abc(1000));
        assert_eq!(w.cwnd, 7500); // 7000 >= 6500: +1 SMSS, 500 carried over
        for _ in 0..7 {
            c.on_ack(&mut w, &abc(1000));
        }
        assert_eq!(w.cwnd, 8500); // 500 + 7000 >= 7500
        // After a timeout, slow start counts at most one segment per ACK.
        w.ssthresh = c.on_congestion(&w, Congestion::Timeout { repeated: false }, 8500);
        w.cwnd = 1000;
        c.on_ack(&mut w, &abc(3000));
        assert_eq!((w.ssthresh, w.cwnd), (4250, 2000));
        // Without a limit (L = u32::MAX, Linux), every byte counts.
        let mut d = NewReno::default();
        let mut v = Window { cwnd: 4000, ssthresh: u64::MAX, mss: 1000 };
        d.on_ack(&mut v, &Ack { byte_counting: u32::MAX, ..ack(9000) });
        assert_eq!(v.cwnd, 13000);
    }
}
