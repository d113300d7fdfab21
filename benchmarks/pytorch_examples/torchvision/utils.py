"""save_image: the examples save sample grids; the check has no use for them."""


def save_image(tensor, fp, *args, **kwargs):
    pass
