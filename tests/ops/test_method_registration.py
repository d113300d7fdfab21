"""Tensor methods are registered next to the function they bind (``dynagrad.tensor.method``
and the factories of ops/_elementwise.py), never through a table bound elsewhere; the
methods, in-place forms and operators that this produces behave as PyTorch's."""
import ast
import inspect
import operator
import pathlib

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import ops

OPS_DIR = pathlib.Path(ops.__file__).parent


def _ops_sources():
    return sorted(OPS_DIR.glob('*.py'))


@pytest.mark.parametrize('path', _ops_sources(), ids=lambda p: p.name)
def test_no_method_table_in_ops(path):
    """No ``METHODS`` dict (nor a ``_bind`` that would set one on Tensor) in ops/."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id.endswith('METHODS'):
                found.append(f'{t.id} = ... (line {t.lineno})')
        if isinstance(node, ast.Attribute) and node.attr == 'METHODS':
            found.append(f'.METHODS (line {node.lineno})')
        if isinstance(node, ast.FunctionDef) and node.name == '_bind':
            found.append(f'def _bind (line {node.lineno})')
    assert not found, (f'{path.name}: {found}: register Tensor methods where the function is '
                       'defined (dynagrad.tensor.method or the _elementwise factories)')


def test_no_family_module_exposes_a_method_table():
    for name in ('arithmetic', 'unary', 'comparison', 'clamping', 'pointwise', 'reduction',
                 'shape', 'indexing', 'linalg', 'random'):
        assert not hasattr(getattr(ops, name), 'METHODS'), name


# A sample across the families: functions' methods, in-place forms (aliases' too), operators
# with their reflected and in-place forms, properties.
SAMPLE = [
    'exp2', 'exp2_', 'exp_', 'tanh_', 'asin_', 'arcsin_', 'arcsinh_', 'fix_', 'negative_',
    'absolute_', 'erfinv_', 'round_', 'logit_', 'polygamma', 'polygamma_',
    'add_', 'subtract_', 'multiply_', 'divide_', 'true_divide_', 'hypot_', 'arctan2_',
    'floor_divide_', 'square_', 'addcmul_', 'xlogy_',
    'clamp_', 'clip_', 'clamp_min_', 'nan_to_num_', 'lerp_', 'fill_', 'zero_', 'copy_',
    'logical_and_', 'logical_not_', 'bitwise_not_', 'bitwise_left_shift_', 'not_equal',
    'greater_equal', 'cumsum_', 'cumprod_', 'tril_', 'triu_', 'scatter_', 'scatter_reduce_',
    'index_select', 'index_add_', 'masked_fill_', 'put_', 'addmm_', 'baddbmm_', 'inverse',
    'ger', 'bernoulli_', 'uniform_', 'swapdims', 'moveaxis', 'T', 'mT',
    '__add__', '__radd__', '__iadd__', '__rsub__', '__rtruediv__', '__rpow__', '__ipow__',
    '__rfloordiv__', '__rmod__', '__imod__', '__iand__', '__rand__', '__ior__', '__ixor__',
    '__rlshift__', '__irshift__', '__invert__', '__matmul__', '__rmatmul__', '__getitem__',
    '__setitem__', '__neg__', '__pos__', '__abs__', '__eq__', '__ge__',
]


@pytest.mark.parametrize('name', SAMPLE)
def test_pytorch_method_present(name):
    assert hasattr(torch.Tensor, name), f'the sample names {name}, which PyTorch lacks'
    assert hasattr(dg.Tensor, name), f'Tensor.{name} is missing'


# Where each is declared: the module that defines the op it binds.
@pytest.mark.parametrize('name, module', [
    ('exp2', 'unary'), ('exp2_', 'unary'), ('arcsinh_', 'unary'), ('__neg__', 'unary'),
    ('add_', 'arithmetic'), ('__add__', 'arithmetic'), ('__rmod__', 'arithmetic'),
    ('hypot_', 'arithmetic'), ('__iand__', 'comparison'), ('__rlshift__', 'comparison'),
    ('__eq__', 'comparison'), ('clamp_', 'clamping'), ('cumsum_', 'reduction'),
    ('tril_', 'shape'), ('scatter_', 'indexing'), ('__getitem__', 'indexing'),
    ('__matmul__', 'linalg_products'), ('__rmatmul__', 'linalg_products'),
    ('inverse', 'linalg_decompositions'), ('bernoulli_', 'random'),
])
def test_method_declared_by_its_family(name, module):
    assert getattr(dg.Tensor, name).__module__ == f'dynagrad.ops.{module}'


def test_method_is_the_function():
    """Where a function and a method share a name, they run the same code (no wrapper
    frame); as in torch they are distinct objects (__torch_function__ tells them apart)."""
    for family in (ops.arithmetic, ops.unary, ops.comparison, ops.clamping, ops.reduction,
                   ops.ordering, ops.shape, ops.indexing, ops.linalg):
        for name in family.__all__:
            fn = getattr(family, name)
            if name in vars(dg.Tensor) and callable(fn) and name != 'polygamma':
                method = vars(dg.Tensor)[name]
                # unwrapped: once __torch_function__ dispatch is installed, each has its
                # own trampoline in front (it sets __wrapped__)
                assert (inspect.unwrap(method).__code__
                        is inspect.unwrap(fn).__code__), f'{family.__name__}.{name}'
                assert method is not getattr(dg, name, None)


X = [0.5, -1.25, 2.0, 0.0]
Y = [1.5, 0.75, -3.0, 2.5]


def _both(values, dtype='float32'):
    return (torch.tensor(values, dtype=getattr(torch, dtype)),
            dg.tensor(values, dtype=getattr(dg, dtype)))


@pytest.mark.parametrize('name', ['exp2_', 'exp_', 'tanh_', 'arcsin_', 'asinh_', 'arcsinh_',
                                  'arccosh_', 'negative_', 'absolute_', 'fix_', 'trunc_',
                                  'erf_', 'sigmoid_', 'frac_'])
def test_unary_inplace_writes_into_self(name):
    vals = [1.5, 2.0, 3.25] if 'cosh' in name else [0.5, -0.25, 0.75]
    t, d = _both(vals)
    out_t, out_d = getattr(t, name)(), getattr(d, name)()
    assert out_d is d
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    assert out_t.dtype == torch.float32 and d.dtype == dg.float32


@pytest.mark.parametrize('name', ['hypot_', 'atan2_', 'arctan2_', 'add_', 'subtract_',
                                  'multiply_', 'divide_', 'true_divide_', 'xlogy_', 'fmod_',
                                  'remainder_', 'floor_divide_'])
def test_binary_inplace_writes_into_self(name):
    (t, d), (ot, od) = _both(X), _both(Y)
    getattr(t, name)(ot)
    assert getattr(d, name)(od) is d
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('name', ['hypot_', 'arctan2_', 'atan2_', 'logical_and_',
                                  'logical_xor_'])
def test_inplace_tensor_only_error_names_itself(name):
    with pytest.raises(TypeError) as expected:
        getattr(torch.ones(2), name)(1)
    with pytest.raises(TypeError) as got:
        getattr(dg.ones(2), name)(1)
    assert str(got.value) == str(expected.value)


OPERATORS = [
    ('a + b', operator.add), ('a - b', operator.sub), ('a * b', operator.mul),
    ('a / b', operator.truediv), ('a // b', operator.floordiv), ('a % b', operator.mod),
    ('a ** b', operator.pow), ('a == b', operator.eq), ('a < b', operator.lt),
    ('a >= b', operator.ge), ('a != b', operator.ne),
]


@pytest.mark.parametrize('text, op', OPERATORS, ids=[t for t, _ in OPERATORS])
@pytest.mark.parametrize('side', ['tensors', 'scalar right', 'scalar left'])
def test_arithmetic_operators(text, op, side):
    (t, d), (ot, od) = _both([1.5, 2.0, 3.0]), _both([0.5, 3.0, -2.0])
    if side == 'scalar right':
        ot = od = 2.5
    elif side == 'scalar left':
        t = d = 2.5
    expected, got = op(t, ot), op(d, od)
    assert isinstance(got, dg.Tensor)
    assert str(got.dtype).split('.')[1] == str(expected.dtype).split('.')[1]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


BITWISE = [('&', operator.and_, operator.iand), ('|', operator.or_, operator.ior),
           ('^', operator.xor, operator.ixor), ('<<', operator.lshift, operator.ilshift),
           ('>>', operator.rshift, operator.irshift)]


@pytest.mark.parametrize('text, op, iop', BITWISE, ids=[t for t, _, _ in BITWISE])
def test_bitwise_operators_reflected_and_inplace(text, op, iop):
    (t, d), (ot, od) = _both([5, -6, 3], 'int64'), _both([1, 2, 3], 'int64')
    for expected, got in ((op(t, ot), op(d, od)), (op(t, 2), op(d, 2)), (op(7, t), op(7, d))):
        assert got.dtype == dg.int64
        assert got.tolist() == expected.tolist()
    before = d
    iop(t, ot)
    d = iop(d, od)
    assert d is before and d.tolist() == t.tolist()


def test_unary_operators_and_matmul():
    t, d = _both(X)
    assert (-d).tolist() == (-t).tolist()
    assert (+d) is d
    assert abs(d).tolist() == abs(t).tolist()
    ti, di = _both([5, 0, 3], 'int64')
    assert (~di).tolist() == (~ti).tolist()
    m = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    tm, dm = _both(m)
    np.testing.assert_allclose((d @ dm).numpy(), (t @ tm).numpy(), rtol=1e-6)
    np.testing.assert_allclose(dm.__rmatmul__(d).numpy(), (t @ tm).numpy(), rtol=1e-6)
    np.testing.assert_allclose(dm.T.numpy(), tm.T.numpy())
    np.testing.assert_allclose(dm.mT.numpy(), tm.mT.numpy())


def test_inplace_operators_keep_the_tensor():
    t, d = _both(X)
    for iop, other in ((operator.iadd, 1.5), (operator.isub, 0.25), (operator.imul, 2.0),
                       (operator.itruediv, 4.0), (operator.ipow, 2), (operator.imod, 0.7),
                       (operator.ifloordiv, 0.3)):
        before = d
        t, d = iop(t, other), iop(d, other)
        assert d is before
        np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def test_operator_gradients():
    """Operators go through the op, so they record it: gradients match PyTorch's."""
    t = torch.tensor([1.5, 2.0, 3.0], requires_grad=True)
    d = dg.tensor([1.5, 2.0, 3.0], requires_grad=True)
    for x in (t, d):
        ((2 - x) * x / (1 + x) + 3 / x - x ** 2 + 2 ** x + (-x)).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-5)
