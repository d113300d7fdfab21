"""The libraries whose test suites compat.run measures, each at a pinned release.

The selection of each keeps its torch run to a few minutes on a CPU and leaves out what needs
a network (model hubs), a GPU, or compiled extensions built against torch's C++ ABI.
"""
import dataclasses

# The CPU build: any other spelling would pull a multi-gigabyte CUDA build.
TORCH_REQUIREMENT = 'torch==2.13.0'


@dataclasses.dataclass(frozen=True)
class Library:
    name: str                 # the PyPI distribution
    version: str
    source: object            # 'sdist' (tests ship in it) or (git URL, tag or commit)
    tests: tuple              # paths relative to the source folder
    why: str
    k: str = ''               # pytest -k expression
    deps: tuple = ()          # test dependencies beyond pytest
    pytest_args: tuple = ()
    env: dict = dataclasses.field(default_factory=dict)
    timeout: int = 120        # seconds per test (pytest-timeout)
    run_timeout: int = 1800   # seconds for one whole run

    @property
    def requirement(self):
        return f'{self.name}=={self.version}'


LIBRARIES = [
    Library(
        'skorch', '1.1.0', 'sdist',
        ('skorch/tests/test_classifier.py', 'skorch/tests/test_regressor.py',
         'skorch/tests/test_dataset.py', 'skorch/tests/test_history.py',
         'skorch/tests/test_setter.py', 'skorch/tests/test_toy.py',
         'skorch/tests/test_utils.py', 'skorch/tests/test_scoring.py'),
        'scikit-learn wrapper: training loops, DataLoader, pickling, predict_proba. '
        'test_net.py (over 10 minutes), the hub/logger integrations and the multiprocessing '
        'history tests (they wait on a spawned process for minutes) are left out.',
        k='not Multiprocessing', deps=('pandas', 'flaky', 'scipy'),
        pytest_args=('-o', 'addopts=')),    # setup.cfg asks for pytest-cov
    Library(
        'pytorch_optimizer', '4.1.0', 'sdist',
        ('tests/optimizers', 'tests/utils', 'tests/test_base.py', 'tests/test_gradients.py',
         'tests/test_general_optimizer_parameters.py', 'tests/test_create_optimizer.py',
         'tests/test_loss_functions.py', 'tests/test_lr_schedulers.py',
         'tests/test_wrapper_optimizers.py'),
        'About 100 optimizers, LR schedulers and losses written against torch.optim: each '
        "optimizer's own tests; test_optimizers.py and test_optimizer_variants.py (every "
        'optimizer trained on every variant, over 30 minutes on 2 cores) are left out.',
        pytest_args=('-o', 'addopts=')),    # pyproject asks for pytest-cov
    Library(
        'einops', '0.8.2', 'sdist', ('einops/tests',),
        'rearrange/reduce/repeat/pack/einsum and the nn layers through einops\'s torch '
        'backend.',
        env={'EINOPS_TEST_BACKENDS': 'torch'}),
    Library(
        'gpytorch', '1.15.2', 'sdist',
        ('test/kernels/test_rbf_kernel.py', 'test/means',
         'test/likelihoods/test_gaussian_likelihood.py',
         'test/examples/test_simple_gp_regression.py'),
        'Gaussian processes on linear_operator: kernels, means, likelihoods and exact GP '
        'regression end to end (Cholesky, CG, Lanczos, custom autograd Functions).'),
    Library(
        'linear_operator', '0.6.1', 'sdist',
        ('test/functions', 'test/operators/test_dense_linear_operator.py',
         'test/operators/test_diag_linear_operator.py',
         'test/operators/test_triangular_linear_operator.py'),
        'Structured matrices for GPyTorch and BoTorch: __torch_function__ dispatch, '
        'batched linear algebra, custom autograd Functions.'),
    Library(
        'torchdiffeq', '0.2.5',
        ('https://github.com/rtqichen/torchdiffeq', '657943acefa826ef04c025ebeb1ff5e9d60dc268'),
        ('tests/api_tests.py', 'tests/event_tests.py', 'tests/gradient_tests.py'),
        'ODE solvers with the adjoint method (autograd.Function, grad of grads). The '
        'repository has no release tags and the sdist no tests: the commit is the newest of '
        'the default branch; odeint_tests.py and norm_tests.py (minutes each) are left out.',
        pytest_args=('-o', 'python_files=*_tests.py')),
    Library(
        'x-transformers', '2.16.1', ('https://github.com/lucidrains/x-transformers', '2.16.1'),
        ('tests/test_x_transformers.py',),
        'Configurable transformer blocks (attention variants, rotary embeddings, memory, '
        'generation) built from torch.nn and einops.',
        deps=('einops',)),
    Library(
        'kornia', '0.8.2', ('https://github.com/kornia/kornia', 'v0.8.2'),
        ('tests/color',),
        'Differentiable computer vision: convolutions, colour spaces, losses, gradcheck of '
        'each; the default device and dtype (cpu, float32).',
        pytest_args=('-o', 'addopts=')),
    Library(
        'pyro-ppl', '1.9.1', ('https://github.com/pyro-ppl/pyro', '1.9.1'),
        ('tests/poutine', 'tests/nn', 'tests/optim', 'tests/params',
         'tests/test_primitives.py'),
        'Probabilistic programming: effect handlers, pyro.nn modules, optimizers wrapping '
        'torch.optim, the parameter store; torch.distributions underneath.',
        deps=('scipy',)),
    Library(
        'accelerate', '1.14.0', ('https://github.com/huggingface/accelerate', 'v1.14.0'),
        ('tests/test_utils.py', 'tests/test_data_loader.py', 'tests/test_optimizer.py',
         'tests/test_scheduler.py', 'tests/test_kwargs_handlers.py'),
        'Hugging Face training wrapper on one CPU process: data loaders, optimizer and '
        'scheduler wrapping, hooks, state utilities.',
        deps=('parameterized', 'pytest-subtests', 'transformers')),
    Library(
        'transformers', '5.25.0', ('https://github.com/huggingface/transformers', 'v5.25.0'),
        ('tests/models/gpt2/test_modeling_gpt2.py', 'tests/models/bert/test_modeling_bert.py',
         'tests/models/llama/test_modeling_llama.py', 'tests/generation/test_logits_process.py',
         'tests/generation/test_stopping_criteria.py'),
        'Tiny random GPT-2, BERT and Llama configs through the common model tests (forward, '
        'backward, save/load, generate) and the generation utilities; the sdist has only '
        'the shared mixins, so the tests come from the release tag. Tests marked slow (the '
        'ones that download checkpoints) stay skipped, and HF_HUB_OFFLINE=1 keeps the rest '
        'off the hub.',
        k='not compile and not export and not Integration',
        deps=('parameterized', 'pytest-order', 'pytest-rerunfailures', 'timeout-decorator')),
]
