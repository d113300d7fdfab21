"""The __torch_function__ protocol, checked against PyTorch: the same Tensor-like class and
Tensor subclass are defined once per library, and what reaches their __torch_function__
(func, types, args, kwargs) and what comes back are compared."""
import inspect
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import _torch_function

LIBS = [torch, dynagrad]


@pytest.fixture(autouse=True, scope='module')
def _leave_dispatch_uninstalled():
    # the classes defined here install the dispatch; later test files should run as
    # programs that never met one do
    yield
    _torch_function.uninstall()


def tensor_like(lib, answer=None):
    """A non-Tensor class overriding __torch_function__ that records its calls."""
    class TensorLike:
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append((func, types, args, kwargs))
            return answer if answer is not None else ('handled', cls.__name__)
    TensorLike.calls = []
    return TensorLike


def name_of(lib, func):
    """A library-neutral name for the func that reached __torch_function__."""
    for prefix, space in (('', lib), ('Tensor.', lib.Tensor), ('F.', lib.nn.functional),
                          ('linalg.', lib.linalg)):
        for name in dir(space):
            value = inspect.getattr_static(space, name, None)
            if isinstance(value, property):
                value = value.__get__
            elif isinstance(value, (staticmethod, classmethod)) or value is None:
                continue
            try:
                if value is func or (not callable(value) and value == func):
                    return prefix + name
            except Exception:
                pass
    return getattr(func, '__name__', repr(func))


CALLS = {
    'function': lambda lib, t, o: lib.matmul(o, t),
    'function kwarg': lambda lib, t, o: lib.matmul(t, other=o),
    'method': lambda lib, t, o: t.add(o),
    'operator +': lambda lib, t, o: t + o,
    'operator -': lambda lib, t, o: t - o,
    'operator *': lambda lib, t, o: t * o,
    'operator @': lambda lib, t, o: t @ o,
    'operator ==': lambda lib, t, o: t == o,
    'reflected -': lambda lib, t, o: t.__rsub__(o),
    'list argument': lambda lib, t, o: lib.cat([t, o]),
    'linalg': lambda lib, t, o: lib.linalg.solve(o, t),
    'functional': lambda lib, t, o: lib.nn.functional.relu(o),
    'indexing': lambda lib, t, o: t[o],
}


@pytest.mark.parametrize('call', list(CALLS))
def test_tensor_like_receives_what_torch_passes(call):
    seen = []
    for lib in LIBS:
        cls = tensor_like(lib)
        t, o = lib.ones(2), cls()
        result = CALLS[call](lib, t, o)
        func, types, args, kwargs = cls.calls[-1]
        assert len(cls.calls) == 1
        assert result == ('handled', 'TensorLike')
        assert cls in types
        seen.append((name_of(lib, func), [a is o for a in args],
                     ['TensorLike' if t is cls else t.__name__ for t in types],
                     [type(a).__name__ for a in args],
                     None if call == 'functional' else kwargs and {k: v is o for k, v in kwargs.items()}))
    assert seen[0] == seen[1]


def test_function_identity_holds_for_tables_built_before_the_class():
    _torch_function.uninstall()
    table = {dynagrad.matmul: 'matmul', dynagrad.Tensor.add: 'Tensor.add',
             dynagrad.linalg.solve: 'solve', dynagrad.Tensor.matmul: 'Tensor.matmul'}
    assert not _torch_function.installed
    cls = tensor_like(dynagrad)
    assert _torch_function.installed
    t, o = dynagrad.ones(2), cls()
    for call in (lambda: dynagrad.matmul(o, t), lambda: t.add(o), lambda: t + o,
                 lambda: dynagrad.linalg.solve(o, t), lambda: t @ o):
        call()
        assert cls.calls[-1][0] in table
    # the swapped functions keep their signatures
    assert str(inspect.signature(dynagrad.matmul)) == '(input, other, *, out=None)'
    # and compute as before on plain tensors
    a = dynagrad.tensor([[1., 2.], [3., 4.]])
    np.testing.assert_allclose(dynagrad.matmul(a, a).numpy(), [[7., 10.], [15., 22.]])


