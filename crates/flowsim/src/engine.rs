//! The event-driven simulation of one replication.
//!
//! State: the set of flows present in each class. Between events every flow of a
//! class receives the same rate (processor sharing within a class), so each class keeps
//! one *virtual time* V (service received so far by any of its active flows) and a
//! min-heap of finish tags V_activation + size: the next departure of a class is
//! t + (min tag − V)/per-flow rate. This holds for any size distribution, so Pareto
//! sizes cost the same as exponential ones. Events are arrivals, departures and the
//! periodic updates of adaptive controllers; rates are recomputed after each event.

use crate::alloc::MaxMin;
use crate::model::{ClassKind, Policy, Scenario, SizeDist, Source};
use cclab_control::AccessController;
use cclab_rng::Xoshiro256pp as Rng;

/// The random stream of class `class` in replication `rep` (cclab's one
/// derivation, `cclab_rng::stream`): adding a class or a replication leaves the
/// others' draws intact.
pub fn replication_stream(seed: u64, rep: u64, class: u64) -> Rng {
    cclab_rng::stream(seed, cclab_rng::StreamKey::new("flowsim/rep").num(rep).part("class").num(class))
}

#[derive(Clone, Copy, Debug)]
struct Job {
    tag: f64,
    arr: f64,
}

/// Binary min-heap of jobs ordered by finish tag.
#[derive(Default, Debug)]
struct TagHeap {
    v: Vec<Job>,
}

impl TagHeap {
    #[inline]
    fn len(&self) -> usize {
        self.v.len()
    }
    #[inline]
    fn min_tag(&self) -> f64 {
        self.v[0].tag
    }
    fn push(&mut self, j: Job) {
        self.v.push(j);
        let mut i = self.v.len() - 1;
        while i > 0 {
            let p = (i - 1) / 2;
            if self.v[p].tag <= j.tag {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = j;
    }
    fn pop(&mut self) -> Job {
        let top = self.v[0];
        let last = self.v.pop().unwrap();
        let n = self.v.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let c = if r < n && self.v[r].tag < self.v[l].tag {
                    r
                } else {
                    l
                };
                if self.v[c].tag >= last.tag {
                    break;
                }
                self.v[i] = self.v[c];
                i = c;
            }
            self.v[i] = last;
        }
        top
    }
}

#[inline]
fn draw(rng: &mut Rng, s: &SizeDist) -> f64 {
    match *s {
        SizeDist::Exp { mean } => rng.exponential(mean),
        // Inverse transform: X = x_m U^{-1/α}, x_m = mean (α−1)/α.
        SizeDist::Pareto { mean, shape } => {
            mean * (shape - 1.0) / shape * rng.uniform_pos().powf(-1.0 / shape)
        }
    }
}

/// Statistics of one replication, one entry per class (NaN where meaningless).
#[derive(Debug, Clone, Default)]
pub struct RepStats {
    /// Time-average number of flows present (waiting + active).
    pub mean_number: Vec<f64>,
    /// Time-average number of active (transmitting) flows.
    pub mean_active: Vec<f64>,
    /// Mean sojourn time (waiting + transfer) of flows departing in the window.
    pub mean_delay: Vec<f64>,
    /// Mean aggregate rate received by the class.
    pub throughput: Vec<f64>,
    /// Flows departed in the window.
    pub departures: Vec<f64>,
    /// Flows arrived in the window.
    pub arrivals: Vec<f64>,
    /// Time-average limit M of access-control classes.
    pub mean_limit: Vec<f64>,
    /// Standard deviation over time of the limit M of access-control classes.
    pub sd_limit: Vec<f64>,
    /// Arrivals and departures over the whole run (warm-up included).
    pub events: u64,
    /// Controller updates over the whole run.
    pub ticks: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Short,
    Long,
    BgSaturated,
    BgStream,
}

struct ClassState {
    role: Role,
    policy: Option<Policy>,
    rate: f64,
    size: SizeDist,
    long_count: u32,
    rng: Rng,
    heap: TagHeap,
    /// The access controller of an access-control class; its chunks are (arrival, size).
    access: Option<AccessController<(f64, f64)>>,
    v: f64,
    next_arrival: f64,
    // allocation outputs
    weight: f64,
    low: bool,
    agg: f64,
    per_flow: f64,
    /// Data served since time 0 (what rate tracking measures).
    delivered: f64,
    // window statistics
    area_n: f64,
    area_active: f64,
    served: f64,
    delay_sum: f64,
    departures: u64,
    arrivals: u64,
}

