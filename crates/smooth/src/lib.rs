//! Exact steady-state queue and loss of N ideally smooth senders at a FIFO link (lower-bounds paper, sections V-VI).
