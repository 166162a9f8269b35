//! The traced flows' variables: what each flow last recorded, and the rows of
//! what changed (or, at an interval, of everything).
use super::vars::{VarTable, Variable, FIXED_VARIABLES};
use crate::engine::SimTime;
use crate::transport::state::{StateVars, MAX_VARS};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The machinery's variables of one record (NaN: none, or not applicable).
pub type Fixed = [f64; FIXED_VARIABLES.len()];

/// What the trace last recorded of one flow.
#[derive(Clone, Debug)]
struct Probe {
    /// The machinery's variables (NaN: never recorded).
    last: Fixed,
    /// The controller's variables, by code.
    own: Vec<(u16, f64)>,
    /// The RTT estimator's sample count at the last look.
    samples: u32,
    /// Samples taken since the last interval's record (interval mode).
    rtt_sample: Option<f64>,
    owd_sample: Option<f64>,
}

/// Flow ids hashed by one multiplication (Fibonacci hashing): the map is looked
/// up on every event of a traced flow, and its keys are no adversary's.
#[derive(Default)]
struct FlowHasher(u64);

impl Hasher for FlowHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The variables of every traced flow.
#[derive(Default)]
pub struct Probes {
    /// Record every change (else only at an interval's records).
    every_change: bool,
    rows: VarTable,
    /// Codes of the controllers' variable names, by the name's address (names are static).
    codes: Vec<(&'static str, u16)>,
    probes: Vec<Probe>,
    index: HashMap<u32, u32, BuildHasherDefault<FlowHasher>>,
}

impl Probes {
    pub fn new(every_change: bool) -> Self {
        Probes { every_change, rows: VarTable::new(FIXED_VARIABLES), ..Probes::default() }
    }

    /// The index of `flow`'s probe (made on its first record).
    #[inline]
    fn probe(&mut self, flow: u32) -> usize {
        let n = self.probes.len() as u32;
        let i = *self.index.entry(flow).or_insert(n);
        if i == n {
            self.probes.push(Probe { last: [f64::NAN; FIXED_VARIABLES.len()], own: Vec::new(), samples: 0, rtt_sample: None, owd_sample: None });
        }
        i as usize
    }

    /// The code of a controller's variable.
    fn code(&mut self, name: &'static str) -> u16 {
        if let Some(&(_, c)) = self.codes.iter().find(|(n, _)| std::ptr::eq(*n, name)) {
            return c;
        }
        let c = self.rows.code(name);
        self.codes.push((name, c));
        c
    }

    /// A one-way delay sample `owd` (seconds) of flow `flow` at `now`.
    #[inline]
    pub fn owd(&mut self, now: SimTime, flow: u32, owd: f64) {
        if self.every_change {
            self.rows.push(now.as_secs_f64(), flow, Variable::OwdSample as u16, owd);
        } else {
            let i = self.probe(flow);
            self.probes[i].owd_sample = Some(owd);
        }
    }

    /// Flow `flow`'s variables now: the machinery's `v`, the RTT estimator's
    /// latest sample (seconds) and sample count, and the controller's `vars`.
    /// Rows for those that changed, or with `all` (an interval's record) for every
    /// one; in interval mode only such records write rows, the samples wait.
    pub fn record(&mut self, now: SimTime, flow: u32, v: &Fixed, rtt: (f64, u32), vars: &StateVars, all: bool) {
        let mut codes = [0u16; MAX_VARS];
        for (c, (name, _)) in codes.iter_mut().zip(vars.iter()) {
            *c = self.code(name);
        }
        let every_change = self.every_change;
        let t = now.as_secs_f64();
        let i = self.probe(flow);
        let Probes { rows, probes, .. } = self;
        let probe = &mut probes[i];
        let fresh = (probe.samples != rtt.1).then_some(rtt.0);
        probe.samples = rtt.1;
        if !every_change && !all {
            probe.rtt_sample = fresh.or(probe.rtt_sample);
            return;
        }
        let mut row = |variable: u16, value: f64| rows.push(t, flow, variable, value);
        for (i, &x) in v.iter().enumerate() {
            if !x.is_nan() && (all || x.to_bits() != probe.last[i].to_bits()) {
                row(i as u16, x);
                probe.last[i] = x;
            }
        }
        let (rtt_sample, owd) = if every_change { (fresh, None) } else { (fresh.or(probe.rtt_sample.take()), probe.owd_sample.take()) };
        for (var, sample) in [(Variable::RttSample, rtt_sample), (Variable::OwdSample, owd)] {
            if let Some(x) = sample {
                row(var as u16, x);
            }
        }
        for ((_, x), &code) in vars.iter().zip(&codes) {
            let last = match probe.own.iter().position(|(c, _)| *c == code) {
                Some(k) => &mut probe.own[k].1,
                None => {
                    probe.own.push((code, f64::NAN));
                    &mut probe.own.last_mut().expect("just pushed").1
                }
            };
            if all || x.to_bits() != last.to_bits() {
                row(code, x);
                *last = x;
            }
        }
    }

    /// The flows trace.
    pub fn finish(self) -> VarTable {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_what_changed_and_every_sample() {
        let mut p = Probes::new(true);
        let mut v = [f64::NAN; FIXED_VARIABLES.len()];
        v[Variable::Cwnd as usize] = 10.0;
        v[Variable::Rto as usize] = 1.0;
        let mut vars = StateVars::default();
        vars.put("x.delay_s", 0.5);
        p.record(SimTime(1), 4, &v, (0.0, 0), &vars, false);
        v[Variable::Cwnd as usize] = 11.0;
        p.owd(SimTime(2), 4, 0.02);
        p.record(SimTime(2), 4, &v, (0.04, 1), &vars, false);
        let t = p.finish();
        let rows: Vec<(u64, &str, f64)> = (0..t.len()).map(|i| ((t.time[i] * 1e9).round() as u64, t.names[t.variable[i] as usize].as_str(), t.value[i])).collect();
        assert_eq!(rows, vec![(1, "cwnd_bytes", 10.0), (1, "rto_s", 1.0), (1, "x.delay_s", 0.5), (2, "owd_sample_s", 0.02), (2, "cwnd_bytes", 11.0), (2, "rtt_sample_s", 0.04)]);
    }

    #[test]
    fn at_an_interval_every_variable_and_the_latest_samples() {
        let mut p = Probes::new(false);
        let mut v = [f64::NAN; FIXED_VARIABLES.len()];
        v[Variable::Cwnd as usize] = 10.0;
        let none = StateVars::default();
        p.record(SimTime(1), 1, &v, (0.03, 1), &none, false);
        p.owd(SimTime(1), 1, 0.01);
        assert!(p.rows.is_empty());
        p.record(SimTime(5), 1, &v, (0.03, 1), &none, true);
        p.record(SimTime(9), 1, &v, (0.03, 1), &none, true);
        let t = p.finish();
        let rows: Vec<(u64, &str)> = (0..t.len()).map(|i| ((t.time[i] * 1e9).round() as u64, t.names[t.variable[i] as usize].as_str())).collect();
        assert_eq!(rows, vec![(5, "cwnd_bytes"), (5, "rtt_sample_s"), (5, "owd_sample_s"), (9, "cwnd_bytes")]);
    }
}
