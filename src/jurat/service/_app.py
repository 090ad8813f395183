"""The HTTP face of ``Service``: FastAPI routes, Bearer tokens, errors as JSON.

Threat model. Every route but ``/healthz`` needs a token; a missing, unknown or revoked
one is a 401 that says no more. What a token may see is decided by ``Service``
(``campaign_for``, ``job_for``), never here. Every refusal is JSON (``ErrorOut``) naming
the field and the fix; an unexpected failure is a bare 500 whose detail goes to the log
only, since exception text from deeper layers may quote what a contributor must not read.
"""


import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from jurat._version import __version__
from jurat.errors import LedgerError
from jurat.models._artifact import MAX_ARTIFACT_BYTES
from jurat.report import BOARD_CSP
from jurat.service._board import BoardCache
from jurat.service._errors import LEDGER_UNAVAILABLE, RETRY_SOON, ServiceRefusal
from jurat.service._guard import PRINCIPAL_KEY, Guard, service_precheck
from jurat.service._limits import ClientLimits, body_limit
from jurat.service._listing import job_view, list_jobs, shown_status
from jurat.service._models import (
    AdjudicationAccepted,
    AdjudicationRequest,
    ArtifactIn,
    CampaignInfo,
    CampaignList,
    CheckpointOut,
    DecisionRow,
    DecisionsPage,
    ErrorOut,
    JobAccepted,
    JobOut,
    JobRequest,
    JobReview,
    JobsPage,
    ListedDisposition,
    ShownStatus,
)
from jurat.service._query import guarded
from jurat.service._review import job_review
from jurat.service._service import Service
from jurat.service._tokens import Principal, TokenStore

__all__ = ["create_app"]

log = logging.getLogger("jurat.service")

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422)}
_READERS = ("operator", "reviewer")
_RECEIPT_READERS = ("operator", "reviewer", "verifier")
_bearer = HTTPBearer(auto_error=False)
#: The board's page has no script and loads nothing from elsewhere (report/_board.py).
_BOARD_HEADERS = {"Content-Security-Policy": BOARD_CSP, "X-Content-Type-Options": "nosniff"}
#: Every name a request's location may hold: FastAPI's places and the request models'
#: fields. Any other part of a location is a key the caller made up.
_KNOWN_KEYS = frozenset(
    {"body", "query", "path", "header", "limit", "cursor", "campaign_id", "job_id",
     "version", "status", "disposition", "wait"}
    | {name for model in (JobRequest, ArtifactIn, AdjudicationRequest)
       for name in model.model_fields}
)  # fmt: skip


_HINTS = {"status": "; the jobs awaiting adjudication: GET /v1/jobs?disposition=escalate"}


class UntrustedJSON(JSONResponse):
    """JSON whose strings spell ``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``,
    ``\\u0026`` (the same JSON, parsed), sent with ``nosniff``: the reviewer's view carries
    markup the contributor or a judge wrote, and its bytes then hold none that a client
    which sniffs or embeds them could render (docs/service.md, "The reviewer's view")."""

    _SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})

    def __init__(self, content: Any, status_code: int = 200,
                 headers: Mapping[str, str] | None = None, **rest: Any) -> None:
        super().__init__(content, status_code, {"X-Content-Type-Options": "nosniff",
                                                **(headers or {})}, **rest)

    def render(self, content: Any) -> bytes:
        # Outside strings JSON has none of the three characters, so only strings change.
        return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                          separators=(",", ":")).translate(self._SAFE).encode("utf-8")


def _known(loc: Any) -> list[str | int]:
    """A validation error's location with the caller's own keys replaced."""
    parts = loc if isinstance(loc, list | tuple) else ()
    return [p if isinstance(p, int) or p in _KNOWN_KEYS else "<unknown key>" for p in parts]