impl ClassState {
    #[inline]
    fn active(&self) -> usize {
        match self.role {
            Role::Long => self.long_count as usize,
            Role::BgSaturated => 1,
            _ => self.heap.len(),
        }
    }
    #[inline]
    fn present(&self) -> usize {
        self.heap.len() + self.access.as_ref().map_or(0, |a| a.waiting())
    }
    /// Start every chunk the controller admits at `t`.
    fn fill(&mut self, t: f64) {
        if let Some(a) = self.access.as_mut() {
            while let Some((arr, size)) = a.admit(t) {
                self.heap.push(Job {
                    tag: self.v + size,
                    arr,
                });
            }
        }
    }
}

impl ClassState {
    /// Class `i` of the scenario at time 0 of replication `rep`, its first arrival drawn.
    fn new(sc: &Scenario, i: usize, rep: u32) -> ClassState {
        let exp1 = SizeDist::Exp { mean: 1.0 };
        let (role, policy, rate, size, long_count) = match sc.classes[i].kind {
            ClassKind::Short { rate, size } => (Role::Short, None, rate, size, 0),
            ClassKind::Long { count } => (Role::Long, None, 0.0, exp1, count),
            ClassKind::Background {
                source: Source::Saturated,
                policy,
            } => (Role::BgSaturated, Some(policy), 0.0, exp1, 0),
            ClassKind::Background {
                source: Source::Stream { rate, size },
                policy,
            } => (Role::BgStream, Some(policy), rate, size, 0),
        };
        let access = match policy {
            Some(Policy::Access(a)) => {
                Some(AccessController::new(&a, 0.0, sc.warmup).expect("validated"))
            }
            _ => None,
        };
        let mut c = ClassState {
            role,
            policy,
            rate,
            size,
            long_count,
            rng: replication_stream(sc.seed, rep as u64, i as u64),
            heap: TagHeap::default(),
            access,
            v: 0.0,
            next_arrival: f64::INFINITY,
            weight: 0.0,
            low: false,
            agg: 0.0,
            per_flow: 0.0,
            delivered: 0.0,
            area_n: 0.0,
            area_active: 0.0,
            served: 0.0,
            delay_sum: 0.0,
            departures: 0,
            arrivals: 0,
        };
        if matches!(c.role, Role::Short | Role::BgStream) {
            c.next_arrival = c.rng.exponential(1.0 / c.rate);
        }
        c
    }

    /// Serve the class for `dt` at its current rates; `dtm` of that time lies in the
    /// measurement window (its areas grow by that much).
    fn advance(&mut self, dt: f64, dtm: f64) {
        let act = self.active();
        if self.role == Role::Short || self.role == Role::BgStream {
            self.v += self.per_flow * dt;
        }
        self.delivered += self.agg * dt;
        if dtm > 0.0 {
            let present = match self.role {
                Role::Short | Role::BgStream => self.present(),
                Role::Long => self.long_count as usize,
                Role::BgSaturated => 0,
            };
            self.area_n += present as f64 * dtm;
            self.area_active += act as f64 * dtm;
            self.served += self.agg * dtm;
        }
    }

    /// A flow arrives at `t` (counted from `warmup` on): it starts, or waits for its
    /// access controller; the next arrival is drawn.
    fn on_arrival(&mut self, t: f64, warmup: f64) {
        let size = draw(&mut self.rng, &self.size);
        if t >= warmup {
            self.arrivals += 1;
        }
        match self.access.as_mut() {
            Some(a) => {
                a.arrive(t, (t, size), size);
                self.fill(t);
            }
            None => self.heap.push(Job {
                tag: self.v + size,
                arr: t,
            }),
        }
        self.next_arrival = t + self.rng.exponential(1.0 / self.rate);
    }

    /// The flow with the smallest finish tag leaves at `t` (its sojourn counted from
    /// `warmup` on); the access controller may start another.
    fn on_departure(&mut self, t: f64, warmup: f64) {
        let j = self.heap.pop();
        if t >= warmup {
            self.departures += 1;
            self.delay_sum += t - j.arr;
        }
        if let Some(a) = self.access.as_mut() {
            a.complete(t);
            self.fill(t);
        }
    }

    /// The access controller's deadline at `t`: it updates its limit from the data
    /// delivered so far, and may start waiting chunks.
    fn on_tick(&mut self, t: f64) {
        let delivered = self.delivered;
        self.access
            .as_mut()
            .expect("a deadline of a class without a controller")
            .on_deadline(t, delivered);
        self.fill(t);
    }
}

