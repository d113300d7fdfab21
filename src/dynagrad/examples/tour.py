"""A runnable tour of the five seed articles (PyTorch's Variable, Tensor, gradients, Parameter).

Run it with ``python -m dynagrad.examples.tour``. Every snippet is printed, then run, and
its output follows. The seeds were written for PyTorch 0.3/0.4 and print tensors the 0.3
way; where they do, the snippet runs with ``dynagrad.set_printoptions(legacy=True)`` (and
the option is reset afterwards). Where a seed's claim or code does not hold, the snippet
shows what really happens and the note says why. The tour ends by training a small linear
regression with ``dynagrad.nn`` and ``dynagrad.optim.SGD``.

The tour never imports torch: the snippets spell the library ``dynagrad``.
"""
import textwrap

import dynagrad
from dynagrad.autograd import Variable

__all__ = ['SECTIONS', 'main', 'run_section', 'train_linear_regression']


# Each section: (title, note printed before the code, code, print tensors the 0.3 way?)
SECTIONS = [
    ('Seed 000: a Variable wraps a tensor',
     'Variable(tensor, requires_grad=True) puts the egg (the tensor) in the basket. '
     'A plain tensor prints the 0.3 way once legacy printing is on; a Variable always '
     'prints as "Variable containing:" followed by that form.',
     '''
tensor = dynagrad.FloatTensor([[1, 2], [3, 4]])
variable = Variable(tensor, requires_grad=True)
print(tensor)
print(variable)
''', True),

    ('Seed 000: gradients of v_out = mean(variable * variable)',
     'd/dx mean(x*x) = 2x/4 = x/2, so the gradient is 0.5, 1, 1.5, 2. In 0.3 the mean was '
     'a Variable of size 1, which is how the 0-dim result prints here.',
     '''
v_out = dynagrad.mean(variable * variable)
print(v_out)
v_out.backward()
print(variable.grad)
''', True),

    ('Seed 000: getting the data out',
     '.data is the wrapped tensor (a plain Tensor sharing memory); .data.numpy() a NumPy '
     'array sharing it too. (The seed shows "[[ 1.  2.]" in the spacing of older NumPy.)',
     '''
print(variable)
print(variable.data)
print(variable.data.numpy())
''', True),

    ('Seed 000 (extension): requires_grad and volatile propagate',
     'requires_grad: a result requires grad if any input does. volatile: a result is '
     'volatile if any input is, and volatile outranks requires_grad.',
     '''
a = Variable(dynagrad.ones(2), requires_grad=True)
b = Variable(dynagrad.ones(2))
c = Variable(dynagrad.ones(2), volatile=True)
print((a + b).requires_grad, (b + b).requires_grad)
w = a + c
print(w.volatile, w.requires_grad, w.grad_fn)
''', True),

    ('Seed 000 (extension): retain_graph',
     'After one backward the graph\'s buffers are freed; retain_graph=True keeps them so a '
     'second backward works, and gradients accumulate.',
     '''
x = Variable(dynagrad.FloatTensor([3]), requires_grad=True)
y = x * x
y.backward(retain_graph=True)
y.backward()
print(x.grad.item())          # 6 + 6
try:
    y.backward()
except RuntimeError as e:
    print('RuntimeError:', str(e)[:57])
''', False),

    ('Seed 001: two ways to create a Variable, and its attributes',
     '',
     '''
x = dynagrad.Tensor([1, 2, 3])
x_var = Variable(x, requires_grad=True)
x_var2 = Variable(dynagrad.Tensor([1, 2, 3]), requires_grad=True)
print(x_var.data.tolist(), x_var.grad, x_var.requires_grad, x_var.volatile)
print(x_var2.data.tolist())
''', True),

    ('Seed 001: y = x ** 2',
     'dy/dx = 2x = 4 at x = 2.',
     '''
x = Variable(dynagrad.Tensor([2]), requires_grad=True)
y = x ** 2
y.backward()
print(x.grad)
''', True),

    ('Seed 001: the volatile example (the seed is wrong here)',
     'The seed says z.backward() gives x.grad = 6. Under 0.3 semantics, which dynagrad '
     'follows for Variables, volatile wins: z = x * y with volatile y is itself volatile, '
     'requires no grad and has no grad_fn, so z.backward() raises RuntimeError. (6 is the '
     'value of z, not a gradient: d(x*y)/dx = y = 3, which is what you get without '
     'volatile.)',
     '''
x = Variable(dynagrad.Tensor([2]), requires_grad=True)
y = Variable(dynagrad.Tensor([3]), volatile=True)
z = x * y
print(z)
print(z.volatile, z.requires_grad, z.grad_fn)
try:
    z.backward()
except RuntimeError as e:
    print('RuntimeError:', e)
print(x.grad)

y = Variable(dynagrad.Tensor([3]))           # not volatile: just needs no gradient
z = x * y
z.backward()
print(x.grad.item())
''', True),

    ('Seed 002: Tensor(3, 4) and Variable attributes',
     'Tensor(3, 4) allocates an uninitialised 3x4 FloatTensor: it prints whatever the memory '
     'held (the seed shows -12170.8672 and zeros). This tour zeroes it so its output is '
     'reproducible. grad_fn is printed by name: 0.3 called the node "MulBackward", PyTorch '
     '2.x and dynagrad "MulBackward0" (the seed also prints an address).',
     '''
x_tensor = dynagrad.Tensor(3, 4)
print(x_tensor.size(), x_tensor.type())
x_tensor.zero_()
x_variable = Variable(x_tensor)
print(x_variable)
print(x_variable.data)
print(x_variable.grad)
print(x_variable.requires_grad)
x_variable = Variable(x_tensor, requires_grad=True)
print(x_variable.requires_grad)
y = x_variable * 2
print(y.grad_fn.name())
''', True),

    ('Seed 002: the graph of y = w*x + b',
     'dy/dw = x = 2, dy/dx = w = 1, dy/db = 1. With requires_grad=False on x, x.grad stays '
     'None.',
     '''
w = Variable(dynagrad.Tensor([1]), requires_grad=True)
x = Variable(dynagrad.Tensor([2]), requires_grad=True)
b = Variable(dynagrad.Tensor([3]), requires_grad=True)
y = w * x + b
y.backward()
print(w.grad.item(), x.grad.item(), b.grad.item())

w = Variable(dynagrad.Tensor([1]), requires_grad=True)
x = Variable(dynagrad.Tensor([2]), requires_grad=False)
b = Variable(dynagrad.Tensor([3]), requires_grad=True)
y = w * x + b
y.backward()
print(w.grad.item(), x.grad, b.grad.item())
''', False),

    ('Seed 002: backward of a vector with gradient weights',
     'z.backward(g) accumulates g * dz/dx = 2g into x.grad; x.grad.data.zero_() clears it. '
     'Plain tensors print in the modern form here, as in the seed. The code runs as '
     'written: z = 2*x saved only the constant 2, and dynagrad (like 0.3) lets such a '
     'node run again without retain_graph=True (PyTorch 2.x raises on the second call).',
     '''
x = Variable(dynagrad.FloatTensor([1, 2, 3, 4]), requires_grad=True)
z = 2 * x
print(z.data, z.size())
z.backward(dynagrad.FloatTensor([1, 0, 0, 0]))
print(x.grad.data)
x.grad.data.zero_()
z.backward(dynagrad.FloatTensor([0, 1, 0, 0]))
print(x.grad.data)
x.grad.data.zero_()
z.backward(dynagrad.FloatTensor([1, 1, 1, 1]))
print(x.grad.data)
x.grad.data.zero_()
z.backward(dynagrad.FloatTensor([1, 0.1, 0.01, 0.001]))
print(x.grad.data)
''', False),

    ('Seed 002: a scalar loss = z.sum(dim=1) does the same',
     'loss has one element, so loss.backward() needs no gradient argument: it is '
     'z.backward(FloatTensor([[1, 1, 1, 1]])).',
     '''
x = Variable(dynagrad.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
z = 2 * x
loss = z.sum(dim=1)
z.backward(dynagrad.FloatTensor([[1, 0, 0, 0]]))
print(x.grad.data.tolist())
x.grad.data.zero_()
z.backward(dynagrad.FloatTensor([[0, 1, 0, 0]]))
print(x.grad.data.tolist())
x.grad.data.zero_()
z.backward(dynagrad.FloatTensor([[1, 1, 1, 1]]))
print(x.grad.data.tolist())
x.grad.data.zero_()
loss.backward()
print(x.grad.data)
''', True),

    ('Seed 003: z = x + y, backward with retain_graph',
     'z is 10x5, not a scalar, so the seed\'s z.backward(retain_graph=True) raises; pass a '
     'gradient of ones. x.grad is then a 10x5 tensor of ones (the seed says 10x1). With '
     'retain_graph=True the graph survives, so a second backward accumulates 2s (an '
     'addition saves no tensors, so dynagrad would allow that second call anyway).',
     '''
dynagrad.manual_seed(0)
a = dynagrad.randn(10, 5)
b = dynagrad.randn(10, 5)
x = Variable(a, requires_grad=True)
y = Variable(b, requires_grad=True)
z = x + y
try:
    z.backward(retain_graph=True)
except RuntimeError as e:
    print('RuntimeError:', e)
z.backward(dynagrad.ones(10, 5), retain_graph=True)
print(x.grad.size(), x.grad.data.tolist() == [[1.0] * 5] * 10)
print(z.grad_fn.name())
z.backward(dynagrad.ones(10, 5))
print(x.grad.data[0])
''', True),

    ('Seed 003: Parameter requires grad by default; net.parameters() and SGD',
     'Variable needs requires_grad=True; Parameter has it by default and registers itself '
     'on the Module it is assigned to, so net.parameters() finds it for the optimizer. '
     '(In dynagrad, as in PyTorch since 0.4, Parameter subclasses Tensor; the 0.3 '
     'Variable is a separate legacy wrapper.)',
     '''
v = Variable(dynagrad.ones(2))
p = dynagrad.nn.Parameter(dynagrad.ones(2))
t = dynagrad.tensor([1., 1.])
print(v.requires_grad, p.requires_grad, t.requires_grad)
print(p)

class Net(dynagrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = dynagrad.nn.Parameter(dynagrad.FloatTensor([1.0, -1.0]))
        self.b = dynagrad.nn.Parameter(dynagrad.FloatTensor([0.5]))

    def forward(self, x):
        return (x * self.w).sum() + self.b

net = Net()
print([name for name, _ in net.named_parameters()])
optimizer = dynagrad.optim.SGD(net.parameters(), lr=1e-1)
optimizer.zero_grad()
out = net(dynagrad.FloatTensor([2.0, 3.0]))
out.backward()
print(net.w.grad.tolist(), net.b.grad.tolist())
optimizer.step()
print(net.w.data, net.b.data)
''', False),

    ('Seed 004: register_hook doubles the gradient',
     'The docstring example of 0.3\'s Variable.register_hook; after h.remove() the hook no '
     'longer runs, so a second backward adds 1s, not 2s.',
     '''
v = Variable(dynagrad.Tensor([0, 0, 0]), requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(dynagrad.Tensor([1, 1, 1]))
print(v.grad.data)
h.remove()  # removes the hook
v.backward(dynagrad.Tensor([1, 1, 1]))
print(v.grad.data.tolist())
''', True),

    ('Seed 004: retain_grad, detach, detach_',
     'retain_grad() makes a non-leaf keep its .grad. detach() returns a Variable sharing the '
     'data that needs no grad (and stays volatile if the input was); detach_() turns a '
     'Variable into a leaf in place.',
     '''
x = Variable(dynagrad.FloatTensor([1, 2]), requires_grad=True)
y = x * 3
y.retain_grad()
(y * y).sum().backward()
print(y.grad.tolist(), x.grad.tolist())

d = y.detach()
print(type(d).__name__, d.requires_grad, d.grad_fn)
d.data[0] = 100.0          # shares memory with y
print(y.data.tolist())
print(Variable(dynagrad.ones(1), volatile=True).detach().volatile)
y2 = x * 2
y2.detach_()
print(y2.is_leaf, y2.requires_grad)
''', False),

    ('Seed 004: volatile rules and reinforce()',
     'volatile can only be set on leaves, never together with requires_grad; a hook cannot '
     'be registered on a volatile Variable. reinforce() was removed after 0.3 (use '
     'distributions instead).',
     '''
v = Variable(dynagrad.ones(2), volatile=True)
for attempt in (lambda: v.register_hook(lambda g: g),
                lambda: Variable(dynagrad.ones(2), requires_grad=True, volatile=True),
                lambda: (Variable(dynagrad.ones(2), requires_grad=True) * 2).__setattr__(
                    'volatile', True),
                lambda: Variable(dynagrad.ones(2)).reinforce(dynagrad.ones(2))):
    try:
        attempt()
    except RuntimeError as e:
        print('RuntimeError:', str(e).split('\\n')[0])
''', False),
]


