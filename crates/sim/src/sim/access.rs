//! Access control of a class's files at the sender (`access = { policy = ... }`).
//!
//! A file of such a class is a *chunk*: when it arrives it gets its flow id and
//! record (its arrival time, from which its completion time counts), and joins the
//! class's controller (`cclab_control::AccessController`), which decides when it
//! becomes a TCP connection. The loop tells the controller when a chunk arrives,
//! when one finishes (its receiver holds every byte), and calls it at its deadlines
//! (limit updates, and the instants a fractional limit lets one more chunk start),
//! handing it the bytes the class's connections delivered (what rate tracking
//! measures); the controller answers with the chunks to start.
use super::event::{Event, Owner};
use super::Simulation;
use crate::engine::{Firing, SimTime, Timer};
use crate::metrics::series::{ACCESS_ACTIVE, ACCESS_LIMIT, ACCESS_WAITING};
use crate::metrics::{FlowRecord, Scalar};
use cclab_control::{AccessController, AccessParams};

/// A class's controller during a run; its chunks are flow ids.
pub(super) struct AccessRun {
    ctl: AccessController<u32>,
    timer: Timer,
}

impl AccessRun {
    /// A controller whose updates count from the class's `start`, averaged from `warmup`.
    pub(super) fn new(p: &AccessParams, start: SimTime, warmup: SimTime) -> AccessRun {
        let ctl = AccessController::new(p, start.as_secs_f64(), warmup.as_secs_f64()).expect("access parameters were checked");
        AccessRun { ctl, timer: Timer::default() }
    }
}

impl Simulation {
    /// Arm the controllers' first deadlines.
    pub(super) fn access_schedule_initial(&mut self) {
        for ci in 0..self.classes.len() as u32 {
            self.access_arm(ci);
        }
    }

    /// A file of `bytes` arrives in class `ci`, which has access control: it waits.
    pub(super) fn access_arrival(&mut self, ci: u32, bytes: u64) {
        let now = self.net.now;
        let flow = self.records.len() as u32;
        self.records.push(FlowRecord::new(ci, bytes, now));
        if let Some(tr) = self.net.trace.as_deref_mut() {
            tr.arrive(flow, ci, bytes);
        }
        let run = self.classes[ci as usize].access.as_mut().expect("an access-controlled class");
        run.ctl.arrive(now.as_secs_f64(), flow, bytes as f64);
        self.access_admit(ci);
    }

    /// A chunk of class `ci` finished.
    pub(super) fn access_completed(&mut self, ci: u32) {
        let now = self.net.now.as_secs_f64();
        if let Some(run) = self.classes[ci as usize].access.as_mut() {
            run.ctl.complete(now);
            self.access_admit(ci);
        }
    }

    /// The controller's timer of class `ci` fired.
    pub(super) fn access_fired(&mut self, ci: u32) {
        let now = self.net.now;
        let cr = &mut self.classes[ci as usize];
        let delivered = cr.delivered as f64;
        let run = cr.access.as_mut().expect("an access-controlled class");
        match self.net.queue.fire(&mut run.timer, now) {
            Firing::Stale => {}
            Firing::Early => self.access_arm(ci),
            Firing::Due => {
                run.ctl.on_deadline(now.as_secs_f64(), delivered);
                self.access_admit(ci);
            }
        }
    }

    /// Start every chunk the controller of class `ci` lets start now; re-arm its timer.
    fn access_admit(&mut self, ci: u32) {
        let now = self.net.now.as_secs_f64();
        while let Some(flow) = self.classes[ci as usize].access.as_mut().and_then(|r| r.ctl.admit(now)) {
            let bytes = self.records[flow as usize].size;
            self.open_flow(ci, flow, bytes);
        }
        self.access_arm(ci);
    }

    /// Set class `ci`'s timer to its controller's next deadline (a deadline between
    /// two nanoseconds fires at the later one; the controller allows for it).
    fn access_arm(&mut self, ci: u32) {
        let now = self.net.now;
        let Some(run) = self.classes[ci as usize].access.as_mut() else { return };
        if let Some(tr) = self.net.trace.as_deref_mut() {
            tr.access(now, ci, [run.ctl.limit(), run.ctl.active() as f64, run.ctl.waiting() as f64]);
        }
        let next = run.ctl.next_deadline();
        if next.is_finite() {
            run.timer.set(SimTime::from_secs_f64(next).max(now));
            self.net.queue.arm(&mut run.timer, Event::Timer(Owner::Access(ci)));
        } else {
            run.timer.stop();
        }
    }

    /// Sample the limit, active and waiting chunks of every access-controlled class.
    pub(super) fn access_sample(&mut self, t: f64, first_class_entity: u32) {
        for (ci, c) in self.classes.iter().enumerate() {
            if let Some(run) = &c.access {
                let e = first_class_entity + ci as u32;
                self.series.push(t, ACCESS_LIMIT, e, run.ctl.limit());
                self.series.push(t, ACCESS_ACTIVE, e, run.ctl.active() as f64);
                self.series.push(t, ACCESS_WAITING, e, run.ctl.waiting() as f64);
            }
        }
    }

    /// Summary scalars of the access-controlled classes over [warm-up, `end`]: time
    /// averages of the limit (and its standard deviation), active and waiting chunks.
    pub(super) fn access_summary(&mut self, end: SimTime, put: &mut dyn FnMut(String, Scalar)) {
        for (c, cr) in self.cfg.classes.iter().zip(self.classes.iter_mut()) {
            if let Some(run) = cr.access.as_mut() {
                run.ctl.advance_to(end.as_secs_f64());
                let a = run.ctl.averages();
                put(format!("{}.access_mean_limit", c.name), Scalar::Num(a.limit));
                put(format!("{}.access_sd_limit", c.name), Scalar::Num(a.limit_sd));
                put(format!("{}.access_mean_active", c.name), Scalar::Num(a.active));
                put(format!("{}.access_mean_waiting", c.name), Scalar::Num(a.waiting));
                put(format!("{}.access_updates", c.name), Scalar::Int(run.ctl.updates() as i64));
            }
        }
    }
}
