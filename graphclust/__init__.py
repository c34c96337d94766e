"""graphclust: graph-centric clustering with side information.

Data and side information are both weighted graphs: a networkx graph of similarities
and a signed graph of must-links (weight > 0) and cannot-links (weight < 0).
"""

from . import errors
from .merge import Lift, contract
from .problem import Problem, as_problem
from .sideinfo import CheckReport, Conflict, SideInfo

__version__ = "0.1.0.dev0"

__all__ = [
    "errors",
    "Problem",
    "as_problem",
    "SideInfo",
    "CheckReport",
    "Conflict",
    "contract",
    "Lift",
]
