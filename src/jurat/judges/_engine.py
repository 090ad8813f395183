"""The N-sample engine: plan every sample before dispatch, then dispatch within limits.

Rules (docs/design.md, "The pipeline"; seeds 000 and 001):

- The plan — every (judge, criterion, sample k), with N from the policy and pairwise
  presentation orders from a seeded RNG — is fixed before the first call.
- A sample already recorded (``existing``) is never sampled again: a completed sample is
  final, errors included.
- Only transport failures that produced no answer are retried, with backoff, as attempts of
  the same sample; a retry never adds a sample.
- Every call has a timeout; bounded concurrency overall and per endpoint, and per-endpoint
  request and token rates.

The engine is a resource, owned by whoever opens it (``async with Engine() as engine``)
and closed there: a run opens one for all its jobs and passes it down. There is no
module-level engine; ``run_samples`` and ``complete_text`` without an ``engine`` open and
close one for that call alone.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, Self

from jurat.errors import (
    BudgetExhausted,
    ConfigError,
    JudgeOutputError,
    JuratError,
    TransportError,
)
from jurat.fold import canonical_preference
from jurat.judges._artifact_job import ArtifactJob
from jurat.judges._breaker import Breaker
from jurat.judges._budget import BudgetGuard
from jurat.judges._curtail import curtailed_groups, draw_curtailed
from jurat.judges._debug import SampleDebug
from jurat.judges._destinations import check_destinations
from jurat.judges._factory import make_judge
from jurat.judges._general import general_ids
from jurat.judges._http import HTTPJudge, JudgeSession
from jurat.judges._plan import PlannedSample, index_existing, judge_bundle, plan_samples
from jurat.judges._protocol import (
    RETRYABLE_KINDS,
    CallKind,
    Judge,
    JudgeCall,
    Prompt,
    RawResponse,
    TransportFailure,
)
from jurat.judges._ratelimit import EndpointLimiter
from jurat.judges._replay import ReplayRecord, ReplayRecorder, execution_key
from jurat.judges._spacing import Dispatched, Spacing, spacing_of
from jurat.judges._telemetry import SampleTelemetry
from jurat.judges._validate import interpret
from jurat.models import (
    Artifact,
    EvidenceBundle,
    GateOutcome,
    JudgeConfig,
    Policy,
    Vote,
)

__all__ = ["Engine", "OnRetry", "OnVote", "limit_share"]

OnVote = Callable[[Vote], Awaitable[None] | None]
OnRetry = Callable[[str, int, str], Awaitable[None] | None]
OnDebug = Callable[[Vote, SampleDebug], Awaitable[None] | None]


def _label(vote: Vote, kind: str) -> str:
    if kind == "criterion":
        # Seed 001 §1: an errored sample votes unsure.
        return str(vote.answer["verdict"]) if vote.answer else "unsure"
    if kind == "claim":  # seed 000 grounding: an errored sample is unresolved
        return str(vote.answer["label"]) if vote.answer else "unresolved"
    if vote.answer is None:
        return "PARSE_ERROR" if kind == "equivalence" else "error"
    if kind == "pairwise":
        return canonical_preference(vote) or "error"
    if kind == "rubric":
        return str(vote.answer["disposition"])
    return str(vote.answer["decision"])


async def _call(callback: Callable[..., Any] | None, *args: Any) -> None:
    if callback is None:
        return
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


def _retryable(error: JuratError | None, attempts: int, retries: int) -> bool:
    """Seed 000: only a transport failure that produced no answer is retried, within budget."""
    return (
        isinstance(error, TransportError) and error.kind in RETRYABLE_KINDS and attempts <= retries
    )


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


class _Attempts:
    """The outcome of one sample's attempts."""

    __slots__ = ("attempts", "charged", "dispatched", "error", "latency", "raw")

    def __init__(self) -> None:
        self.attempts = 0
        self.dispatched: float | None = None
        self.latency = 0.0
        self.raw: RawResponse | None = None
        self.error: JuratError | None = None
        self.charged: dict[str, int] | None = None
        """Under a ``[budget]``: the reservation charged for a response that reported no
        usage that counts, recorded as its usage so the ledger holds what was charged."""

    def usage(self) -> dict[str, int]:
        """The usage to record: what the budget charged, else what the endpoint reported."""
        if self.charged is not None:
            return self.charged
        return dict(self.raw.usage) if self.raw is not None else {}


