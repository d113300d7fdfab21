"""The example, as a script for the launcher."""
from dynagrad.examples import ddp_digits

ddp_digits.main()
