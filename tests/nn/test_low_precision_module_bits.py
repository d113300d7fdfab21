"""Module-level pieces of bfloat16 and state dicts that PyTorch programs rely on."""
import numpy as np
import pytest
import torch

import dynagrad as dg

pytest.importorskip('ml_dtypes')


def test_module_bfloat16_and_legacy_type():
    d, t = dg.nn.Linear(3, 2).bfloat16(), torch.nn.Linear(3, 2).bfloat16()
    assert str(d.weight.dtype).split('.')[1] == str(t.weight.dtype).split('.')[1] == 'bfloat16'
    assert dg.BFloat16Tensor([1.5]).dtype == dg.bfloat16
    assert torch.BFloat16Tensor([1.5]).dtype == torch.bfloat16


def test_state_dict_metadata_records_module_versions_as_torch():
    d = dg.nn.Sequential(dg.nn.Linear(2, 2), dg.nn.BatchNorm1d(2), dg.nn.LayerNorm(2))
    t = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2),
                            torch.nn.LayerNorm(2))
    assert d.state_dict()._metadata == t.state_dict()._metadata


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_sees_nan_made_in_bfloat16():
    x = dg.tensor([0.0, 1.0], dtype=dg.bfloat16, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"DivBackward0. produced nan"):
        with dg.autograd.detect_anomaly():
            (x / x).sum().backward()


def test_optimizer_state_cast_to_bfloat16_params_on_load():
    p = dg.nn.Parameter(dg.ones(2, dtype=dg.bfloat16))
    opt = dg.optim.Adam([p])
    state = {'state': {0: {'step': dg.tensor(1.0), 'exp_avg': dg.ones(2),
                           'exp_avg_sq': dg.ones(2)}},
             'param_groups': opt.state_dict()['param_groups']}
    opt.load_state_dict(state)
    assert opt.state[p]['exp_avg'].dtype == dg.bfloat16
    assert opt.state[p]['step'].dtype == dg.float32


def test_multihead_attention_takes_a_bfloat16_float_mask():
    m = dg.nn.MultiheadAttention(4, 2).bfloat16()
    q = dg.ones(3, 1, 4, dtype=dg.bfloat16)
    mask = dg.zeros(3, 3, dtype=dg.bfloat16)
    out, _ = m(q, q, q, attn_mask=mask)
    assert out.dtype == dg.bfloat16 and tuple(out.shape) == (3, 1, 4)
    assert np.isfinite(out.float().detach().numpy()).all()