def test_method_objects_are_distinct_as_in_torch():
    for lib in LIBS:
        assert lib.Tensor.add is not lib.add
        assert lib.Tensor.__add__ is not lib.Tensor.add
        assert lib.Tensor.__mul__ is not lib.Tensor.mul


def test_subclass_goes_before_superclass_and_not_implemented_passes_on():
    for lib in LIBS:
        order = []

        class Base:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(('Base', types))
                return 'base'

        class Derived(Base):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(('Derived', types))
                return NotImplemented

        assert lib.add(Base(), Derived()) == 'base'
        assert order == [('Derived', (Derived, Base)), ('Base', (Derived, Base))]


@pytest.mark.parametrize('call, words', [
    (lambda lib, o: lib.nn.functional.relu(o), "no implementation found for '"),
    (lambda lib, o: lib.matmul(o, lib.ones(2)), "Multiple dispatch failed for '"),
    (lambda lib, o: lib.ones(2).add(o), "Multiple dispatch failed for '"),
])
def test_type_error_when_every_handler_refuses(call, words):
    messages = []
    for lib in LIBS:
        class Refuses:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        with pytest.raises(TypeError) as info:
            call(lib, Refuses())
        message = str(info.value)
        assert words in message
        assert 'Refuses' in message
        messages.append(message.split("'")[1].split('.')[-1])
    assert messages[0] == messages[1]


def test_refused_operator_falls_back_to_python():
    for lib in LIBS:
        class Refuses:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        with pytest.raises(TypeError, match='unsupported operand'):
            lib.ones(2) + Refuses()


def subclass(lib):
    class Sub(lib.Tensor):
        pass
    return Sub


RESULTS = {
    'add': lambda s: s + 1,
    'sum': lambda s: s.sum(),
    'index': lambda s: s[0],
    'max values': lambda s: s.max(0).values,
    'T': lambda s: s.T,
    'function': lambda s: torch_or(s).exp(s),
    'data': lambda s: s.data,
    'detach': lambda s: s.detach(),
    'new_zeros': lambda s: s.new_zeros(2),
    'iteration': lambda s: list(s)[0],
    'view': lambda s: s.view(4),
    'linear': lambda s: torch_or(s).nn.functional.linear(s, s),
    'sort values': lambda s: s.sort().values,
}


def torch_or(s):
    return torch if isinstance(s, torch.Tensor) else dynagrad


@pytest.mark.parametrize('what', list(RESULTS))
def test_subclass_results_keep_the_subclass(what):
    kinds = []
    for lib in LIBS:
        sub = subclass(lib)
        s = lib.tensor([[1., 2.], [3., 4.]]).as_subclass(sub)
        out = RESULTS[what](s)
        kinds.append(type(out) is sub)
        np.testing.assert_allclose(np.asarray(out.detach().as_subclass(lib.Tensor).tolist()),
                                   np.asarray(RESULTS[what](
                                       lib.tensor([[1., 2.], [3., 4.]])).tolist()))
    assert kinds[0] == kinds[1]


def test_subclass_prints_its_name():
    texts = []
    for lib in LIBS:
        s = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True).as_subclass(subclass(lib))
        texts.append((repr(s), str(s.detach()[0]), repr(lib.nn.Parameter(lib.ones(1)))))
    assert texts[0][:2] == texts[1][:2]
    assert texts[0][0].startswith('Sub([[1., 2.],')
    assert texts[1][2] == 'Parameter containing:\ntensor([1.], requires_grad=True)'


def test_subclass_gradient_matches_torch():
    grads = []
    for lib in LIBS:
        sub = subclass(lib)
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        s = x.as_subclass(sub)
        y = (s * s).sum()
        assert type(y) is sub
        y.backward()
        grads.append(x.grad.tolist())
        assert type(s.grad_fn).__name__ == 'AliasBackward0'
    assert grads[0] == grads[1] == [2., 4., 6.]


