//! The receiving side of a connection: in-order delivery, the out-of-order
//! segments, and when to acknowledge (RFC 5681 §4.2, RFC 7323 echo rules,
//! RFC 3168 ECN-Echo, RFC 2018 SACK blocks).
use super::{Output, TcpParams, Tcp};
use crate::engine::SimTime;
use crate::net::packet::{ACK, CE, CWR, ECE, RETX, SYN};
use crate::net::Packet;

impl Tcp {
    fn send_ack(&mut self, p: &TcpParams, out: &mut Output) {
        let mut flags = ACK | if self.echo_retx { RETX } else { 0 };
        if self.ece_pending {
            flags |= ECE;
        }
        let mut ack = self.control(self.ep.ack_route, self.rcv_nxt, self.echo_ts, flags, p);
        ack.owd = self.last_owd.0.min(u32::MAX as u64) as u32;
        ack.ce = self.ce_count;
        if let Some(sack) = self.sack.as_deref_mut() {
            // RFC 2018 §4: as many blocks as the option space holds, the latest first.
            if let Some((id, bytes)) = sack.record(p.max_sack_blocks(), p.rules.sack_option) {
                ack.sack = id;
                ack.size += bytes;
            }
        }
        out.push(ack);
        self.unacked = 0;
        self.echo_pending = false;
        self.delack_timer.stop();
    }

    /// A SYN reaches the receiver: answer with a SYN-ACK (header only, on the ACK
    /// route) echoing its send time and retransmission flag, as ACKs echo a
    /// segment's. Every copy of a resent SYN is answered.
    pub fn on_syn(&mut self, pkt: &Packet, p: &TcpParams, out: &mut Output) {
        out.push(self.control(self.ep.ack_route, 0, pkt.ts, SYN | ACK | (pkt.flags & RETX), p));
    }

    /// A data segment reaches the receiver; returns the bytes newly delivered in order.
    pub fn on_data(&mut self, pkt: &Packet, now: SimTime, p: &TcpParams, out: &mut Output) -> u64 {
        let (s, e) = (pkt.seq, pkt.seq + pkt.len as u64);
        let before = self.rcv_nxt;
        let mut immediate = !p.delayed_ack;
        self.last_owd = now - pkt.ts;
        // RFC 3168 §6.1.3: echo CE on every ACK until a segment with CWR arrives.
        if pkt.flags & CWR != 0 {
            self.ece_pending = false;
        }
        if pkt.flags & CE != 0 {
            self.ece_pending = true;
            // AccECN's r.cep (RFC 9768 §3.2.1), in packets, modulo 256.
            self.ce_count = self.ce_count.wrapping_add(1);
            immediate = true;
        }
        if s <= before && !self.echo_pending {
            // Echo the send time of the earliest unacknowledged in-order segment (RFC 7323 §4.3).
            self.echo_ts = pkt.ts;
            self.echo_retx = pkt.flags & RETX != 0;
            self.echo_pending = true;
        }
        if e <= before {
            immediate = true; // duplicate: acknowledge at once (RFC 5681 §4.2)
        } else if s <= before {
            self.rcv_nxt = e;
            if !self.ooo.is_empty() {
                immediate = true; // fills (part of) a hole
                self.rcv_nxt = self.ooo.advance(self.rcv_nxt);
                if let Some(sack) = self.sack.as_deref_mut() {
                    sack.blocks.discard_below(self.rcv_nxt);
                }
            }
            self.unacked += 1;
        } else {
            immediate = true; // out of order: duplicate ACK at once
            let range = self.ooo.insert(s, e);
            if let Some(sack) = self.sack.as_deref_mut() {
                sack.touch(range, p.sack_memory());
            }
        }
        if immediate || self.unacked >= 2 || self.receiver_done() {
            self.send_ack(p, out);
        } else if !self.delack_timer.is_set() {
            self.delack_timer.set(now + p.delayed_ack_timeout);
        }
        self.rcv_nxt - before
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, p: &TcpParams, out: &mut Output) {
        self.delack_timer.stop();
        if self.unacked > 0 {
            self.send_ack(p, out);
        }
    }
}
