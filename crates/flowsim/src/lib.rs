//! Flow-level simulator of the Markov / processor-sharing models of the background-transfer papers.
