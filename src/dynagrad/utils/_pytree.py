"""``dynagrad.utils._pytree``: nested containers as trees of leaves, with the API and the
answers of ``torch.utils._pytree`` (which libraries import to walk their inputs).

Tuples, lists, dicts, namedtuples, ``OrderedDict``, ``defaultdict`` and ``deque`` are nodes;
everything else, ``None`` included, is a leaf. Dicts keep their insertion order. More node
types join with ``register_pytree_node``.

(``dynagrad.func`` keeps its own smaller walker over tuples, lists and dicts of tensors: it
checks every leaf is a tensor as it goes, and this module sits a layer apart.)
"""
import collections
import dataclasses
from typing import Any, NamedTuple

__all__ = ['TreeSpec', 'LeafSpec', 'register_pytree_node', 'tree_is_leaf', 'tree_flatten',
           'tree_flatten_with_path', 'tree_unflatten', 'tree_iter', 'tree_leaves',
           'tree_leaves_with_path', 'tree_structure', 'tree_map', 'tree_map_with_path',
           'tree_map_', 'tree_map_only', 'tree_map_only_', 'tree_all', 'tree_any',
           'tree_all_only', 'tree_any_only', 'keystr', 'key_get', 'SequenceKey', 'MappingKey',
           'GetAttrKey', 'is_namedtuple', 'is_namedtuple_class', 'is_namedtuple_instance',
           'SUPPORTED_NODES']


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


SUPPORTED_NODES = {}


# -- paths ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f'[{self.idx!r}]'

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f'[{self.key!r}]'

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f'.{self.name}'

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    return ''.join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# -- node types -------------------------------------------------------------------------------

def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make ``cls`` a node: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f'{cls} is already registered as pytree node.')
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and \
        isinstance(getattr(cls, '_fields', None), tuple) and hasattr(cls, '_make')


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


# the built-in node types' functions, under PyTorch's names (libraries reuse them: transformers
# registers its ModelOutput dicts with _dict_flatten_with_keys)

def _seq_keys(xs):
    return [(SequenceKey(i), x) for i, x in enumerate(xs)]


def _tuple_flatten(t):
    return list(t), None


def _tuple_flatten_with_keys(t):
    return _seq_keys(t), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(t):
    return list(t), None


def _list_flatten_with_keys(t):
    return _seq_keys(t), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _namedtuple_flatten(t):
    return list(t), type(t)


def _namedtuple_flatten_with_keys(t):
    return [(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)


def _namedtuple_unflatten(values, context):
    return context(*values)


_ordereddict_flatten = _odict_flatten = _dict_flatten
_ordereddict_flatten_with_keys = _dict_flatten_with_keys


def _ordereddict_unflatten(values, context):
    return collections.OrderedDict(zip(context, values))


_odict_unflatten = _ordereddict_unflatten


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], [d.default_factory, list(d.keys())]


def _defaultdict_unflatten(values, context):
    return collections.defaultdict(context[0], zip(context[1], values))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return collections.deque(values, maxlen=context)


for _kind, _name in ((tuple, 'tuple'), (list, 'list'), (dict, 'dict'),
                     (collections.namedtuple, 'namedtuple'),
                     (collections.OrderedDict, 'ordereddict'),
                     (collections.defaultdict, 'defaultdict'), (collections.deque, 'deque')):
    SUPPORTED_NODES[_kind] = NodeDef(_kind, globals()[f'_{_name}_flatten'],
                                     globals()[f'_{_name}_unflatten'],
                                     globals()[f'_{_name}_flatten_with_keys'])


def _node_type(tree):
    if is_namedtuple_instance(tree):
        return collections.namedtuple
    return type(tree)


