"""Judges: provider adapters, prompt templates, the N-sample engine, strict validation.

The runner calls ``run_samples`` once per artifact job; it plans every (judge, criterion,
sample) from the policy before dispatch, never resamples a recorded sample, retries only
transport failures (as attempts of the same sample), validates every answer strictly and
returns every vote, errors included. ``make_judge`` builds one adapter: ``openai-compat``
and ``anthropic`` (the providers' documented HTTP APIs over aiohttp, judges/_http.py),
``sim`` (a seeded noisy panel), ``stub:<name>`` and ``replay``.
"""

from jurat.judges._bias import (
    BiasAlarm,
    BiasCounts,
    BiasReading,
    equivalent_share,
    first_position_ok,
)
from jurat.judges._breaker import BREAKER_CALLS, no_answer
from jurat.judges._budget import CALL_OVERHEAD, BudgetGuard, worst_case
from jurat.judges._calls import complete_text, run_samples
from jurat.judges._cost import (
    PHASES,
    CostSummary,
    Metered,
    PhaseCost,
    Price,
    add_phases,
    combine,
    cost_summary,
    format_cost_table,
    judge_phase,
    phase_cost,
    summarise,
    usd,
)
from jurat.judges._debug import RAW_CAP, SampleDebug, SampleFailure, SampleRequest
from jurat.judges._engine import Engine, limit_share
from jurat.judges._factory import make_judge
from jurat.judges._order import OrderedAnswer, OrderReversal, order_reversal, presentation_order
from jurat.judges._plan import PlannedSample, judge_bundle, judge_pins, plan_samples
from jurat.judges._prompts import (
    EQUIVALENCE_PROMPT_ID,
    TEMPLATE_FOR_KIND,
    TEMPLATES,
    render_criterion,
    render_decision,
    render_equivalence,
)
from jurat.judges._protocol import (
    NO_ANSWER_KINDS,
    RETRYABLE_KINDS,
    CallKind,
    Judge,
    JudgeCall,
    Prompt,
    RawResponse,
    TransportFailure,
)
from jurat.judges._ratelimit import EndpointLimiter, TokenBucket
from jurat.judges._replay import ReplayJudge, ReplayRecord, ReplayRecorder
from jurat.judges._sim import SimJudge, sim_label, sim_truth
from jurat.judges._stubs import StubJudge
from jurat.judges._telemetry import EVENT_NAME, SampleTelemetry
from jurat.judges._validate import (
    ARCV_SCHEMA_ID,
    CRITERION_SCHEMA,
    CRITERION_SCHEMA_ID,
    EQUIVALENCE_FORMAT_ID,
    MAX_ANSWER_BYTES,
    SCHEMA_FOR_KIND,
    arcv_schema,
    interpret,
    strict_loads,
    validate_answer,
)
from jurat.models._truth import SIM_LABELS

__all__ = [
    "ARCV_SCHEMA_ID",
    "BREAKER_CALLS",
    "CRITERION_SCHEMA",
    "CRITERION_SCHEMA_ID",
    "EQUIVALENCE_FORMAT_ID",
    "EQUIVALENCE_PROMPT_ID",
    "EVENT_NAME",
    "MAX_ANSWER_BYTES",
    "NO_ANSWER_KINDS",
    "PHASES",
    "RAW_CAP",
    "RETRYABLE_KINDS",
    "SCHEMA_FOR_KIND",
    "SIM_LABELS",
    "TEMPLATES",
    "TEMPLATE_FOR_KIND",
    "BiasAlarm",
    "BiasCounts",
    "BiasReading",
    "CallKind",
    "CostSummary",
    "EndpointLimiter",
    "BudgetGuard",
    "CALL_OVERHEAD",
    "Engine",
    "Judge",
    "JudgeCall",
    "Metered",
    "OrderReversal",
    "OrderedAnswer",
    "PhaseCost",
    "PlannedSample",
    "Price",
    "Prompt",
    "RawResponse",
    "ReplayJudge",
    "ReplayRecord",
    "ReplayRecorder",
    "SampleDebug",
    "SampleFailure",
    "SampleRequest",
    "SampleTelemetry",
    "SimJudge",
    "StubJudge",
    "TokenBucket",
    "TransportFailure",
    "add_phases",
    "arcv_schema",
    "combine",
    "complete_text",
    "cost_summary",
    "equivalent_share",
    "first_position_ok",
    "format_cost_table",
    "interpret",
    "judge_bundle",
    "judge_phase",
    "judge_pins",
    "make_judge",
    "order_reversal",
    "phase_cost",
    "plan_samples",
    "presentation_order",
    "render_criterion",
    "render_decision",
    "render_equivalence",
    "limit_share",
    "no_answer",
    "run_samples",
    "sim_label",
    "sim_truth",
    "strict_loads",
    "summarise",
    "usd",
    "validate_answer",
    "worst_case",
]
