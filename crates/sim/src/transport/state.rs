//! A controller's own variables as a trace records them: a few named values,
//! each name with its unit (`ledbat.queuing_delay_s`), filled by the
//! controller's `observe` method only when its flow is traced.

/// The most variables one controller reports.
pub const MAX_VARS: usize = 8;

/// Named values a controller reports about its state, in the order it puts them.
#[derive(Clone, Copy, Debug)]
pub struct StateVars {
    len: usize,
    vars: [(&'static str, f64); MAX_VARS],
}

impl Default for StateVars {
    fn default() -> Self {
        StateVars { len: 0, vars: [("", 0.0); MAX_VARS] }
    }
}

impl StateVars {
    /// Report `value` under `name` (`protocol.quantity_unit`). NaN means "not
    /// known yet" and is left out; more than [`MAX_VARS`] values is a programming
    /// error of the controller.
    #[inline]
    pub fn put(&mut self, name: &'static str, value: f64) {
        assert!(self.len < MAX_VARS, "a controller reports at most {MAX_VARS} variables ({name})");
        if !value.is_nan() {
            self.vars[self.len] = (name, value);
            self.len += 1;
        }
    }

    /// A time in nanoseconds, reported in seconds (None: not known yet).
    #[inline]
    pub fn put_ns(&mut self, name: &'static str, ns: Option<f64>) {
        self.put(name, ns.map_or(f64::NAN, |x| x * 1e-9));
    }

    /// The values reported, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.vars[..self.len].iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget every value (the next flow's report starts empty).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_known_values_in_order() {
        let mut v = StateVars::default();
        v.put("a_s", 1.5);
        v.put("b", f64::NAN);
        v.put_ns("c_s", Some(2e9));
        v.put_ns("d_s", None);
        assert_eq!(v.iter().collect::<Vec<_>>(), vec![("a_s", 1.5), ("c_s", 2.0)]);
        v.clear();
        assert!(v.is_empty());
    }
}
