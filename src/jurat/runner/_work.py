"""What counts as the same piece of work, so that it is paid once, to its first submitter.

Issue 37. A payment rule keyed on bytes pays a copy again for one blank added, a comment,
a renamed variable. So a campaign declares what "the same work" is, by a versioned
normalisation of the artifact (``jurat.work/v1``), and the digest of the normalised form
is the work's identity: in the ledger (each submission's ``work_claimed`` entry, whose
order says who was first), in the receipt (``inputs.work``) and in the signer's
settlement key.

Threat model. The normalisation reads the judged party's text, on the host: it must never
run it, and nothing it reads may abort a run. So it only tokenises and parses (bounded by
the checks' limits, checks/_guard.py: a source that is too large or too deep for a
stronger form falls back to a weaker one, recorded as such), and it digests, never
records, what it read. The opt-in forms import the checks when they are used: a campaign
without Python pays nothing for them at start-up. A
normalisation that is too strong would merge different work (one payment for two honest
solutions); every form here keeps what changes behaviour: the token stream keeps every
token but comments and line breaks inside brackets, the AST form every node but
docstrings and the names of locals.

The rules, by ``rule`` (recorded as ``jurat.work/v1/<rule>``):

- ``bytes``: the artifact's own digest (today's rule; pairs always use it);
- ``text``: the UTF-8 of the text in Unicode NFC, line endings as ``\\n``, surrounding
  whitespace removed;
- ``python-tokens``: Python's token stream without comments, encoding, non-logical line
  breaks and indentation widths (an ``INDENT`` counts, not how wide it is), string literals
  by value (``'a'`` and ``"a"`` are one token); a source that does not tokenise is ``text``;
- ``python-ast`` (opt-in): the syntax tree without docstrings, with each function's
  parameters and local names renamed in order of first appearance; a source that does not
  parse, or lies beyond the bounds, is ``python-tokens``;
- ``answer`` (opt-in): the answer's canonical value as the equivalence checks read it
  (``_answers.extract_final_answer``: ``1,200`` and ``$1200`` are one answer); a text with
  no confidently read answer is ``text``.

``default`` picks ``python-tokens`` for Python and ``text`` for other text.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
import unicodedata
from collections.abc import Sequence
from typing import get_args

from pydantic import JsonValue

from jurat.canonical import canonical_json, digest_json
from jurat.ledger import Entry
from jurat.models import Artifact, Frozen, SameWork

__all__ = ["WORK_RULES", "WORK_VERSION", "Work", "WorkRule", "duplicate_of", "same_work",
           "work_claim", "work_key", "work_of"]

WORK_VERSION = "jurat.work/v1"
WorkRule = SameWork
"""What a campaign may declare (``[campaign] same_work``)."""
WORK_RULES: tuple[str, ...] = get_args(SameWork)
_PYTHON = "text/x-python"
#: The largest source tokenised (the checks' own bound on a source, checks/_guard.py).
_MAX_SOURCE_BYTES = 256 * 1024
_SKIPPED_TOKENS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING,
                             tokenize.ENDMARKER})


class Work(Frozen):
    """The work an artifact is, under a campaign's rule."""

    rule: str
    """``jurat.work/v1/<rule>``: the form that applied (a weaker one when a stronger one
    could not read the artifact)."""
    sha256: str
    """Lowercase hex SHA-256 of the normalised form (of the artifact's digest for ``bytes``)."""


def same_work(text: str | None, media_type: str, artifact_sha256: str,
              rule: WorkRule = "default") -> Work:
    """The work ``text`` is under ``rule``; ``text`` None (a pair) is always ``bytes``."""
    if text is None or rule == "bytes":
        return _work("bytes", artifact_sha256.removeprefix("sha256:").encode())
    if rule == "default":
        rule = "python-tokens" if media_type == _PYTHON else "text"
    if rule == "answer":
        from jurat.checks import extract_final_answer

        extracted = extract_final_answer(text)
        if extracted is not None:
            return _work("answer", extracted.value.encode())
        rule = "text"
    if rule == "python-ast":
        fingerprint = _ast_fingerprint(text)
        if fingerprint is not None:
            return _work("python-ast", fingerprint)
        rule = "python-tokens"
    if rule == "python-tokens":
        tokens = _token_stream(text)
        if tokens is not None:
            return _work("python-tokens", tokens)
    return _work("text", _text(text).encode())