#[derive(Clone, Copy)]
enum Ev {
    Arrival(usize),
    Departure(usize),
    Tick(usize),
}

/// The next event after `t` and its time (infinite: none). Ties go to the first class,
/// and within a class to an arrival, then a departure, then a controller's deadline.
fn next_event(cs: &[ClassState], t: f64) -> (f64, Ev) {
    let mut tn = f64::INFINITY;
    let mut ev = Ev::Tick(usize::MAX);
    for (i, c) in cs.iter().enumerate() {
        if c.next_arrival < tn {
            tn = c.next_arrival;
            ev = Ev::Arrival(i);
        }
        if c.per_flow > 0.0 && c.heap.len() > 0 {
            let td = t + ((c.heap.min_tag() - c.v) / c.per_flow).max(0.0);
            if td < tn {
                tn = td;
                ev = Ev::Departure(i);
            }
        }
        if let Some(a) = &c.access {
            let td = a.next_deadline();
            if td < tn {
                tn = td;
                ev = Ev::Tick(i);
            }
        }
    }
    (tn, ev)
}

/// Run replication `rep` of a validated scenario.
pub fn run_replication(sc: &Scenario, rep: u32) -> RepStats {
    let mut cs: Vec<ClassState> = (0..sc.classes.len())
        .map(|i| ClassState::new(sc, i, rep))
        .collect();
    let explicit = cs
        .iter()
        .position(|c| matches!(c.policy, Some(p) if p.is_explicit()));
    let mut alloc = Alloc::new(sc, sc.capacities.len());
    let warmup = sc.warmup;
    let end = sc.warmup + sc.duration;
    let mut t = 0.0f64;
    let (mut events, mut ticks) = (0u64, 0u64);
    alloc.rates(&sc.capacities, &mut cs, explicit);
    loop {
        let (tn, ev) = next_event(&cs, t);
        let stop = tn > end;
        let t1 = if stop { end } else { tn };
        let dtm = if t1 > warmup { t1 - t.max(warmup) } else { 0.0 };
        for c in cs.iter_mut() {
            c.advance(t1 - t, dtm);
        }
        t = t1;
        if stop {
            break;
        }
        match ev {
            Ev::Arrival(i) => cs[i].on_arrival(t, warmup),
            Ev::Departure(i) => cs[i].on_departure(t, warmup),
            Ev::Tick(i) => cs[i].on_tick(t),
        }
        match ev {
            Ev::Tick(_) => ticks += 1,
            _ => events += 1,
        }
        alloc.rates(&sc.capacities, &mut cs, explicit);
    }
    statistics(&mut cs, sc.duration, end, events, ticks)
}

/// The replication's statistics over a window of length `d` ending at `end`.
fn statistics(cs: &mut [ClassState], d: f64, end: f64, events: u64, ticks: u64) -> RepStats {
    let mut st = RepStats {
        events,
        ticks,
        ..Default::default()
    };
    for c in cs.iter_mut() {
        if let Some(a) = c.access.as_mut() {
            a.advance_to(end);
        }
        let nan_if_sat = |x: f64| {
            if c.role == Role::BgSaturated {
                f64::NAN
            } else {
                x
            }
        };
        st.mean_number.push(nan_if_sat(c.area_n / d));
        st.mean_active.push(nan_if_sat(c.area_active / d));
        st.mean_delay.push(if c.departures > 0 {
            c.delay_sum / c.departures as f64
        } else {
            f64::NAN
        });
        st.throughput.push(c.served / d);
        st.departures.push(c.departures as f64);
        st.arrivals.push(c.arrivals as f64);
        let avg = c.access.as_ref().map(|a| a.averages());
        st.mean_limit.push(avg.map_or(f64::NAN, |a| a.limit));
        st.sd_limit.push(avg.map_or(f64::NAN, |a| a.limit_sd));
    }
    st
}

/// Rate computation with reusable scratch buffers.
struct Alloc {
    single: bool,
    mm: MaxMin,
    routes: Vec<Vec<usize>>,
    w: Vec<f64>,
    r: Vec<f64>,
    resid: Vec<f64>,
}

impl Alloc {
    fn new(sc: &Scenario, nl: usize) -> Alloc {
        Alloc {
            single: nl == 1,
            mm: MaxMin::default(),
            routes: sc.classes.iter().map(|c| c.route.clone()).collect(),
            w: vec![0.0; sc.classes.len()],
            r: vec![0.0; sc.classes.len()],
            resid: vec![0.0; nl],
        }
    }