def test_subclass_override_sees_methods_and_functions():
    seen = []
    for lib in LIBS:
        log = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((name_of(lib, func), types))
                return super().__torch_function__(func, types, args, kwargs)

        s = lib.ones(2).as_subclass(Logged)
        out = lib.add(s.mul(2), lib.ones(2)) - s
        assert type(out) is Logged
        seen.append([(n, tuple(t.__name__ for t in ts)) for n, ts in log])
    assert seen[0] == seen[1]


def test_parameter_results_are_plain_tensors():
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(2))
        assert type(p + 1) is lib.Tensor
        assert type(p.detach()) is lib.Tensor
        assert type(p[0]) is lib.Tensor
        assert not lib.overrides.has_torch_function_unary(p)
        assert lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl


def test_make_subclass():
    for lib in LIBS:
        sub = subclass(lib)
        base = lib.ones(2)
        made = lib.Tensor._make_subclass(sub, base, True)
        assert type(made) is sub and made.requires_grad and made.is_leaf
        made.data[0] = 5.        # shares storage
        assert base[0].item() == 5.


def test_disable_contexts():
    for lib in LIBS:
        sub = subclass(lib)
        s = lib.ones(2).as_subclass(sub)
        tl = tensor_like(lib)
        with lib._C.DisableTorchFunctionSubclass():
            assert type(s + 1) is lib.Tensor
            assert not lib._C._is_torch_function_enabled()
            assert not lib.overrides.has_torch_function((s,))
            assert not lib.overrides.has_torch_function((tl(),))
            with pytest.raises(TypeError):
                lib.add(tl(), 1)
        with lib._C.DisableTorchFunction():
            assert type(s + 1) is lib.Tensor
        assert lib._C._is_torch_function_enabled()
        assert type(s + 1) is sub


def test_has_torch_function_and_is_tensor_like():
    for lib in LIBS:
        ov = lib.overrides
        t, s, tl = lib.ones(2), lib.ones(2).as_subclass(subclass(lib)), tensor_like(lib)()
        assert ov.has_torch_function((t, s)) and ov.has_torch_function([tl])
        assert not ov.has_torch_function((t, 1, None))
        assert ov.has_torch_function_variadic(t, tl) and not ov.has_torch_function_variadic(t)
        assert ov.has_torch_function_unary(s) and not ov.has_torch_function_unary(t)
        assert ov.is_tensor_like(t) and ov.is_tensor_like(s) and ov.is_tensor_like(tl)
        assert not ov.is_tensor_like([1.])
        assert ov.is_tensor_method_or_property(lib.Tensor.add)
        assert not ov.is_tensor_method_or_property(lib.add)
        assert lib.add in ov.get_overridable_functions()[lib]
        assert lib.zeros in ov.get_ignored_functions()


def test_handle_torch_function_in_user_functions():
    for lib in LIBS:
        ov = lib.overrides
        tl = tensor_like(lib)

        def double(x):
            if ov.has_torch_function_unary(x):
                return ov.handle_torch_function(double, (x,), x)
            return x * 2

        assert double(lib.ones(1)).tolist() == [2.]
        o = tl()
        assert double(o) == ('handled', 'TensorLike')
        func, types, args, kwargs = tl.calls[-1]
        assert func is double and types == (tl,) and args == (o,) and kwargs == {}


