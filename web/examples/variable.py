# The seed posts' Variable: PyTorch 0.3's autograd API, which dynagrad keeps.
import dynagrad
from dynagrad.autograd import Variable
import playground

tensor = dynagrad.FloatTensor([[1, 2], [3, 4]])
variable = Variable(tensor, requires_grad=True)
print(variable)

v_out = dynagrad.mean(variable * variable)   # d/dx mean(x*x) = x/2
v_out.backward()
print(variable.grad)

# Modern tensors: a second derivative through create_graph.
x = dynagrad.tensor(3.0, requires_grad=True)
y = x ** 3
(dy,) = dynagrad.autograd.grad(y, x, create_graph=True)
(d2y,) = dynagrad.autograd.grad(dy, x)
print('dy/dx =', dy.item(), ' d2y/dx2 =', d2y.item())

playground.graph(dynagrad.sin(x) * x ** 2 + x)
