"""Factual grounding: SSRF-safe retrieval of allowlisted evidence (docs/grounding.md).

``Fetcher(policy).fetch(url)`` is the only way jurat reads a URL: allowlisted origins,
names resolved once and connections pinned, private and metadata addresses refused,
redirects re-checked, size, time and content-type limits. Every refusal is a
:class:`RetrievalRefused` with a named ``reason``. The fold of claim labels lives in
``jurat.fold`` (``fold_claim``, ``grounding_outcome``). A :class:`Reference` pins one
piece of evidence (source, version, span, digest), from a capture or a fixed reference set.
"""

from jurat.grounding._addresses import AddressClass, IPAddress, classify, parse_ip, permitted
from jurat.grounding._errors import REASONS, RefusalReason, RetrievalRefused
from jurat.grounding._evidence import (
    EVIDENCE_KIND,
    Reference,
    Span,
    excerpt,
    from_capture,
    to_evidence_item,
)
from jurat.grounding._fetch import Capture, Fetcher, Resolver, Retrieved, system_resolver
from jurat.grounding._policy import (
    DEFAULT_CONTENT_TYPES,
    Origin,
    RetrievalPolicy,
    Target,
    check_url,
)

__all__ = [
    "DEFAULT_CONTENT_TYPES",
    "EVIDENCE_KIND",
    "REASONS",
    "AddressClass",
    "Capture",
    "Fetcher",
    "IPAddress",
    "Origin",
    "Reference",
    "RefusalReason",
    "Resolver",
    "Retrieved",
    "RetrievalPolicy",
    "RetrievalRefused",
    "Span",
    "Target",
    "check_url",
    "classify",
    "excerpt",
    "from_capture",
    "parse_ip",
    "permitted",
    "system_resolver",
    "to_evidence_item",
]
