"""``dynagrad.hub``: the names of ``torch.hub``, for the libraries that import them at
module level (kornia imports ``download_url_to_file`` and ``get_dir``).

The cache directory rules are PyTorch's (``set_dir``, else ``$TORCH_HOME/hub``, else
``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``), so a file PyTorch downloaded
is found where it put it. dynagrad itself never reaches the network: ``download_url_to_file``
and friends raise when called, naming the file to fetch by other means, and
``load_state_dict_from_url`` loads the file when it already sits in the cache.
"""
import os
import re
from urllib.parse import urlparse

from .serialization import load as _load

__all__ = ['download_url_to_file', 'get_dir', 'help', 'list', 'load', 'load_state_dict_from_url',
           'set_dir']

ENV_TORCH_HOME = 'TORCH_HOME'
ENV_XDG_CACHE_HOME = 'XDG_CACHE_HOME'
DEFAULT_CACHE_DIR = '~/.cache'
HASH_REGEX = re.compile(r'-([a-f0-9]*)\.')

_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), 'torch')))


def get_dir():
    """The hub cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), 'hub')


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _no_network(what, url):
    raise RuntimeError(
        f'dynagrad.hub.{what}: dynagrad does not download ({url}). Fetch the file by other '
        f'means into {os.path.join(get_dir(), "checkpoints")} (load_state_dict_from_url reads '
        'it from there) or load it with dynagrad.load(path).')


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    _no_network('download_url_to_file', url)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The checkpoint of ``url`` from the hub cache, where PyTorch would have saved it;
    raises when it is not there, since dynagrad does not download."""
    model_dir = model_dir or os.path.join(get_dir(), 'checkpoints')
    filename = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        _no_network('load_state_dict_from_url', url)
    return _load(cached, map_location=map_location, weights_only=weights_only)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    _no_network('list', github)


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    _no_network('help', github)


def load(repo_or_dir, model, *args, source='github', trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    _no_network('load', repo_or_dir)
