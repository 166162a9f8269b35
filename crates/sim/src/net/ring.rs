//! A FIFO ring buffer with a power-of-two capacity: push at the back, pop at the
//! front, index from the front, each a mask and a copy (a link's wire sees one of
//! each per packet).

/// A growable FIFO of `Copy` values.
#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Ring { buf: vec![T::default(); 16], head: 0, len: 0 }
    }
}

impl<T: Copy + Default> Ring<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    /// The `i`-th value from the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.buf[(self.head + i) & self.mask()])
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = x;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(x)
    }

    #[cold]
    fn grow(&mut self) {
        let mut buf = Vec::with_capacity(2 * self.buf.len());
        buf.extend((0..self.len).map(|i| self.buf[(self.head + i) & self.mask()]));
        buf.resize(2 * self.buf.len(), T::default());
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    #[test]
    fn fifo_order_across_growth_and_wrap() {
        let mut r: Ring<u32> = Ring::default();
        let mut next_in = 0;
        let mut next_out = 0;
        for round in 0..50 {
            for _ in 0..(round * 3 % 37) {
                r.push_back(next_in);
                next_in += 1;
            }
            for _ in 0..(round * 5 % 23) {
                match r.pop_front() {
                    Some(x) => {
                        assert_eq!(x, next_out);
                        next_out += 1;
                    }
                    None => assert_eq!(next_in, next_out),
                }
            }
            assert_eq!(r.len(), (next_in - next_out) as usize);
            assert_eq!(r.front().copied(), (next_in > next_out).then_some(next_out));
            assert_eq!(r.get(r.len()), None);
        }
    }
}
