//! What a controller measures over one update period.

/// Integrals and counts since the last update.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Window {
    /// Seconds covered.
    pub span: f64,
    /// ∫ waiting chunks dt (chunk-seconds).
    pub waiting_area: f64,
    /// ∫ active chunks dt (chunk-seconds).
    pub active_area: f64,
    /// Bytes of the chunks that arrived.
    pub arrived_bytes: f64,
    /// Chunks that arrived.
    pub arrivals: u64,
    /// The most chunks held (active and waiting) at any time of the period.
    pub held_peak: u64,
}

impl Window {
    /// Let `dt` seconds pass with `active` and `waiting` chunks.
    #[inline]
    pub fn advance(&mut self, dt: f64, active: u32, waiting: usize) {
        self.span += dt;
        self.waiting_area += waiting as f64 * dt;
        self.active_area += active as f64 * dt;
        self.held_peak = self.held_peak.max(active as u64 + waiting as u64);
    }
}
