//! The long table of traced variables: (time, entity, variable, value) rows,
//! each variable's name carrying its unit.

/// The variables the machinery knows for every flow (codes 0..); a controller's
/// own variables take the codes after these, in the order they first appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Variable {
    Cwnd = 0,
    Ssthresh,
    InFlight,
    Srtt,
    Rttvar,
    Rto,
    RttSample,
    OwdSample,
    Recovery,
    Rate,
    RttEstimate,
}

/// The names of [`Variable`], in code order.
pub const FIXED_VARIABLES: &[&str] = &[
    "cwnd_bytes",
    "ssthresh_bytes",
    "in_flight_bytes",
    "srtt_s",
    "rttvar_s",
    "rto_s",
    "rtt_sample_s",
    "owd_sample_s",
    "recovery",
    "rate_bps",
    "rtt_estimate_s",
];

/// Rows of (time, entity, variable, value), as columns.
#[derive(Clone, Debug, Default)]
pub struct VarTable {
    /// Seconds.
    pub time: Vec<f64>,
    /// Flow id (the flows trace) or class index (the access trace).
    pub entity: Vec<u32>,
    /// Index into `names`.
    pub variable: Vec<u16>,
    pub value: Vec<f64>,
    /// Variable names with their units.
    pub names: Vec<String>,
}

impl VarTable {
    /// An empty table whose first variables are `names`.
    pub fn new(names: &[&str]) -> Self {
        VarTable { names: names.iter().map(|s| s.to_string()).collect(), ..VarTable::default() }
    }

    /// One row.
    #[inline]
    pub fn push(&mut self, time: f64, entity: u32, variable: u16, value: f64) {
        self.time.push(time);
        self.entity.push(entity);
        self.variable.push(variable);
        self.value.push(value);
    }

    /// The code of variable `name`, added if new.
    pub fn code(&mut self, name: &str) -> u16 {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i as u16,
            None => {
                self.names.push(name.to_string());
                (self.names.len() - 1) as u16
            }
        }
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_names_follow_the_codes() {
        assert_eq!(FIXED_VARIABLES.len(), Variable::RttEstimate as usize + 1);
        assert_eq!(FIXED_VARIABLES[Variable::OwdSample as usize], "owd_sample_s");
        let mut t = VarTable::new(FIXED_VARIABLES);
        assert_eq!(t.code("srtt_s"), Variable::Srtt as u16);
        assert_eq!(t.code("ledbat.base_delay_s"), FIXED_VARIABLES.len() as u16);
        assert_eq!(t.code("ledbat.base_delay_s"), FIXED_VARIABLES.len() as u16);
    }
}
