"""The campaign file: read, checked and turned into records (docs/campaign-format.md).

``load_campaign`` reads a campaign TOML file into the frozen records of ``jurat.models``
and reports every problem in it at once, each naming the file, the line, the field and the
fix: the file's shape, the paths and endpoints it names, the records' own validation
(pydantic's errors in plain words, ``_translate``) and the semantic checks. A dataset row is
checked as the ``[[artifacts]]`` entry it stands for (``row_spec``). Every file a campaign
names (artifacts, tests, datasets, references, upstream keys) is read through one confined,
capped reader, ``read_inside`` and the functions built on it, whoever reads it: intake, the
grounding references, the service. So is the campaign's reference key (``reference_key``),
which keys the digests of its reference material in every public output.

This package stands above the records and the deterministic checks (whose rules it applies
at load, so that nothing runs first) and below everything that runs a campaign.
"""

from jurat.campaign._files import (
    MAX_CAMPAIGN_BYTES,
    campaign_line,
    campaign_path_problem,
    open_inside,
    read_inside,
    read_lines,
    read_tests,
    read_text,
    resolve_inside,
    too_large,
)
from jurat.campaign._load import campaign_from_dict, load_campaign
from jurat.campaign._reference_key import (
    REFERENCE_KEY_BYTES,
    REFERENCE_KEY_DIR,
    ReferenceKey,
    read_reference_key,
    reference_key,
    reference_key_path,
)
from jurat.campaign._rows import (
    ROW_KEYS,
    RowMap,
    RowValues,
    csv_header_problems,
    csv_row_values,
    row_spec,
)

__all__ = [
    "MAX_CAMPAIGN_BYTES",
    "REFERENCE_KEY_BYTES",
    "REFERENCE_KEY_DIR",
    "ROW_KEYS",
    "ReferenceKey",
    "RowMap",
    "RowValues",
    "campaign_from_dict",
    "campaign_line",
    "campaign_path_problem",
    "csv_header_problems",
    "csv_row_values",
    "load_campaign",
    "open_inside",
    "read_inside",
    "read_lines",
    "read_reference_key",
    "read_tests",
    "read_text",
    "reference_key",
    "reference_key_path",
    "resolve_inside",
    "row_spec",
    "too_large",
]
