"""``jurat sample LEDGER JOB``: one judge sample's request, raw answer and validation failure.

For the operator debugging a judge (issue 28, "Operator debug record"): the ledger keeps
each answer's raw text, capped (judges/_debug.py), and for a refused one the failure's
kind, JSON path and message and the prompt sent. Nothing here is signed or published;
judge and candidate text is printed marked as such (``Untrusted.for_operator``), with
control characters escaped so an answer cannot rewrite the terminal.

``JOB`` is a job id (a receipt's ``inputs.job_id``) or an artifact id (its latest judged
job). With ``--judge``, ``--criterion`` and ``--sample`` naming one sample it is printed
whole; otherwise the matching samples are listed, one line each.

Exit 0 printed; 3 the ledger could not be read or no sample matches.
"""

from __future__ import annotations

from typing import Any

import typer

from jurat.cli._exit import ExitCode
from jurat.errors import ConfigError
from jurat.judges import RAW_CAP
from jurat.ledger import Entry, Ledger, open_ledger
from jurat.models._taint import Origin, Untrusted
from jurat.runner import ledger_url

__all__ = ["printable", "sample_command"]


def printable(text: str) -> str:
    """``text`` with every non-printable character but the newline as its Python escape."""
    return "\n".join("".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
                     for line in text.split("\n"))


def _marked(text: str, origin: Origin) -> str:
    return printable(Untrusted(text, origin=origin).for_operator())


def _samples(ledger: Ledger, job: str) -> list[Entry]:
    found = list(ledger.entries(job_id=job, kind="sample_recorded"))
    if found:
        return found
    by_artifact = list(ledger.entries(artifact_id=job, kind="sample_recorded"))
    if not by_artifact:
        return []
    latest = by_artifact[-1].job_id
    return [entry for entry in by_artifact if entry.job_id == latest]


def _key(entry: Entry) -> tuple[str, str, int]:
    vote = entry.payload["vote"]
    return str(vote["judge"]), str(vote["criterion"]), int(vote["sample"])


def _line(entry: Entry) -> str:
    judge, criterion, sample = _key(entry)
    debug: dict[str, Any] = entry.payload.get("debug") or {}
    failure = debug.get("failure") or {}
    error = entry.payload["vote"].get("error") or "valid"
    where = f" at {failure['path']}" if failure.get("path") else ""
    return printable(f"--judge {judge} --criterion {criterion} --sample {sample}: "
                     f"{error}{where}")


def _whole(entry: Entry) -> str:
    judge, criterion, sample = _key(entry)
    vote = entry.payload["vote"]
    debug: dict[str, Any] | None = entry.payload.get("debug")
    out = [printable(f"job {entry.job_id} (ledger entry {entry.seq}), artifact "
                     f"{entry.artifact_id}, campaign {entry.campaign_id}"),
           printable(f"judge {judge}, criterion {criterion}, sample {sample}, "
                     f"attempts {vote.get('attempts')}, prompt {vote.get('prompt_id')}"),
           printable(f"error: {vote.get('error') or 'none (a valid answer)'}")]
    if debug is None:
        out.append("no debug record: the sample got no answer, or was recorded before "
                   "jurat kept one (issue 28)")
        return "\n".join(out)
    failure = debug.get("failure")
    if failure is not None:
        out.append(printable(f"failure: {failure['kind']}, JSON path "
                             f"{failure.get('path') or '(none: not a JSON check)'}"))
        message = str(failure["message"])
        # jurat's own wording (an unusable envelope...) is not a judge's: shown unmarked.
        out.append("message:\n" + (printable(message) if failure.get("by_jurat")
                                    else _marked(message, "judge")))
    request = debug.get("request")
    if request is not None:
        cut = f" (each part cut at {RAW_CAP} bytes)" if request["capped"] else ""
        out.append(printable(f"request ({request['prompt_id']}){cut}:"))
        if request["system"]:
            out.append("system:\n" + printable(str(request["system"])))
        # jurat's template with the candidate's data blocks inside it.
        out.append("user:\n" + _marked(str(request["user"]), "candidate"))
    elif debug.get("withheld"):
        out.append("request and answer withheld: the prompt carried reference material "
                   "(gold answer or target) that an answer may quote")
    else:
        out.append("request: kept for refused answers only")
    answer = debug.get("answer")
    size = int(debug.get("answer_bytes", 0))
    cut = f", shown cut at {RAW_CAP} bytes" if debug.get("answer_capped") else ""
    finish = debug.get("finish")
    # No answer could be read from an unusable envelope: the body is what there is.
    what = "response body, unusable envelope" if debug.get("whole_body") else "answer"
    out.append(printable(f"{what} ({size} bytes{cut}, finish {finish or 'not reported'}):"))
    out.append("(no text)" if answer is None else _marked(str(answer), "judge"))
    return "\n".join(out)


def sample_command(ledger: str, job: str, *, judge: str | None, criterion: str | None,
                   sample: int | None) -> ExitCode:
    """Print one sample whole, or list the job's samples that match the options."""
    with open_ledger(ledger_url(ledger), create=False) as opened:
        entries = _samples(opened, job)
        if not entries:
            raise ConfigError(
                f"JOB {job!r}: no recorded sample in {ledger} has this job id or artifact "
                "id (fix: give a receipt's inputs.job_id or an artifact id of the ledger)")
        wanted = [e for e in entries if (judge is None or _key(e)[0] == judge)
                  and (criterion is None or _key(e)[1] == criterion)
                  and (sample is None or _key(e)[2] == sample)]
        if not wanted:
            listed = "\n".join(_line(e) for e in entries)
            raise ConfigError(
                "--judge/--criterion/--sample: no sample of this job matches (fix: use one "
                f"of these)\n{listed}")
        if len(wanted) == 1:
            typer.echo(_whole(wanted[0]))
        else:
            typer.echo(printable(f"{len(wanted)} samples of job {wanted[0].job_id}; name "
                                 "one with --judge, --criterion and --sample:"))
            for entry in wanted:
                typer.echo(_line(entry))
    return ExitCode.OK
