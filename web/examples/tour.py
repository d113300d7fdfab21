# The tour of the five seed posts (python -m dynagrad.examples.tour), run in the page.
from dynagrad.examples import tour

tour.main()