def tree_is_leaf(tree, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# -- the spec ---------------------------------------------------------------------------------

class TreeSpec:
    """A tree's structure: its node type, the context its unflatten needs (dict keys, a
    namedtuple's class) and one spec per child; a leaf is ``*``."""

    def __init__(self, type, context, children_specs):
        self.type, self.context = type, context
        self._children = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
        self.num_leaves = sum(c.num_leaves for c in self._children)
        self.num_children = len(self._children)

    @property
    def children_specs(self):
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def child(self, index):
        return self._children[index]

    def children(self):
        return list(self._children)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type, self.context, self._children) == \
            (other.type, other.context, other._children)

    def __hash__(self):
        return hash((self.type, _hashable(self.context), tuple(self._children)))

    def __repr__(self, indent=0):
        head = f'TreeSpec({self.type.__name__}, {self.context}, ['
        body = ''
        if self._children:
            indent += 2
            body = self._children[0].__repr__(indent)
            body += ',' if len(self._children) > 1 else ''
            body += ','.join('\n' + ' ' * indent + c.__repr__(indent)
                             for c in self._children[1:])
        return f'{head}{body}])'

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this
        structure down to them)."""
        out = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        kind = _node_type(tree)
        if kind is not self.type:
            raise ValueError(f'Node type mismatch; expected {self.type!r}, but got {kind!r}.')
        children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f'Node arity mismatch; expected {self.num_children}, but got '
                             f'{len(children)}.')
        if kind in (dict, collections.OrderedDict, collections.defaultdict):
            keys = context[1] if kind is collections.defaultdict else context
            mine = self.context[1] if kind is collections.defaultdict else self.context
            if set(keys) != set(mine):
                missing, extra = set(mine) - set(keys), set(keys) - set(mine)
                raise ValueError(f'Node keys mismatch; missing key(s): {missing or "{}"}; '
                                 f'extra key(s): {extra or "{}"}.')
            children = [tree[k] for k in mine]   # the spec's order
        elif context != self.context:
            raise ValueError(f'Node context mismatch for custom node type {self.type!r}.')
        for spec, child in zip(self._children, children):
            spec._up_to(child, out)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f'treespec.unflatten(leaves): `leaves` has length {len(leaves)} '
                             f'but the spec refers to a pytree that holds {self.num_leaves} '
                             f'items ({self}).')
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.is_leaf():
            return next(leaves)
        children = [c._build(leaves) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self, indent=0):
        return '*'


_LEAF = LeafSpec()


def _hashable(value):
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


# -- flatten and friends ----------------------------------------------------------------------

def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    node = SUPPORTED_NODES[_node_type(tree)]
    children, context = node.flatten_fn(tree)
    return TreeSpec(node.type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves in order, and what ``tree_unflatten`` rebuilds from them."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f'Expected `treespec` to be an instance of PyTreeSpec but got item of '
                        f'type {type(treespec)}.')
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """The tree of ``func(leaf, *matching leaves of rests)``; ``rests`` must have ``tree``'s
    structure (they may hold whole subtrees where ``tree`` has leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf=None):
    """``func`` on every leaf for its effect; returns ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    collections.deque(map(func, *columns), maxlen=0)
    return tree


def _type_pred(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, type) or (
            isinstance(type_or_types_or_pred, tuple) and
            all(isinstance(t, type) for t in type_or_types_or_pred)) or \
            type(type_or_types_or_pred).__name__ == 'UnionType':
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError('Argument must be a type, a tuple of types, or a callable.')


def _only(type_or_types_or_pred, func):
    pred = _type_pred(type_or_types_or_pred)
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    test = _type_pred(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if test(x))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    test = _type_pred(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if test(x))


# -- paths ------------------------------------------------------------------------------------

def _with_path(tree, is_leaf, path, out):
    if tree_is_leaf(tree, is_leaf):
        out.append((path, tree))
        return
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f'Did not find a flatten_with_keys_fn for type: {node.type}. Please '
                         'pass a flatten_with_keys_fn argument to register_pytree_node.')
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        _with_path(child, is_leaf, path + (key,), out)


def tree_leaves_with_path(tree, is_leaf=None):
    out = []
    _with_path(tree, is_leaf, (), out)
    return out


def tree_flatten_with_path(tree, is_leaf=None):
    return tree_leaves_with_path(tree, is_leaf), tree_structure(tree, is_leaf)


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    paths_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in paths_leaves], [x for _, x in paths_leaves]] + \
        [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))
