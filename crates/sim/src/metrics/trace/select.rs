//! Which flows are traced: the selectors of `[trace] flows`, applied to each flow
//! as it arrives, and the set of flows they chose.
use super::FlowSelector;

/// The selectors during a run, with how many flows each has taken.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    selectors: Vec<FlowSelector>,
    taken: Vec<u64>,
    /// One bit per flow id: traced or not.
    traced: Vec<u64>,
    count: u64,
}

impl Selection {
    pub fn new(selectors: &[FlowSelector]) -> Self {
        Selection { selectors: selectors.to_vec(), taken: vec![0; selectors.len()], traced: Vec::new(), count: 0 }
    }

    /// A flow arrives (ids in increasing order): trace it if a selector matches.
    /// `size` is u64::MAX for a flow that never ends.
    pub fn arrive(&mut self, flow: u32, class: u32, size: u64) -> bool {
        let mut chosen = false;
        for (s, taken) in self.selectors.iter().zip(self.taken.iter_mut()) {
            let finite = size != u64::MAX;
            let matches = s.class.is_none_or(|c| c == class)
                && s.ids.as_ref().is_none_or(|ids| ids.contains(&flow))
                && s.min_bytes.is_none_or(|lo| finite && size >= lo)
                && s.max_bytes.is_none_or(|hi| finite && size <= hi)
                && s.first.is_none_or(|n| *taken < n);
            if matches {
                // Each selector counts the flows it matched, whether or not another took them too.
                *taken += 1;
                chosen = true;
            }
        }
        if chosen {
            let word = flow as usize / 64;
            if self.traced.len() <= word {
                self.traced.resize(word + 1, 0);
            }
            self.traced[word] |= 1 << (flow % 64);
            self.count += 1;
        }
        chosen
    }

    /// Whether flow `flow` is traced.
    #[inline]
    pub fn traced(&self, flow: u32) -> bool {
        self.traced.get(flow as usize / 64).is_some_and(|w| w & (1 << (flow % 64)) != 0)
    }

    /// Flows traced so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_combine_their_conditions_and_count_their_own_flows() {
        let sel = [
            FlowSelector { class: Some(1), first: Some(2), ..Default::default() },
            FlowSelector { ids: Some(vec![0, 9]), ..Default::default() },
            FlowSelector { class: Some(0), min_bytes: Some(1000), max_bytes: Some(2000), ..Default::default() },
        ];
        let mut s = Selection::new(&sel);
        // (id, class, size): expected
        let flows = [(0, 0, 50, true), (1, 1, 10, true), (2, 0, 1500, true), (3, 1, 10, true), (4, 1, 10, false), (5, 0, 2001, false), (6, 0, u64::MAX, false), (9, 1, 10, true), (70, 0, 1000, true)];
        for (id, class, size, want) in flows {
            assert_eq!(s.arrive(id, class, size), want, "flow {id}");
        }
        assert!(s.traced(70) && s.traced(9) && !s.traced(4) && !s.traced(1000));
        assert_eq!(s.count(), 6);
        // Without bounds a flow that never ends matches.
        let mut all = Selection::new(&[FlowSelector::default()]);
        assert!(all.arrive(0, 3, u64::MAX));
    }
}
