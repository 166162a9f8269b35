//! Topology: nodes joined by unidirectional links, shortest paths between them,
//! and the route table the simulator forwards packets by.
use super::link::LinkConfig;
use crate::engine::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The links leaving each node, for path searches.
pub struct Graph<'a> {
    links: &'a [LinkConfig],
    out: Vec<Vec<u32>>,
    /// The first link (lowest index) from a node to a node.
    first_between: HashMap<(u32, u32), u32>,
}

/// Why a list of links is not a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteFault {
    Empty,
    /// Link `at` does not start where link `at - 1` ends.
    Disconnected { at: usize },
    /// Link `at` comes back to a node the route already visited (a loop, or back to the source).
    Revisits { at: usize, node: u32 },
    /// More hops than a packet can count.
    TooLong,
}

/// The most links a route may have (a packet's hop counter is 16 bits).
pub const MAX_HOPS: usize = u16::MAX as usize;

impl<'a> Graph<'a> {
    pub fn new(n_nodes: usize, links: &'a [LinkConfig]) -> Self {
        let mut out = vec![Vec::new(); n_nodes];
        let mut first_between = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            out[l.from as usize].push(i as u32);
            first_between.entry((l.from, l.to)).or_insert(i as u32);
        }
        Graph { links, out, first_between }
    }

    /// Check that `route` (link indices) is a path that visits no node twice.
    pub fn check_route(&self, route: &[u32]) -> Result<(), RouteFault> {
        if route.is_empty() {
            return Err(RouteFault::Empty);
        }
        if route.len() > MAX_HOPS {
            return Err(RouteFault::TooLong);
        }
        let mut seen = std::collections::HashSet::with_capacity(route.len() + 1);
        seen.insert(self.links[route[0] as usize].from);
        for (j, &l) in route.iter().enumerate() {
            let link = &self.links[l as usize];
            if j > 0 && self.links[route[j - 1] as usize].to != link.from {
                return Err(RouteFault::Disconnected { at: j });
            }
            if !seen.insert(link.to) {
                return Err(RouteFault::Revisits { at: j, node: link.to });
            }
        }
        Ok(())
    }

    /// Shortest path by hop count, ties broken by total propagation delay and then by
    /// the lower node and link indices (Dijkstra over the key (hops, delay)): deterministic.
    pub fn shortest_path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let n = self.out.len();
        let mut best: Vec<Option<(u64, SimTime)>> = vec![None; n];
        let mut via: Vec<u32> = vec![u32::MAX; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        best[src as usize] = Some((0, SimTime::ZERO));
        heap.push(Reverse(((0u64, SimTime::ZERO), src)));
        while let Some(Reverse((key, u))) = heap.pop() {
            if done[u as usize] || best[u as usize] != Some(key) {
                continue;
            }
            if u == dst {
                break;
            }
            done[u as usize] = true;
            for &li in &self.out[u as usize] {
                let l = &self.links[li as usize];
                if done[l.to as usize] {
                    continue;
                }
                let k = (key.0 + 1, key.1 + l.delay);
                if best[l.to as usize].is_none_or(|b| k < b) {
                    best[l.to as usize] = Some(k);
                    via[l.to as usize] = li;
                    heap.push(Reverse((k, l.to)));
                }
            }
        }
        best[dst as usize]?;
        let mut path = Vec::new();
        let mut v = dst;
        while v != src {
            let l = via[v as usize];
            path.push(l);
            v = self.links[l as usize].from;
        }
        path.reverse();
        Some(path)
    }

    /// The path back along `route` when every hop has a link back: each hop's
    /// duplex partner (listed right after or before it), else the first link
    /// between the same nodes the other way.
    pub fn retrace(&self, route: &[u32]) -> Option<Vec<u32>> {
        route
            .iter()
            .rev()
            .map(|&l| {
                let (a, b) = (self.links[l as usize].from, self.links[l as usize].to);
                [l as usize + 1, (l as usize).wrapping_sub(1)]
                    .into_iter()
                    .find(|&k| k < self.links.len() && self.links[k].from == b && self.links[k].to == a)
                    .map(|k| k as u32)
                    .or_else(|| self.first_between.get(&(b, a)).copied())
            })
            .collect()
    }
}

