"""``dynagrad.backends.mps``: Apple's Metal backend, which dynagrad does not have."""


def is_available():
    return False


def is_built():
    return False


def is_macos_or_newer(major, minor):
    raise RuntimeError('Cannot execute isOnMacOSorNewer() without MPS backend.')


def is_macos13_or_newer(minor=0):
    raise RuntimeError('Cannot execute isOnMacOSorNewer() without MPS backend.')