def _work(rule: str, form: bytes) -> Work:
    return Work(rule=f"{WORK_VERSION}/{rule}", sha256=hashlib.sha256(form).hexdigest())


def _text(text: str) -> str:
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()


def _token_stream(text: str) -> bytes | None:
    """The token stream as canonical JSON, or None when ``text`` does not tokenise."""
    if len(text.encode("utf-8", "surrogatepass")) > _MAX_SOURCE_BYTES:
        return None
    out: list[list[object]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(_text(text) + "\n").readline):
            if token.type in _SKIPPED_TOKENS:
                continue
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE):
                out.append([token.type])
            elif token.type == tokenize.STRING:
                out.append([token.type, _string_value(token.string)])
            else:
                out.append([token.type, token.string])
    except (tokenize.TokenError, SyntaxError, IndentationError, RecursionError, MemoryError):
        return None
    return canonical_json(out)


def _string_value(literal: str) -> str:
    """A string literal by its value (type and repr), as written when it has none (an
    f-string)."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return literal
    return f"{type(value).__name__}:{value!r}"


def _ast_fingerprint(text: str) -> bytes | None:
    """The tree without docstrings and with locals renamed, or None when it cannot be read
    within the bounds."""
    from jurat.checks._guard import BeyondBounds, check_depth, check_size

    try:
        check_size(text)
        tree = ast.parse(text)
        check_depth(tree)
        _Canonical().visit(tree)
        return ast.dump(tree, annotate_fields=True, include_attributes=False).encode()
    except (BeyondBounds, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class _Canonical(ast.NodeTransformer):
    """Drops docstrings and renames each function's parameters and locals ``_0``, ``_1``, …
    in order of first appearance; module-level names, attributes and globals keep theirs
    (they are the interface the tests call)."""

    def __init__(self) -> None:
        self._scopes: list[dict[str, str]] = []

    def _body(self, node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
              ) -> None:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self._body(node)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self._body(node)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        self._body(node)
        arguments = node.args
        # Decorators and defaults are evaluated in the enclosing scope.
        for outer in (*node.decorator_list, *arguments.defaults,
                      *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(outer)
        scope: dict[str, str] = {}
        self._scopes.append(scope)
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                    *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)):
            arg.arg = scope.setdefault(arg.arg, f"_{len(scope)}")
            arg.annotation = None
            arg.type_comment = None
        node.returns = None
        node.body = [self.visit(stmt) for stmt in node.body]
        self._scopes.pop()
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if self._scopes:
            scope = self._scopes[-1]
            if isinstance(node.ctx, ast.Store) or node.id in scope:
                node.id = scope.setdefault(node.id, f"_{len(scope)}")
        return node


# --------------------------------------------------------------------------- who was first


def work_of(rule: WorkRule, artifact: Artifact) -> Work:
    """The work ``artifact`` is under ``rule`` (a pair, as its digest: both parts are
    judged together)."""
    paired = artifact.a is not None or artifact.b is not None
    return same_work(None if paired else artifact.text, artifact.media_type,
                     artifact.sha256, rule)


def work_key(campaign_id: str, task: str | None, work: Work) -> str:
    """The ledger job id of a work's ``work_claimed`` entries: one per (campaign, task,
    rule, normalised digest), so the first entry under it is the work's first submission.
    Per task: one short answer to two questions is two pieces of work."""
    return digest_json({"work_claimed": campaign_id, "task": task, "rule": work.rule,
                        "sha256": work.sha256})


def work_claim(job: str, work: Work, contributor: str | None) -> dict[str, JsonValue]:
    """The payload of a ``work_claimed`` entry: which job submitted the work, and for whom."""
    return {"job": job, "contributor": contributor, "rule": work.rule,
            "work_sha256": work.sha256}


def duplicate_of(claims: Sequence[Entry], job: str, contributor: str | None) -> str | None:
    """The job whose work ``job`` copies: the first claim's, when that job is another
    contributor's (a contributor's own resubmission is its own work, paid once by the
    signer's settlement key); None when ``job`` is first or no claim is recorded."""
    if not claims:
        return None
    first = claims[0].payload
    owner = first.get("job")
    if owner == job or first.get("contributor") == contributor or not isinstance(owner, str):
        return None
    return owner
