"""The campaign file: read, checked and turned into records (docs/campaign-format.md).

``load_campaign`` reads a campaign TOML file into the frozen records of ``jurat.models``
and reports every problem in it at once, each naming the file, the line, the field and the
fix: the file's shape, the paths and endpoints it names, the records' own validation
(pydantic's errors in plain words, ``_translate``) and the semantic checks. A dataset row is
checked as the ``[[artifacts]]`` entry it stands for (``row_spec``). This package stands
above the records and the deterministic checks (whose rules it applies at load, so that
nothing runs first) and below everything that runs a campaign.
"""

from jurat.campaign._load import (
    MAX_CAMPAIGN_BYTES,
    campaign_from_dict,
    campaign_line,
    load_campaign,
)
from jurat.campaign._rows import ROW_KEYS, csv_header_problems, csv_row_values, row_spec

__all__ = [
    "MAX_CAMPAIGN_BYTES",
    "ROW_KEYS",
    "campaign_from_dict",
    "campaign_line",
    "csv_header_problems",
    "csv_row_values",
    "load_campaign",
    "row_spec",
]
