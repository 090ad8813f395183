"""Agreement with gold labels (``jurat calibrate``): per judge and for the folded decision.

Seed 001 lists agreement with human labels as open work; this measures it on verified
receipts, so a calibration is only ever computed from evidence a stranger can check.
"""

from jurat.calibrate._agreement import UNDECIDED, Agreement, Interval, agreement
from jurat.calibrate._gold import GOLD_LABELS, Gold, load_gold, normalise_label
from jurat.calibrate._labels import DECISION, rater_labels
from jurat.calibrate._report import SETTLED, CalibrationReport, calibrate

__all__ = [
    "DECISION",
    "GOLD_LABELS",
    "SETTLED",
    "UNDECIDED",
    "Agreement",
    "CalibrationReport",
    "Gold",
    "Interval",
    "agreement",
    "calibrate",
    "load_gold",
    "normalise_label",
    "rater_labels",
]
