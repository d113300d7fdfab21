"""Helpers for tests that run one builder with dynagrad and with torch (not collected)."""


def outcome(fn):
    """``('ok', result)`` or ``(exception type, message)``."""
    try:
        return 'ok', fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)


def dynagrad_spelling(message):
    """torch's message as dynagrad words it (its own name where torch names itself)."""
    return (message.replace('PyTorch', 'dynagrad').replace('Torch', 'dynagrad')
            .replace('torch.', 'dynagrad.'))
