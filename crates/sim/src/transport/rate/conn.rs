//! A rate flow's connection: both endpoints in one value, as a TCP connection
//! is. The sending end is the paced [`RateSender`]; protocols with feedback add
//! a receiving end (a [`Receiver`]) with its own timer, and a log through which
//! its reports reach the sender (`feedback.rs`).
use super::feedback::{FeedbackReceiver, Report, ReportLog, FEEDBACK_BYTES};
use super::{RateSender, Receiver};
use crate::engine::{SimTime, Timer};
use crate::net::packet::{ACK, DATAGRAM};
use crate::net::Packet;

/// One rate flow: its sender and, with feedback, its receiver.
#[derive(Clone, Debug)]
pub struct RateConn {
    pub tx: RateSender,
    /// The receiving end (None: no feedback, as CBR).
    rx: Option<Box<Receiver>>,
    /// The receiver's own deadline (its feedback timer).
    pub rx_timer: Timer,
    /// Reports sent by the receiver and not yet read by the sender.
    log: ReportLog,
}

impl RateConn {
    pub fn new(tx: RateSender, rx: Option<Receiver>) -> Self {
        RateConn { tx, rx: rx.map(Box::new), rx_timer: Timer::default(), log: ReportLog::default() }
    }

    /// The flow this connection carries.
    #[inline]
    pub fn flow(&self) -> u32 {
        self.tx.ep.flow
    }

    /// The receiving end (None: the protocol has no feedback).
    pub fn receiver(&self) -> Option<&Receiver> {
        self.rx.as_deref()
    }

    /// A datagram reached the receiver at `now`: the feedback packet to send, if any.
    pub fn on_data(&mut self, now: SimTime, pkt: &Packet) -> Option<Packet> {
        let rx = self.rx.as_mut()?;
        let report = rx.on_data(now, pkt);
        self.sync_rx_timer();
        report.map(|r| self.feedback(r))
    }

    /// The receiver's deadline has come: the feedback packet to send, if any.
    pub fn on_rx_deadline(&mut self, now: SimTime) -> Option<Packet> {
        let rx = self.rx.as_mut()?;
        let report = rx.on_deadline(now);
        self.sync_rx_timer();
        report.map(|r| self.feedback(r))
    }

    /// A feedback packet reached the sender at `now`.
    pub fn on_feedback(&mut self, now: SimTime, pkt: &Packet) {
        if let Some(r) = self.log.take(pkt.sack) {
            self.tx.on_feedback(now, &r);
        }
    }

    fn sync_rx_timer(&mut self) {
        match self.rx.as_ref().and_then(|rx| rx.deadline()) {
            Some(t) => self.rx_timer.set(t),
            None => self.rx_timer.stop(),
        }
    }

    /// The header-only packet that carries report `r` to the sender.
    fn feedback(&mut self, r: Report) -> Packet {
        let ep = &self.tx.ep;
        Packet {
            seq: 0,
            ts: r.echo,
            owd: 0,
            sack: self.log.push(r),
            flow: ep.flow,
            conn: ep.conn,
            len: 0,
            size: FEEDBACK_BYTES,
            route: ep.ack_route,
            hop: 0,
            flags: ACK | DATAGRAM,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_rate_flow_is_no_larger_than_a_tcp_connection() {
        // The receiver is boxed, so that every slot of the connection table stays the
        // size of a TCP connection.
        use std::mem::size_of;
        assert!(size_of::<super::RateConn>() <= size_of::<crate::transport::tcp::Tcp>());
    }
}
