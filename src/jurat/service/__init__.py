"""The HTTP oracle (`jurat serve`): jobs, tokens, adjudication, upstream receipts.

Seed 000's "off-chain oracle": jobs come in over HTTP, are recorded in the ledger before
they are acknowledged (the ledger is the durable queue of record), run through the same
runner as `jurat run`, and end in a signed receipt; escalations are settled by reviewers
as new review versions. docs/service.md has the contract; FastAPI and uvicorn are the
``serve`` extra, imported only when the server starts.
"""

from jurat.service._errors import ServiceRefusal
from jurat.service._serve import load_served, serve_forever
from jurat.service._service import Service
from jurat.service._tokens import ALL_CAMPAIGNS, ROLES, Principal, Role, TokenStore

__all__ = [
    "ALL_CAMPAIGNS",
    "ROLES",
    "Principal",
    "ServiceRefusal",
    "Role",
    "Service",
    "TokenStore",
    "load_served",
    "serve_forever",
]