def create_app(open_service: Callable[[], Any], tokens: TokenStore, *,
               max_body_bytes: int = body_limit(MAX_ARTIFACT_BYTES),
               board: BoardCache | None = None,
               limits: ClientLimits | None = None) -> FastAPI:
    """The app; ``open_service()`` gives the async context manager of the ``Service`` it
    serves, entered when the app starts and left when it stops. Request bodies larger
    than ``max_body_bytes`` are refused (413) as they are read, and tokens are checked
    before any body is read, under ``limits`` (``_guard``). With
    ``board``, the public board is served at ``/board/`` without a token (``_board``)."""
    box: dict[str, Service] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with open_service() as service:
            box["service"] = service
            yield
            box.clear()

    app = FastAPI(title="jurat", version=__version__, lifespan=lifespan,
                  description="The jurat HTTP oracle (docs/service.md).")

    def service() -> Service:
        return box["service"]

    app.add_middleware(Guard, tokens=tokens, limits=limits or ClientLimits(),
                       max_body_bytes=max_body_bytes, precheck=service_precheck(service))

    # Async, as the query guard is: a plain def would cost each request a hop to a worker
    # thread and back for a dictionary read (bench/README.md, "The HTTP oracle").
    async def principal(request: Request, credentials: Annotated[
            HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Principal:
        # The guard looked the token up before the body was read (``_guard``).
        found: Principal | None = request.scope.get(PRINCIPAL_KEY)
        if found is None and credentials is not None:
            found = await anyio.to_thread.run_sync(tokens.lookup, credentials.credentials)
        if found is None:
            raise ServiceRefusal(
                401, "a valid Bearer token is required",
                       fix="send Authorization: Bearer <token from `jurat token create`>")
        return found

    Who = Annotated[Principal, Depends(principal)]

    @app.exception_handler(ServiceRefusal)
    async def refused(_: Request, exc: ServiceRefusal) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.exception_handler(LedgerError)
    async def unavailable(_: Request, exc: LedgerError) -> JSONResponse:
        # Any handler's ledger read or write that failed: its words stay in the log.
        log.warning("a request could not be served by the ledger: %s", exc)
        return JSONResponse(LEDGER_UNAVAILABLE.body(), status_code=503,
                            headers={k.decode(): v.decode() for k, v in RETRY_SOON})

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            # FastAPI reports a body that is not JSON as a validation error located at a
            # character offset, which is no field; docs/service.md answers it with 400.
            at = [p for p in first.get("loc", ()) if isinstance(p, int)]
            return JSONResponse({"error": "the request body is not JSON" + (
                f" (at character {at[0]})" if at else ""), "field": None,
                "fix": "send a JSON body as /openapi.json describes"}, status_code=400)
        # A list index as the service's own refusals spell it: upstream_receipts[0]. A key
        # the schema does not name is the caller's text, never repeated: "<unknown key>".
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in
                        _known(first.get("loc", ())) if p not in ("body", "query", "path")
                        ).lstrip(".")
        detail = [{"loc": _known(e.get("loc", ())), "msg": str(e.get("msg", "")),
                   "type": str(e.get("type", ""))} for e in errors]
        # A validator of _models.py that knows the fix puts it in the error's context.
        ctx = first.get("ctx")
        fix = ctx.get("fix") if isinstance(ctx, dict) else None
        if not fix and isinstance(ctx, dict) and ctx.get("expected"):
            # A closed list: name its values (and where a disposition is asked as a status).
            fix = f"{where}: one of {ctx['expected']}" + _HINTS.get(where, "")
        return JSONResponse({"error": f"{where or 'request'}: {first.get('msg')}",
                             "field": where or None,
                             "fix": str(fix) if fix else "see /openapi.json for the shape",
                             "detail": detail}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI's own refusals (a body that is not JSON: 400), in the same shape.
        return JSONResponse({"error": str(exc.detail), "field": None,
                             "fix": "send a JSON body as /openapi.json describes"},
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def failed(_: Request, exc: Exception) -> JSONResponse:
        log.error("request failed", exc_info=exc)
        return JSONResponse({"error": "internal error (the server's log has the detail)",
                             "field": None, "fix": None}, status_code=500)

    @app.get("/healthz", include_in_schema=True)
    async def healthz() -> dict[str, str]:
        """200 once the server is ready."""
        return {"status": "ok"}

    if board is not None:
        served_board = board

        @app.get("/board", include_in_schema=False)
        async def board_root() -> RedirectResponse:
            return RedirectResponse("/board/")

        # A plain def: FastAPI runs it on a worker thread, where rebuilding the board
        # (reading the ledger, writing files) does not hold up the event loop.
        @app.get("/board/{path:path}", include_in_schema=False)
        def board_file(path: str) -> FileResponse:
            found = served_board.file(path)
            if found is None:
                # Never the path asked for: the board is public, and a link to a made-up
                # path would have this page repeat whatever text the link carries.
                raise ServiceRefusal(404, "no such file on the board", fix="open /board/")
            return FileResponse(found, headers=_BOARD_HEADERS)

    @app.get("/v1/campaigns", responses=_ERRORS, dependencies=guarded(principal))
    async def campaigns(who: Who) -> CampaignList:
        """The campaigns served, with their policy digests."""
        return CampaignList(campaigns=[
            CampaignInfo(id=cid, kind=s.campaign.policy.kind, policy_sha256=s.policy_sha256)
            for cid, s in service().served.items() if who.covers(cid)])

    @app.post("/v1/campaigns/{campaign_id}/jobs", status_code=202, responses=_ERRORS,
              dependencies=guarded(principal))
    async def submit(campaign_id: str, body: JobRequest, who: Who) -> JobAccepted:
        """Submit a job; 202 once it is durable. The same body again gives the same job."""
        svc = service()
        state = await svc.submit(who, campaign_id, body)
        return JobAccepted(job_id=state.job_id, status=shown_status(svc, state)[0])

    @app.get("/v1/jobs", responses=_ERRORS, dependencies=guarded(
        principal, "campaign_id", "status", "disposition", "limit", "cursor"))
    async def jobs(who: Who, campaign_id: Annotated[str | None, Query(max_length=200)] = None,
                   status: ShownStatus | None = None,
                   disposition: ListedDisposition | None = None,
                   limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                   cursor: Annotated[str | None, Query(max_length=18,
                                                       pattern=r"^[0-9]+$")] = None
                   ) -> JobsPage:
        """The jobs the token may read, oldest first, paged: a contributor's own, every
        job of the scope for operator and reviewer. ``?disposition=escalate`` is the
        reviewer's queue: the jobs awaiting an adjudication (a superseded job is in none)."""
        return list_jobs(service(), who, campaign_id=campaign_id, status=status,
                         disposition=disposition, limit=limit,
                         cursor=int(cursor) if cursor else None)

    @app.get("/v1/jobs/{job_id}", responses=_ERRORS, dependencies=guarded(principal, "wait"))
    async def job(job_id: str, who: Who,
                  wait: Annotated[float | None, Query(gt=0, le=60)] = None) -> JobOut:
        """A job's status and, once decided, its latest decision. ``?wait=S`` (at most 60):
        answer as soon as the job is decided or failed, or after S seconds as it is then."""
        svc = service()
        state = svc.job_for(who, job_id, roles=_READERS, owner=True)
        if wait is not None:
            await svc.wait_settled(state, wait)
        return job_view(svc, who, state)

    receipt_doc: dict[int | str, dict[str, Any]] = {
        **_ERRORS, 200: {"content": {"application/json": {"schema": {"type": "object"}}},
                         "description": "The Sigstore bundle, byte for byte."}}

    @app.get("/v1/jobs/{job_id}/receipt", responses=receipt_doc, response_class=Response,
             dependencies=guarded(principal, "version"))
    async def receipt(job_id: str, who: Who,
                      version: Annotated[int | None, Query(ge=1, le=1_000_000)] = None
                      ) -> Response:
        """The latest review's signed bundle, byte for byte (``?version=N``: an earlier one)."""
        svc = service()
        state = svc.job_for(who, job_id, roles=_RECEIPT_READERS, owner=True)
        _, signed = svc.receipt_of(state, version)
        return Response(content=signed, media_type="application/json")

    @app.get("/v1/jobs/{job_id}/proof", responses=_ERRORS, dependencies=guarded(principal))
    async def proof(job_id: str, who: Who) -> dict[str, Any]:
        """The latest receipt's inclusion proof against the latest checkpoint covering it
        (the ``*.proof.json`` `jurat verify --checkpoint` reads)."""
        svc = service()
        state = svc.job_for(who, job_id, roles=_RECEIPT_READERS, owner=True)
        seq, _ = svc.receipt_of(state)
        covered = svc.ledger.checkpoints()
        if not covered or covered[-1].tree_size <= seq:
            raise ServiceRefusal(409, "the receipt is not in a signed checkpoint yet",
                                        fix=f"retry in {svc.checkpoint_interval:g} s")
        result: dict[str, Any] = svc.ledger.prove_entries([seq])[0].model_dump(mode="json")
        return result

    @app.get("/v1/jobs/{job_id}/review", responses=_ERRORS, response_class=UntrustedJSON,
             dependencies=guarded(principal))
    async def review(job_id: str, who: Who) -> JobReview:
        """The reviewer's view (operator and reviewer tokens): the work, the contributor's
        explanation, the task statement, the gates and the operator's record of the hidden
        tests' run, every judge's answer and rationale, the duplicate relation and the
        review history. Text the contributor or a judge wrote is a JSON string marked
        ``"untrusted": true``: show it as text, never as markup."""
        return await job_review(service(), who, job_id)

    @app.post("/v1/jobs/{job_id}/adjudication", status_code=202, responses=_ERRORS,
              dependencies=guarded(principal))
    async def adjudication(job_id: str, body: AdjudicationRequest, who: Who
                           ) -> AdjudicationAccepted:
        """A reviewer settles an escalated decision: a new signed review version.
        ``review_version`` names the version the reviewer read (409 when the job's latest is
        another); a superseded job is refused (409), naming the job that superseded it."""
        version = await service().adjudicate(who, job_id, body.disposition, body.rationale,
                                             rationale_public=body.rationale_public,
                                             review_version=body.review_version)
        return AdjudicationAccepted(job_id=job_id, review_version=version)

    @app.get("/v1/campaigns/{campaign_id}/decisions", responses=_ERRORS,
             dependencies=guarded(principal, "limit", "cursor"))
    async def decisions(campaign_id: str, who: Who,
                        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                        cursor: Annotated[str | None, Query(max_length=18,
                                                            pattern=r"^[0-9]+$")] = None
                        ) -> DecisionsPage:
        """Every receipt of the campaign in ledger order, paged."""
        if who.role not in ("operator", "verifier"):
            raise ServiceRefusal(403, f"a {who.role} token cannot list decisions",
                                        fix="use an operator or verifier token")
        svc = service()
        svc.campaign_for(who, campaign_id)
        return _page(svc, campaign_id, limit, int(cursor) if cursor else None)

    @app.get("/v1/checkpoint", responses=_ERRORS, dependencies=guarded(principal))
    async def checkpoint(who: Who) -> CheckpointOut:
        """The latest signed checkpoint."""
        stored = service().ledger.checkpoints()
        if not stored:
            raise ServiceRefusal(404, "no checkpoint yet", fix="retry once a job is decided")
        latest = stored[-1]
        return CheckpointOut(tree_size=latest.tree_size, root_hash=latest.root_hash,
                             note=latest.note)

    return app


def _page(svc: Service, campaign_id: str, limit: int, cursor: int | None) -> DecisionsPage:
    from jurat.ledger import decode_receipt
    from jurat.receipts import read_statement

    rows: list[DecisionRow] = []
    last: int | None = None
    more = False
    for entry in svc.ledger.entries(kind="receipt", campaign_id=campaign_id, after_seq=cursor):
        if len(rows) == limit:
            more = True
            break
        predicate = read_statement(decode_receipt(entry.payload, seq=entry.seq))["predicate"]
        rows.append(DecisionRow(
            job_id=str(entry.payload.get("adjudicates", entry.job_id)),
            artifact_id=str(predicate["artifact"]["id"]),
            review_version=int(entry.payload["review_version"]),
            decision=predicate["decision"],
            duplicate_of=predicate["inputs"].get("duplicate_of")))
        last = entry.seq
    return DecisionsPage(decisions=rows, next=str(last) if more and last is not None else None)

