"""``dynagrad._dynamo.testing``: ``CompileCounter``, the backend libraries' tests hand to
``compile`` to count compiled frames. dynagrad's compile makes its own programs and hands
each one to a callable backend as a ``GraphModuleView`` (``graph.nodes``, ``forward``): a
counter counts the programs made (one per frame and guard set, as PyTorch's frames), and
the ops in them."""


class CompileCounter:
    def __init__(self):
        self.clear()

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        for node in gm.graph.nodes:
            if 'call' in node.op:
                self.op_count += 1
        return gm.forward

    def clear(self):
        self.frame_count = 0
        self.op_count = 0
