"""A Linux testbed for background transfers: a tbf bottleneck between network
namespaces, Poisson interactive downloads timed by completion, and the background
transfer manager (``cclab bg fetch``) under each policy; ``cclab testbed run`` sets the
measurement beside the simulator's prediction of the same scenario (docs/testbed.md)."""