def limit_share(limit: int, shard: int, shards: int) -> int:
    """Process ``shard``'s part of ``limit`` when ``shards`` processes share it: the parts
    differ by at most one and add up to ``limit`` (each at least 1: callers run no more
    processes than the smallest limit)."""
    return max(1, limit // shards + (1 if shard < limit % shards else 0))


class Engine:
    """Dispatch state shared by every job of one run: adapters, limits, concurrency.

    Use it as ``async with Engine() as engine:``; leaving the block closes every adapter and
    the one HTTP session (``JudgeSession``: aiohttp, opened on the first call) its HTTP
    judges share. Its semaphores, adapters and session belong to the event loop that first
    uses them.

    Endpoint limits are keyed by (destination, max_concurrency, rpm, tpm), so judges that
    declare the same endpoint and limits share one allowance.

    ``max_concurrency`` bounds calls in flight over every endpoint; ``backoff_s`` is the first
    retry's base wait, doubled per attempt up to ``backoff_max_s``, with jitter (a server's
    Retry-After wins, up to a minute); ``factory`` builds adapters; ``sleep`` is injectable
    for tests; ``recorder`` writes every attempt's raw response for the replay judge.
    """

    def __init__(
        self,
        *,
        max_concurrency: int = 256,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        factory: Callable[[JudgeConfig], Judge] = make_judge,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        recorder: ReplayRecorder | None = None,
        share: tuple[int, int] = (0, 1),
    ) -> None:
        shard, shards = share
        if not 0 <= shard < shards:
            raise ValueError(f"share {share}: want (k, n) with 0 <= k < n")
        self.share = share
        """This engine's part of every limit: process k of n running one campaign
        (``jurat run --workers n``) keeps ``limit_share(limit, k, n)`` of each, so the n
        processes together stay within what the campaign declares."""
        max_concurrency = limit_share(max_concurrency, shard, shards)
        self.max_concurrency = max_concurrency
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.recorder = recorder
        self._factory = factory
        self._sleep = sleep
        self._global = asyncio.Semaphore(max_concurrency)
        self._judges: dict[JudgeConfig, Judge] = {}
        self._http = JudgeSession()
        self._limiters: dict[tuple[str, int, int | None, int | None], EndpointLimiter] = {}
        self._rng = random.Random()
        self._breaker = Breaker()
        self.budget: BudgetGuard | None = None
        """The campaign's ``[budget]``, set by the run that opens the engine: every paid
        attempt reserves its worst case before it is sent (judges/_budget.py)."""

    def judge(self, config: JudgeConfig) -> Judge:
        """The adapter for ``config`` (one per configuration, reused across jobs)."""
        judge = self._judges.get(config)
        if judge is None:
            judge = self._judges[config] = self._factory(config)
            if isinstance(judge, HTTPJudge):
                judge.share(self._http)
        return judge

    def limiter(self, config: JudgeConfig) -> EndpointLimiter:
        """The limiter of the configuration's endpoint."""
        key = (config.destination, config.max_concurrency, config.rpm, config.tpm)
        limiter = self._limiters.get(key)
        if limiter is None:
            shard, shards = self.share
            rpm, tpm = config.rpm, config.tpm
            limiter = EndpointLimiter(
                limit_share(config.max_concurrency, shard, shards),
                rpm=None if rpm is None else limit_share(rpm, shard, shards),
                tpm=None if tpm is None else limit_share(tpm, shard, shards),
            )
            self._limiters[key] = limiter
        return limiter

    async def aclose(self) -> None:
        """Close every adapter, then the HTTP session and its connections."""
        judges, self._judges = self._judges, {}
        for judge in judges.values():
            await judge.aclose()
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _backoff(self, attempt: int, failure: JuratError) -> float:
        retry_after = failure.retry_after if isinstance(failure, TransportFailure) else None
        if retry_after is not None:
            return min(retry_after, max(self.backoff_max_s, 60.0))
        base = min(self.backoff_max_s, self.backoff_s * 2.0 ** (attempt - 1))
        return base * (0.5 + self._rng.random() / 2)  # jitter spreads a panel's retries

    def preflight(self, policy: Policy, artifacts: Sequence[Artifact] = ()) -> None:
        """Everything that can refuse a run's calls, checked before the first one is sent.

        Destinations allowed (seed 000), every adapter built (known providers), its own checks
        (an API key set, a replay file readable) and the kinds the plan asks of it
        supported; the ``[subject]``'s adapter and checks too. A run calls this for all its
        artifacts before it writes or sends anything (runner/_run.py, ``preflight``), so a
        configuration problem exits 3 with the ledger untouched. Raises ConfigError (or
        DestinationError, DependencyError). The adapters stay built for the run; their
        own checks are cached (a replay file is read once).

        The destination rule is intake's (judges/_destinations.py), applied again here for
        callers that reach the engine without intake; destinations come first, so that no
        adapter is even built for a judge that may not be used. The kinds depend on the
        campaign kind alone, so one artifact's plan names them all.
        """
        kinds = {p.kind for p in plan_samples(policy, artifacts[0])} if artifacts else set()
        self._check(policy, kinds)
        if policy.subject is not None:
            self.judge(policy.subject).preflight()

    def _check(self, policy: Policy, kinds: set[CallKind]) -> None:
        """Before any request: destinations allowed (seed 000), keys present, kinds supported."""
        check_destinations(policy)
        for config in policy.judges:
            judge = self.judge(config)
            judge.preflight()
            for kind in kinds:
                if not judge.supports(kind):
                    raise ConfigError(f"judge {config.id} ({config.provider}) cannot judge {kind}")

    async def _attempts(
        self,
        config: JudgeConfig,
        make_call: Callable[[int], JudgeCall],
        *,
        clock: Callable[[], float],
        record_key: tuple[str, str, int],
        on_retry: OnRetry | None,
        on_dispatch: Dispatched | None = None,
    ) -> _Attempts:
        """Call until an answer, a final error, or the retries are spent.

        ``on_dispatch(at)``: called once, when the first attempt is sent (spacing)."""
        judge = self.judge(config)
        limiter = self.limiter(config)
        out = _Attempts()
        while True:
            out.attempts += 1
            call = make_call(out.attempts)
            estimate = (len(call.prompt.system) + len(call.prompt.user)) // 4
            out.raw, out.error, out.charged = None, None, None
            # The endpoint's pacing first, so a rate-limited endpoint never idles global slots.
            async with limiter.slot(estimate), self._global:
                # Checked once a slot is held: calls queued behind a failing one see it.
                self._breaker.check(config.id)
                # Reserved once a slot is held, so that queued calls hold no reservation.
                hold = None if self.budget is None else await self.budget.reserve(config, call)
                start = clock()
                if out.dispatched is None:
                    out.dispatched = start
                    if on_dispatch is not None:
                        on_dispatch(start)
                try:
                    async with asyncio.timeout(config.timeout_s):
                        out.raw = await judge.complete(call)
                except TimeoutError:
                    out.error = TransportFailure(
                        f"no answer within timeout_s={config.timeout_s}", kind="timeout"
                    )
                except (TransportError, JudgeOutputError) as exc:
                    out.error = exc
                except JuratError:
                    raise  # configuration problems stop the job; they are not votes
                except Exception as exc:  # an adapter bug must not take the panel down
                    out.error = JudgeOutputError(
                        f"{type(exc).__name__}: {exc}", kind="adapter_error"
                    )
                finally:
                    if hold is not None:
                        assert self.budget is not None
                        charged = self.budget.settle(hold, out.raw.usage if out.raw else None)
                        if out.raw is not None and charged != out.raw.usage:
                            out.charged = charged
                out.latency = clock() - start
            if out.raw is not None:
                used = out.raw.usage
                limiter.settle(estimate, sum(used.values()) if used else None)
            self._record(config, record_key, out)
            self._breaker.record(config.id, out.error)
            error = out.error
            if _retryable(error, out.attempts, config.retries):
                assert isinstance(error, TransportError)
                sample_key = f"{config.id}/{record_key[1]}/{record_key[2]}"
                await _call(on_retry, sample_key, out.attempts, error.kind)
                await self._sleep(self._backoff(out.attempts, error))
                continue
            return out

    def _record(self, config: JudgeConfig, key: tuple[str, str, int], out: _Attempts) -> None:
        if self.recorder is None:
            return
        raw = out.raw
        kind = out.error.kind if isinstance(out.error, TransportError) else None
        # An adapter-side output error (oversized, adapter_error) replays as the same kind.
        output = out.error.kind if isinstance(out.error, JudgeOutputError) else None
        self.recorder.record(
            ReplayRecord(
                judge=config.id,
                artifact_sha256=key[0],
                criterion=key[1],
                sample=key[2],
                attempt=out.attempts,
                text=raw.text if raw else None,
                error=kind,
                finish=raw.finish if raw else None,
                refusal=raw.refusal if raw else None,
                envelope_error=raw.envelope_error if raw else output,
                returned_model=raw.returned_model if raw else None,
                system_fingerprint=raw.system_fingerprint if raw else None,
                usage=raw.usage if raw else {},
            )
        )

    async def run_samples(
        self,
        policy: Policy,
        artifact: Artifact,
        bundle: EvidenceBundle,
        gates: Sequence[GateOutcome],
        *,
        existing: Sequence[Vote] = (),
        on_vote: OnVote | None = None,
        on_retry: OnRetry | None = None,
        telemetry: SampleTelemetry | None = None,
        clock: Callable[[], float] = time.monotonic,
        started: float | None = None,
        on_debug: OnDebug | None = None,
        spacing_ms: int | None = None,
    ) -> list[Vote]:
        """Plan, skip what is recorded, dispatch the rest; see ``run_samples``.

        ``on_debug(vote, debug)``: the operator's record of each sample that got a
        response (judges/_debug.py), awaited just before ``on_vote`` of the same vote.
        ``spacing_ms``: the least time between the dispatches of successive samples of one
        (judge, criterion) of this artifact (judges/_spacing.py); None: each judge's
        ``spacing_ms``, 0: none (a burst), whatever the judges declare. Waits use the
        engine's ``sleep`` and this call's ``clock``."""
        started = clock() if started is None else started
        plan = plan_samples(policy, artifact)
        bundle = judge_bundle(artifact, bundle)
        self._check(policy, {p.kind for p in plan})
        done = index_existing(plan, existing)
        hard_gates = policy.hard_gates
        job = ArtifactJob(policy, artifact, bundle, gates, hard_gates, started, clock)
        lock = asyncio.Lock()
        new: dict[tuple[str, str, int], Vote] = {}
        unsent: list[BudgetExhausted] = []
        spacings: dict[tuple[str, str], Spacing] = {}
        for p in plan:
            gap = spacing_of(p.judge.spacing_ms, spacing_ms)
            if gap > 0 and (p.judge.id, p.criterion) not in spacings:
                spacings[(p.judge.id, p.criterion)] = Spacing(gap, clock, self._sleep)

        async def one(planned: PlannedSample) -> None:
            try:
                vote, debug = await self._sample(
                    job, planned, on_retry, spacings.get((planned.judge.id, planned.criterion)))
            except BudgetExhausted as exc:
                # Not sent, so not a sample: the job's calls in flight still finish and
                # are recorded, and a run under a raised cap draws this one.
                unsent.append(exc)
                return
            new[planned.key] = vote
            async with lock:  # the runner appends to a ledger: one vote at a time
                if debug is not None:
                    await _call(on_debug, vote, debug)
                if telemetry is not None:
                    telemetry.sample(
                        artifact.id, vote, of=planned.of, label=_label(vote, planned.kind),
                        config=planned.judge, finish=debug.finish if debug else None,
                    )
                await _call(on_vote, vote)

        # ``[criteria] curtail``: each (judge, criterion) draws wave by wave, in sample order,
        # and stops once settled (_curtail.py); recorded samples count and are not redrawn.
        sequences, at_once = curtailed_groups(policy, plan)
        quorum = policy.criteria.blocker_quorum if policy.criteria else 1.0
        try:
            async with asyncio.TaskGroup() as group:
                for planned in at_once:
                    if planned.key not in done:
                        group.create_task(one(planned))
                for sequence in sequences:
                    group.create_task(draw_curtailed(
                        sequence, lambda key: done.get(key) or new.get(key), one, quorum=quorum))
        except BaseExceptionGroup as failed:
            raise failed.exceptions[0] from None
        if unsent:
            raise unsent[0]
        # A curtailed sample was never drawn: it is left out, not recorded as an error.
        return [done[p.key] if p.key in done else new[p.key] for p in plan
                if p.key in done or p.key in new]

    async def _sample(self, job: ArtifactJob, planned: PlannedSample,
                      on_retry: OnRetry | None,
                      spacing: Spacing | None = None) -> tuple[Vote, SampleDebug | None]:
        config = planned.judge
        artifact = job.artifact
        prompt_id = ""
        sent: Prompt | None = None

        def make_call(attempt: int) -> JudgeCall:
            nonlocal prompt_id, sent
            prompt = job.render(planned)  # fresh delimiters for every call
            prompt_id = prompt.prompt_id
            sent = prompt
            return JudgeCall(
                kind=planned.kind,
                prompt=prompt,
                temperature=config.temperature,
                max_tokens=config.max_tokens,
                artifact=artifact,
                criterion=planned.criterion,
                sample=planned.sample,
                attempt=attempt,
                order=planned.order,
                gates_pass=job.gates_ok,
                bundle_size=len(job.bundle.items),
                claim=planned.claim,
            )

        key = (artifact.sha256, planned.criterion, planned.sample)
        if spacing is None:
            out = await self._attempts(config, make_call, clock=job.clock, record_key=key,
                                       on_retry=on_retry)
        else:
            async with spacing.turn() as dispatched:
                out = await self._attempts(config, make_call, clock=job.clock, record_key=key,
                                           on_retry=on_retry, on_dispatch=dispatched)
        raw = out.raw
        answer: dict[str, Any] | None = None
        error = out.error.kind if isinstance(out.error, TransportError | JudgeOutputError) else None
        refused = out.error if isinstance(out.error, JudgeOutputError) else None
        if raw is not None:
            try:
                answer = interpret(
                    raw,
                    planned.kind,
                    artifact_sha256=artifact.sha256,
                    bundle_size=len(job.bundle.items),
                    gates=job.gates,
                    hard_gates=job.hard_gates,
                    reference=job.reference,
                    score_ids=general_ids(job.policy.rubric),
                )
            except JudgeOutputError as exc:
                error = exc.kind
                refused = exc
        vote = Vote(
            judge=config.id,
            criterion=planned.criterion,
            sample=planned.sample,
            attempts=out.attempts,
            order=planned.order,
            answer=answer,
            error=error,
            returned_model=raw.returned_model if raw else None,
            system_fingerprint=raw.system_fingerprint if raw else None,
            usage=out.usage(),
            dispatch_ms=_ms((out.dispatched or job.started) - job.started),
            latency_ms=_ms(out.latency),
            prompt_id=prompt_id,
        )
        # Reference material (gold, a target) is in the prompt, and an answer may quote it.
        reference = (planned.kind == "equivalence" and job.reference) or (
            planned.kind == "criterion" and artifact.target is not None)
        return vote, SampleDebug.of(raw, refused, sent, reference=reference)

    async def complete_text(
        self,
        config: JudgeConfig,
        prompt: str,
        *,
        temperature: float,
        max_tokens: int | None = None,
        on_retry: OnRetry | None = None,
    ) -> RawResponse:
        """See ``complete_text``."""
        text_prompt = Prompt(template_id="jurat/execution", version="caller", user=prompt)
        return await self.complete_prompt(
            config, text_prompt, key=execution_key(prompt), criterion="execution",
            temperature=temperature, max_tokens=max_tokens, on_retry=on_retry)

    async def complete_prompt(
        self,
        config: JudgeConfig,
        prompt: Prompt,
        *,
        key: str,
        criterion: str,
        temperature: float,
        max_tokens: int | None = None,
        on_retry: OnRetry | None = None,
    ) -> RawResponse:
        """One call of ``prompt`` answered as text, with the engine's retries and limits:
        the execution phase (``complete_text``) and the claim extraction
        (runner/_work_claims.py). ``key`` and ``criterion`` are its replay record key."""
        judge = self.judge(config)
        judge.preflight()
        subject = Artifact(id=criterion, sha256=key, media_type="text/plain")

        def make_call(attempt: int) -> JudgeCall:
            return JudgeCall(
                kind="text",
                prompt=prompt,
                temperature=temperature,
                max_tokens=max_tokens or config.max_tokens,
                artifact=subject,
                criterion=criterion,
                attempt=attempt,
            )

        out = await self._attempts(
            config,
            make_call,
            clock=time.monotonic,
            record_key=(key, criterion, 0),
            on_retry=on_retry,
        )
        if out.error is not None:
            raise out.error
        assert out.raw is not None
        return out.raw.model_copy(update={"attempts": out.attempts, "usage": out.usage()})