/// Every route of a run, flattened: route `r` is `hops[start[r]..start[r + 1]]`.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    hops: Vec<u32>,
    start: Vec<u32>,
}

impl Routes {
    pub fn new() -> Self {
        Routes { hops: Vec::new(), start: vec![0] }
    }
    /// Add a route; returns its id.
    pub fn add(&mut self, links: &[u32]) -> u32 {
        self.hops.extend_from_slice(links);
        self.start.push(self.hops.len() as u32);
        (self.start.len() - 2) as u32
    }
    /// Link number `hop` of route `r`, or None past its end.
    #[inline]
    pub fn link(&self, r: u32, hop: u16) -> Option<u32> {
        let (s, e) = (self.start[r as usize], self.start[r as usize + 1]);
        let i = s + hop as u32;
        (i < e).then(|| self.hops[i as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::Queue;

    fn l(from: u32, to: u32, delay_ms: u64) -> LinkConfig {
        LinkConfig { name: format!("{from}->{to}"), from, to, rate_bps: 1, delay: SimTime::from_millis(delay_ms), queue: Queue::default() }
    }

    #[test]
    fn shortest_by_hops_then_delay_then_index() {
        // 0 -> 1 -> 3 (10 + 10 ms), 0 -> 2 -> 3 (5 + 5 ms), 0 -> 3 via 4 -> 3 is longer.
        let links = vec![l(0, 1, 10), l(1, 3, 10), l(0, 2, 5), l(2, 3, 5), l(0, 4, 1), l(4, 5, 1), l(5, 3, 1)];
        let g = Graph::new(6, &links);
        assert_eq!(g.shortest_path(0, 3), Some(vec![2, 3]));
        assert_eq!(g.shortest_path(3, 0), None);
        // Equal hops and delay: the lower link index wins.
        let links = vec![l(0, 1, 5), l(1, 3, 5), l(0, 2, 5), l(2, 3, 5)];
        assert_eq!(Graph::new(4, &links).shortest_path(0, 3), Some(vec![0, 1]));
    }

    #[test]
    fn routes_must_connect_and_never_revisit_a_node() {
        let links = vec![l(0, 1, 1), l(1, 0, 1), l(1, 2, 1), l(2, 0, 1), l(0, 2, 1)];
        let g = Graph::new(3, &links);
        assert_eq!(g.check_route(&[0, 2]), Ok(()));
        assert_eq!(g.check_route(&[]), Err(RouteFault::Empty));
        assert_eq!(g.check_route(&[0, 4]), Err(RouteFault::Disconnected { at: 1 }));
        // Back to the source over one-way links: 0 -> 1 -> 2 -> 0.
        assert_eq!(g.check_route(&[0, 2, 3]), Err(RouteFault::Revisits { at: 2, node: 0 }));
        // A loop in the middle: 0 -> 1 -> 0 -> 2.
        assert_eq!(g.check_route(&[0, 1, 4]), Err(RouteFault::Revisits { at: 1, node: 0 }));
        // Retracing needs a link back for every hop.
        assert_eq!(g.retrace(&[0]), Some(vec![1]));
        assert_eq!(g.retrace(&[0, 2]), None);
    }

    #[test]
    fn long_chains_are_fast_and_exact() {
        // 70,000 links in a chain: one search, and the route table addresses every hop.
        let links: Vec<_> = (0..70_000).map(|i| l(i, i + 1, 1)).collect();
        let g = Graph::new(70_001, &links);
        let p = g.shortest_path(0, 70_000).unwrap();
        assert_eq!(p.len(), 70_000);
        assert_eq!(g.check_route(&p), Err(RouteFault::TooLong));
        let mut r = Routes::new();
        let a = r.add(&[3, 4]);
        let b = r.add(&p[..MAX_HOPS]);
        assert_eq!((r.link(a, 1), r.link(a, 2)), (Some(4), None));
        assert_eq!(r.link(b, (MAX_HOPS - 1) as u16), Some((MAX_HOPS - 1) as u32));
    }
}