    /// Set `agg` and `per_flow` of every class from the current state.
    fn rates(&mut self, cap: &[f64], cs: &mut [ClassState], explicit: Option<usize>) {
        if let Some(bi) = explicit {
            Self::explicit_rates(cap[0], cs, bi);
            return;
        }
        let mut wt = 0.0;
        let mut wl = 0.0;
        for c in cs.iter_mut() {
            let act = c.active();
            let (w, low) = match c.role {
                Role::Short => (act as f64, false),
                Role::Long => (c.long_count as f64, false),
                Role::BgSaturated | Role::BgStream => {
                    if act == 0 {
                        (0.0, false)
                    } else {
                        match c.policy.unwrap() {
                            Policy::Wtcp { w } => (w, false),
                            Policy::Vanilla => (act as f64, false),
                            Policy::LowPriority => (act as f64, true),
                            // eq. (26): min(m, M) active TCP flows (whole flows when M
                            // is realised by alternation).
                            Policy::Access(_) => (c.access.as_ref().unwrap().weight(), false),
                            Policy::Threshold { .. } | Policy::Implementable { .. } => {
                                unreachable!()
                            }
                        }
                    }
                }
            };
            c.weight = w;
            c.low = low;
            if low {
                wl += w;
            } else {
                wt += w;
            }
        }
        if self.single {
            let c0 = cap[0];
            let th = if wt > 0.0 { c0 / wt } else { 0.0 };
            let tl = if wt == 0.0 && wl > 0.0 { c0 / wl } else { 0.0 };
            for c in cs.iter_mut() {
                c.agg = c.weight * if c.low { tl } else { th };
            }
        } else {
            for (i, c) in cs.iter().enumerate() {
                self.w[i] = if c.low { 0.0 } else { c.weight };
            }
            self.mm.allocate(cap, &self.routes, &self.w, &mut self.r);
            for (i, c) in cs.iter_mut().enumerate() {
                c.agg = self.r[i];
            }
            if wl > 0.0 {
                self.resid.copy_from_slice(cap);
                for (i, c) in cs.iter().enumerate() {
                    for &l in &self.routes[i] {
                        self.resid[l] -= c.agg;
                    }
                }
                for (i, c) in cs.iter().enumerate() {
                    self.w[i] = if c.low { c.weight } else { 0.0 };
                }
                self.mm
                    .allocate(&self.resid, &self.routes, &self.w, &mut self.r);
                for (i, c) in cs.iter_mut().enumerate() {
                    if c.low {
                        c.agg = self.r[i];
                    }
                }
            }
        }
        for c in cs.iter_mut() {
            let act = c.active();
            c.per_flow = if act > 0 { c.agg / act as f64 } else { 0.0 };
        }
    }

    /// Single-link policies that prescribe the TCP share x_n (eqs. 8, 12, 15).
    fn explicit_rates(cap: f64, cs: &mut [ClassState], bi: usize) {
        let mut n = 0usize;
        let mut k = 0usize;
        for c in cs.iter() {
            match c.role {
                Role::Short => n += c.heap.len(),
                Role::Long => k += c.long_count as usize,
                _ => {}
            }
        }
        let tcp = (n + k) as f64;
        let fair = if n + k > 0 { cap / tcp } else { 0.0 };
        let bg_on = cs[bi].role == Role::BgSaturated || cs[bi].heap.len() > 0;
        let x = if !bg_on {
            // eq. (24): with no micro-flow the TCP flows share the link.
            fair
        } else {
            match cs[bi].policy.unwrap() {
                // eqs. (8), (12): nothing up to n0, x_next at n0+1, fair share beyond.
                Policy::Threshold { n0, x_next } => {
                    let (n, n0) = (n as i64, n0 as i64);
                    if n <= n0 {
                        0.0
                    } else if n == n0 + 1 {
                        x_next.map_or(fair, |x| x.min(fair))
                    } else {
                        fair
                    }
                }
                // eq. (15): x_n = min(x_cap, C/(k+n)).
                Policy::Implementable { x_cap } => x_cap.min(fair),
                _ => unreachable!(),
            }
        };
        for c in cs.iter_mut() {
            let act = c.active();
            c.agg = match c.role {
                Role::Short => act as f64 * x,
                Role::Long => c.long_count as f64 * x,
                _ => {
                    if bg_on {
                        (cap - tcp * x).max(0.0)
                    } else {
                        0.0
                    }
                }
            };
            c.weight = act as f64;
            c.per_flow = if act > 0 { c.agg / act as f64 } else { 0.0 };
        }
    }
}
