"""dynagrad.utils._pytree against torch.utils._pytree: the same leaves, specs (their printed
form included), rebuilt trees and errors."""
import collections
import warnings

import pytest
import torch.utils._pytree as theirs

import dynagrad.utils._pytree as mine

Point = collections.namedtuple('Point', 'x y')

TREES = [
    5, None, [], (), {}, [1, None, 2], (1, (2, (3,))), {'b': 1, 'a': [2, 3]},
    {'b': [1, (2, None)], 'a': Point(3, {'z': 4}),
     'c': collections.OrderedDict(y=5, x=6), 'd': collections.defaultdict(list, {1: 7}),
     'e': collections.deque([8, 9], maxlen=3), 'f': collections.deque([10])},
    [Point(1, 2), Point([3], (4,))], {'x': {'y': {'z': None}}}, 'a string is a leaf',
]


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        return fn(mine), fn(theirs)


@pytest.mark.parametrize('tree', TREES, ids=repr)
def test_flatten_unflatten_and_printed_spec_match_torch(tree):
    (l1, s1), (l2, s2) = _both(lambda P: P.tree_flatten(tree))
    assert l1 == l2
    assert repr(s1) == repr(s2) and str(s1) == str(s2)
    assert (s1.num_leaves, s1.num_nodes, s1.num_children, s1.is_leaf()) == \
        (s2.num_leaves, s2.num_nodes, s2.num_children, s2.is_leaf())
    rebuilt = mine.tree_unflatten(l1, s1)
    assert rebuilt == theirs.tree_unflatten(l2, s2) == tree
    assert type(rebuilt) is type(tree)
    for a, b in zip(mine.tree_leaves(rebuilt), theirs.tree_leaves(tree)):
        assert a is b
    m, t = _both(lambda P: P.tree_map(lambda x: (x, 1), tree))
    assert m == t
    m, t = _both(lambda P: [(P.keystr(k), v) for k, v in P.tree_leaves_with_path(tree)])
    assert m == t


def test_spec_equality_children_and_leaf_spec():
    a, b = mine.tree_structure([1, (2,)]), mine.tree_structure([5, (6,)])
    assert a == b and hash(a) == hash(b) and a != mine.tree_structure([1, [2]])
    assert repr(a.child(1)) == repr(theirs.tree_structure([1, (2,)]).child(1))
    assert repr(mine.LeafSpec()) == '*' and mine.LeafSpec() == mine.tree_structure(3)
    assert mine.tree_structure(3).is_leaf()
    assert repr(mine.tree_structure({'b': 1, 'a': 2})) == \
        repr(theirs.tree_structure({'b': 1, 'a': 2}))


@pytest.mark.parametrize('call', [
    lambda P: P.tree_map(lambda x, y: x + y, [1, 2], [3, 4]),
    lambda P: P.tree_map(lambda x, y: (x, y), {'a': 1, 'b': 2}, {'b': [3], 'a': 4}),
    lambda P: P.tree_map_only(int, lambda x: -x, [1, 'a', 2.0, True]),
    lambda P: P.tree_map_only((int, float), lambda x: -x, [1, 'a', 2.0]),
    lambda P: P.tree_map_only(lambda x: x == 2, lambda x: -x, (1, 2)),
    lambda P: (P.tree_all(lambda x: x > 0, [1, 2]), P.tree_any(lambda x: x > 1, [1, 2]),
               P.tree_all_only(str, len, [1, 'ab']), P.tree_any_only(int, bool, [0, 'x'])),
    lambda P: P.tree_leaves([1, [2, 3]], is_leaf=lambda x: isinstance(x, list) and len(x) == 2),
    lambda P: [P.tree_is_leaf(x) for x in ([1], None, 1, Point(1, 2))],
    lambda P: P.tree_map_with_path(lambda p, x: (P.keystr(p), x), {'a': [1, Point(2, 3)]}),
    lambda P: list(P.tree_iter([1, [2, {'k': 3}]])),
])
def test_functions_match_torch(call):
    m, t = _both(call)
    assert m == t


@pytest.mark.parametrize('call', [
    lambda P: P.tree_map(lambda x, y: x + y, [1, 2], [3, 4, 5]),
    lambda P: P.tree_map(lambda x, y: x, {'a': 1}, {'b': 1}),
    lambda P: P.tree_map(lambda x, y: x, [1], (1,)),
    lambda P: P.tree_unflatten([1, 2, 3], P.tree_structure([1, 2])),
    lambda P: P.tree_unflatten([1], [1]),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as t:
        call(theirs)
    with pytest.raises(type(t.value)) as m:
        call(mine)
    assert str(m.value) == str(t.value)


def test_register_pytree_node_and_in_place_map():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for P in (mine, theirs):
        P.register_pytree_node(Pair, lambda p: ([p.a, p.b], 'ctx'),
                               lambda xs, ctx: Pair(*xs))
        leaves, spec = P.tree_flatten([Pair(1, [2, 3])])
        assert leaves == [1, 2, 3]
        back = P.tree_map(lambda v: v * 10, Pair(1, 2))
        assert (back.a, back.b) == (10, 20)
        with pytest.raises(ValueError, match='already registered as pytree node'):
            P.register_pytree_node(Pair, lambda p: ([], None), lambda xs, ctx: Pair(0, 0))
    assert repr(mine.tree_structure(Pair(1, 2))) == repr(theirs.tree_structure(Pair(1, 2)))
    seen = []
    tree = [1, [2]]
    assert mine.tree_map_(seen.append, tree) is tree and seen == [1, 2]
