"""What every solver kernel shares: the jit decorator, the node kinds, the end of the interior.

``jit`` compiles with numba (``cache=True``, so a process loads the machine
code from disk; ``nogil=True``, so kernels run in parallel threads) and falls
back to the plain Python function when numba is missing.
"""

from __future__ import annotations

import numpy as np

try:  # pragma: no cover - exercised implicitly
    import numba

    HAVE_NUMBA = True

    def jit(fn):
        """Compiles ``fn`` as a cached, GIL-free numba kernel."""
        return numba.njit(cache=True, nogil=True)(fn)

except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

    def jit(fn):
        """Without numba a kernel is its (very slow) plain Python function."""
        return fn


#: Cast for array indices in the hot loops. numba gives every signed index a
#: wrap-around check (a negative index counts from the end); an unsigned one
#: has none, which makes the CFR backward pass faster. Mixing uint64
#: with int64 in arithmetic gives float64, so a loop casts its indices once
#: and keeps them unsigned; ``-1`` sentinels are tested before the cast.
U = np.uint64

#: Node kinds of ``GameTree.kind``.
TERMINAL = 0
CHANCE = 1
DECISION = 2


@jit
def internal_end(kind, parent):
    """One past the last non-terminal node: every node at or after it is a terminal.

    Breadth-first trees of chat games end with their (many) leaves, so the
    passes stop here instead of visiting them. Children are contiguous and in
    their parents' order, and every non-terminal node has children (the
    canonical construction rejects one without), so the last node's parent
    is the last non-terminal node: O(1), not a scan over the trailing leaves
    (it is called three times per step).
    """
    n = kind.shape[0]
    if n <= 1:
        return n
    return parent[n - 1] + 1