def test_modes():
    seen = []
    for lib in LIBS:
        log = []

        class Mode(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append((name_of(lib, func), types, kwargs,
                            lib.overrides._get_current_function_mode()))
                return func(*args, **(kwargs or {}))

        t = lib.ones(2)
        s = t.as_subclass(subclass(lib))
        with Mode() as mode:
            assert lib.overrides._get_current_function_mode() is mode
            out = lib.add(t, 1)
            t.mul(2)
            s + 1
            with lib._C.DisableTorchFunctionSubclass():
                lib.add(t, 3)
            with lib._C.DisableTorchFunction():
                lib.add(t, 4)
        assert lib.overrides._get_current_function_mode() is None
        assert out.tolist() == [2., 2.]
        seen.append([(n, tuple(x.__name__ for x in ts), k, m) for n, ts, k, m in log])
    assert seen[0] == seen[1]
    assert [entry[0] for entry in seen[1]] == ['add', 'Tensor.mul', 'Tensor.add', 'add']


def test_mode_refusing_names_itself():
    for lib in LIBS:
        class Refuses(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        with Refuses():
            with pytest.raises(TypeError, match='mode object'):
                lib.add(lib.ones(1), 1)


def test_plain_method_torch_function_is_deprecated():
    for lib in LIBS:
        class Plain:
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return 'plain'

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            assert lib.neg(Plain()) == 'plain'
            assert lib.nn.functional.relu(Plain()) == 'plain'
        assert [w.category for w in caught] == [UserWarning, DeprecationWarning]
        assert all('plain method is deprecated' in str(w.message) for w in caught)


def test_sparse_legacy_constructors():
    results = []
    for lib in LIBS:
        i = lib.tensor([[0, 1, 1], [2, 0, 2]])
        v = lib.tensor([3., 4., 5.])
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            s = lib.sparse.FloatTensor(i, v, lib.Size([2, 3]))
            d = lib.sparse.FloatTensor(i, v.double(), (2, 3))
            empty = lib.sparse.DoubleTensor(2, 3)
            with pytest.raises(RuntimeError, match='indices must be an int64 tensor'):
                lib.sparse.FloatTensor(i.int(), v, (2, 3))
            with pytest.raises(TypeError, match='only accepts sizes'):
                lib.sparse.FloatTensor([1, 2])
        assert isinstance(s, lib.sparse.FloatTensor)
        assert not isinstance(s.to_dense(), lib.sparse.FloatTensor)
        results.append((s.to_dense().tolist(), str(s.dtype).split('.')[-1],
                        str(d.dtype).split('.')[-1], str(empty.dtype).split('.')[-1],
                        list(empty.shape), str(s.layout).split('.')[-1]))
    assert results[0] == results[1]


def test_programs_without_overrides_keep_plain_functions():
    # The zero-cost guarantee: importing dynagrad (all of it) and defining a mode's class
    # or ordinary classes swaps nothing; a Tensor-like class, or entering a mode, does.
    import subprocess
    import sys
    code = '''if True:
        import importlib, pkgutil, dynagrad
        from dynagrad import _torch_function as tf
        for m in pkgutil.walk_packages(dynagrad.__path__, 'dynagrad.'):
            if 'examples' in m.name or m.name.endswith(('__main__', '.run')):
                continue
            try:
                importlib.import_module(m.name)
            except Exception:
                pass
        plain_code = dynagrad.add.__code__
        class Mode(dynagrad.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        class Ordinary:
            pass
        class P(dynagrad.nn.Parameter):
            pass
        assert not tf.installed and dynagrad.add.__code__ is plain_code
        with Mode():
            pass
        assert tf.installed and dynagrad.add.__code__ is not plain_code
        tf.uninstall()
        assert dynagrad.add.__code__ is plain_code
        class TensorLike:
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return 0
        assert tf.installed
        print('ok')
    '''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip() == 'ok', out.stderr


def test_property_getters_dispatch_as_torch():
    for lib in LIBS:
        log = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((func, types, kwargs))
                return super().__torch_function__(func, types, args, kwargs)

        s = lib.ones(2, 3).as_subclass(Logged)
        assert s.shape == (2, 3)
        assert log == [(lib.Tensor.shape.__get__, (Logged,), None)]
        assert type(s.mT) is Logged
        assert log[-1][0] == lib.Tensor.mT.__get__
