"""``dynagrad._dynamo.utils``: the compile statistics libraries read. dynagrad's compile
keeps none in this form (``dynagrad.compiler.explain`` reports its programs), so the
counters start, and stay, empty."""
import collections

counters = collections.defaultdict(collections.Counter)