def run_section(title, note, code, legacy, namespace, out=print):
    """Print one section's title, note and code, then run the code (its prints follow)."""
    if title is not None:
        out('=' * 78)
        out(title)
        out('=' * 78)
    if note:
        out(textwrap.fill(note, 78))
        out()
    code = code.strip('\n')
    if legacy:
        out('>>> dynagrad.set_printoptions(legacy=True)')
    out(textwrap.indent(code, '>>> ', lambda line: True).replace('>>> \n', '>>>\n'))
    out('--- output ---')
    if legacy:
        dynagrad.set_printoptions(legacy=True)
    try:
        exec(compile(code, f'<tour: {title or "training"}>', 'exec'), namespace)
    finally:
        if legacy:
            dynagrad.set_printoptions(legacy=False)
    out()


REGRESSION_CODE = '''
dynagrad.manual_seed(0)
x = dynagrad.randn(100, 1)
y = 3 * x + 2 + 0.1 * dynagrad.randn(100, 1)      # y = 3x + 2 + noise
model = dynagrad.nn.Linear(1, 1)
print(model)
loss_fn = dynagrad.nn.MSELoss()
optimizer = dynagrad.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(1, EPOCHS + 1):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch == 1 or epoch % 10 == 0:
        print(f'epoch {epoch:3d}  loss {loss.item():.6f}')
weight, bias = model.weight.item(), model.bias.item()
print(f'learned weight: {weight:.4f}  (true 3)')
print(f'learned bias:   {bias:.4f}  (true 2)')
'''


def train_linear_regression(epochs=100, out=print):
    """Print and run REGRESSION_CODE; return the learned (weight, bias)."""
    out('=' * 78)
    out('Training: linear regression y = 3x + 2 + noise with nn.Linear and optim.SGD')
    out('=' * 78)
    namespace = {'dynagrad': dynagrad, 'EPOCHS': epochs, '__name__': '__tour__'}
    run_section(None, '', f'EPOCHS = {epochs}\n' + REGRESSION_CODE, False, namespace, out)
    return namespace['weight'], namespace['bias']


def main(out=print):
    """Run every section, then the regression; return the learned (weight, bias)."""
    out('A tour of the seed articles, run on dynagrad ' + dynagrad.version.dynagrad_version)
    out()
    namespace = {'dynagrad': dynagrad, 'Variable': Variable, '__name__': '__tour__'}
    for title, note, code, legacy in SECTIONS:
        run_section(title, note, code, legacy, namespace, out)
    return train_linear_regression(out=out)


if __name__ == '__main__':
    main()
