"""``jurat verify`` and ``jurat keygen``: printing layers over ``jurat.receipts``.

``verify`` exits 0 every step of every receipt held; 1 a verification step failed
(whatever the receipt's bytes: too large, too deep, not UTF-8, not a bundle), including
step 8 when the checkpoint's signature could not be checked; 3 a receipt, key or artifact
could not be read, or the options contradict each other (nothing was verified).

One receipt prints its numbered steps. Several (``PATH…``, a directory meaning every
``*.sigstore.json`` in it) print one line per receipt and a summary; ``--artifact`` then
asks which receipt is about that artifact: each receipt is verified in full, the ones about
it are named, and the command holds only if every receipt verified and at least one is
about it (docs/receipt-format.md §7).

Reference material is bound by keyed digests (docs/receipt-format.md §11): ``--reference
FILE --reference-key KEY`` (the campaign's ``.jurat/<id>.reference.key``) checks them, and
with them ``--artifact`` may be a pair's ``a``. Without them a receipt that records one
verifies all the same, and the last line says that the reference binding was not checked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._keys import (
    LogKeyChoice,
    choose_log_public,
    keygen_pairs,
    missing_log_public,
    read_log_public,
)
from jurat.cli._text import shown
from jurat.errors import ConfigError, JuratError
from jurat.models._artifact import pair_digest
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    STEPS,
    InclusionCheck,
    PublicKey,
    VerifyReport,
    VerifyStep,
    default_public_key_path,
    inclusion_step,
    load_public_key,
    public_key_hint,
    read_at_most,
    receipt_digest,
    verify_bundle,
)
from jurat.receipts._paths import receipts_in

__all__ = ["keygen_command", "receipt_paths", "verify_command"]

_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")


def _console() -> Console:
    return Console(emoji=False, highlight=False, soft_wrap=True)


def _print_step(console: Console, step: VerifyStep) -> None:
    mark = "[green]ok  [/]" if step.ok else "[red]FAIL[/]"
    console.print(f"  {step.number}. {mark} {step.name:<21} {shown(step.detail)}")


def _print_steps(console: Console, report: VerifyReport) -> None:
    for step in report.steps:
        _print_step(console, step)
    for number in range(len(report.steps) + 1, len(STEPS) + 1):
        console.print(f"  {number}. [dim]--   {STEPS[number - 1]:<21} not run[/]")


def _expected_digest(artifact: Path | None, artifact_digest: str | None) -> str | None:
    """The artifact digest step 5 must find, from ``--artifact`` and/or ``--artifact-digest``.

    Raises ConfigError for an unreadable file, a malformed digest, or two that disagree.
    """
    given = None
    if artifact_digest is not None:
        match = _DIGEST.fullmatch(artifact_digest.strip())
        if match is None:
            raise ConfigError(
                f"--artifact-digest {artifact_digest[:80]!r} is not sha256:<64 hex digits>"
            )
        given = match.group(1).lower()
    if artifact is None:
        return given
    digest = hashlib.sha256()
    try:
        with Path(artifact).open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read artifact {artifact}: {exc.strerror or exc}") from exc
    if given is not None and given != digest.hexdigest():
        raise ConfigError(
            f"--artifact {artifact} has sha256:{digest.hexdigest()}, not the --artifact-digest "
            f"sha256:{given}; give one of them"
        )
    return digest.hexdigest()


def _reference_hmac(reference: Path | None, reference_key: Path | None) -> str | None:
    """The keyed digest of ``--reference``'s bytes under ``--reference-key``, or None when
    neither is given. Raises ConfigError when one comes without the other or a file cannot
    be read (nothing is verified)."""
    if reference is None and reference_key is None:
        return None
    if reference is None or reference_key is None:
        raise ConfigError("--reference and --reference-key check a receipt's reference "
                          "binding together (fix: give both: the reference answer's file and "
                          "the campaign's .jurat/<campaign id>.reference.key)")
    from jurat.campaign import read_reference_key  # only here: verify starts without it

    key = read_reference_key(reference_key)
    try:
        data = reference.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read reference {reference}: {exc.strerror or exc}") from exc
    return key.digest(data)


def _reference_note(report: VerifyReport) -> str:
    """What the last line adds about the reference binding (empty when there is none)."""
    if report.reference_checked is True:
        return "; reference binding checked with --reference-key"
    if report.reference_checked is False:
        return ("; reference binding NOT checked (it is keyed: give --reference FILE "
                "--reference-key KEY, the campaign's reference key)")
    return ""


def _about(report: VerifyReport, expected: str | None, artifact: Path | None,
           reference_hmac: str | None = None) -> str:
    """The end of the last line: which artifact the receipt is about, and whether it was
    compared with the one the user holds."""
    if report.artifact_id is None or report.artifact_sha256 is None:
        return "artifact not established (no signed statement was read)"
    about = f"artifact {shown(report.artifact_id)} sha256:{shown(report.artifact_sha256)}"
    if expected is None:
        return about + " (not compared with any artifact: pass --artifact FILE)"
    given = f"--artifact {escape(str(artifact))}" if artifact is not None else "--artifact-digest"
    if reference_hmac is not None and report.artifact_sha256 == pair_digest(
            expected, reference_hmac):
        return f"{about}, the pair of {given} (its a) and --reference (its b)"
    if report.artifact_sha256 != expected:
        return f"{about}, NOT the digest of {given}"
    return f"{about}, the digest of {given}"


def receipt_paths(paths: Sequence[Path]) -> list[Path]:
    """The receipts the PATHs name: a file as given, a directory as every
    ``*.sigstore.json`` in it. Raises ConfigError for a missing path or an empty directory."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = receipts_in(path)
            if not inside:
                raise ConfigError(f"{path}: no *.sigstore.json receipt in this directory "
                                  "(fix: name the receipts, or the directory `jurat run "
                                  "--out` wrote them to)")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise ConfigError(f"cannot read receipt {path}: No such file or directory")
    return list(dict.fromkeys(found))  # a receipt named twice is verified once


def _default_inclusion(bundle: bytes, proof: Path, checkpoint: Path, log_key: str) -> str:
    from jurat.ledger import verify_receipt_inclusion

    return verify_receipt_inclusion(bundle, proof, checkpoint, public_key=log_key)


class _Checkpoint:
    """Step 8's inputs: the checkpoint, the log's public key (None: none found) and where
    it was looked for."""

    def __init__(self, path: Path, choice: LogKeyChoice, verifier: str | None,
                 check: InclusionCheck) -> None:
        self.path, self.choice, self.verifier, self.check = path, choice, verifier, check

    def step(self, bundle_bytes: bytes, receipt: Path) -> VerifyStep:
        return inclusion_step(bundle_bytes, receipt, self.path, self.check,
                              log_key=self.verifier, no_log_key=missing_log_public(self.choice))


def _checkpoint(console: Console, checkpoint: Path | None, log_key: Path | None,
                key: Path | None, inclusion: InclusionCheck | None) -> _Checkpoint | None:
    """Step 8's inputs, printing which log key it checks the checkpoint with."""
    if checkpoint is None:
        if log_key is not None:
            raise ConfigError("--log-key checks a checkpoint's signature: give --checkpoint CP "
                              "too (the checkpoint file `jurat run` wrote beside the ledger)")
        return None
    choice = choose_log_public(log_key, key)
    verifier = read_log_public(choice)
    if verifier is None:
        console.print(f"log key: none at {escape(str(choice.path))} ({choice.source}); the "
                      "checkpoint's signature cannot be checked")
    else:
        name = verifier.split("+", 1)[0]
        console.print(f"log key: {escape(str(choice.path))} ({choice.source}), log "
                      f"{shown(name)}")
    return _Checkpoint(Path(checkpoint), choice, verifier, inclusion or _default_inclusion)


def verify_command(
    receipt: Path | Sequence[Path],
    key: Path | None,
    checkpoint: Path | None = None,
    *,
    artifact: Path | None = None,
    artifact_digest: str | None = None,
    log_key: Path | None = None,
    inclusion: InclusionCheck | None = None,
    reference: Path | None = None,
    reference_key: Path | None = None,
) -> ExitCode:
    """``jurat verify PATH… [--key PUB] [--artifact FILE | --artifact-digest sha256:HEX]
    [--reference FILE --reference-key KEY] [--checkpoint CP [--log-key LOGPUB]]``: OK iff
    every step of every receipt held.

    Without ``key``, the default public key next to the default signing key is used.
    ``artifact`` (a file, hashed) and/or ``artifact_digest``: with one receipt, step 5 also
    checks the statement's subject against that digest; with several, the receipts about
    it are named, and at least one must be. Step 8 runs only with a checkpoint: it needs
    ``proof_path_for(receipt)`` beside each receipt and the log's public key (``log_key``,
    else ``<stem>-log.pub`` beside ``key``, else the default ``jurat-log.pub``); it calls
    ``inclusion`` (default: ``jurat.ledger.verify_receipt_inclusion`` with that key), which
    returns a detail line or raises a JuratError. ``reference`` and ``reference_key`` (one
    receipt only): step 5 also checks the receipt's keyed reference digests.
    """
    console = _console()
    paths = [Path(receipt)] if isinstance(receipt, str | Path) else [Path(p) for p in receipt]
    try:
        receipts = receipt_paths(paths)
    except ConfigError as exc:
        return print_error(exc)
    key_path = key
    if key_path is None:
        key_path = default_public_key_path()
        console.print(
            f"key: {escape(str(key_path))} (the default key; pass --key PUB to use another)"
        )
    try:
        public_key = load_public_key(key_path)
        expected = _expected_digest(artifact, artifact_digest)
        reference_hmac = _reference_hmac(reference, reference_key)
        one = len(paths) == 1 and len(receipts) == 1 and not paths[0].is_dir()
        if reference_hmac is not None and not one:
            raise ConfigError("--reference checks one receipt's reference binding (fix: name "
                              "the one receipt about that reference)")
        anchor = _checkpoint(console, checkpoint, log_key, key, inclusion)
    except ConfigError as exc:
        return print_error(exc)
    if one:
        if _is_qualification(receipts[0]):
            return _verify_qualification(console, receipts[0], public_key)
        return _verify_one(console, receipts[0], public_key, expected, artifact, anchor,
                           reference_hmac)
    return _verify_many(console, receipts, public_key, expected, artifact, anchor)


def _is_qualification(path: Path) -> bool:
    """A `jurat qualify --record` file rather than a receipt: its statement's predicate type
    says so (read unverified, to choose the steps; the steps then verify it)."""
    from jurat.canonical import loads_strict
    from jurat.qualify._record import PREDICATE_TYPE
    from jurat.receipts._bundle import parse_bundle

    try:
        # The strict reader's depth bound: a deeply nested payload is a receipt the
        # steps refuse, not a stack overflow here.
        statement = loads_strict(parse_bundle(read_at_most(path, MAX_BUNDLE_BYTES)).payload)
    except (JuratError, OSError, ValueError):
        return False  # not one: the receipt steps say what is wrong with it
    return isinstance(statement, dict) and statement.get("predicateType") == PREDICATE_TYPE


def _verify_qualification(console: Console, path: Path, public_key: PublicKey) -> ExitCode:
    """A qualification record's own steps (``verify_record``): signature, statement, and
    every figure re-derived from its signed samples."""
    from jurat.qualify._record import verify_record

    bundle = read_at_most(path, MAX_BUNDLE_BYTES)
    console.print(f"qualification record {escape(str(path))} "
                  f"sha256:{receipt_digest(bundle)}", markup=False, highlight=False)
    try:
        lines = verify_record(bundle, public_key)
    except JuratError as exc:
        console.print(f"  FAIL {shown(exc)}", markup=False, highlight=False)
        console.print("not verified: the record does not hold", markup=False)
        return ExitCode.ESCALATE
    for line in lines:
        console.print(f"  ok   {line}", markup=False, highlight=False)
    console.print("verified: qualification record, every figure re-derived", markup=False)
    return ExitCode.OK


def _read(receipt: Path) -> bytes:
    try:
        # Read no more than the limit (+1 to see it exceeded): step 1 refuses the rest.
        return read_at_most(receipt, MAX_BUNDLE_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read receipt {receipt}: {exc.strerror or exc}") from exc


def _outcome(report: VerifyReport) -> str:
    d = report.decision
    return (d.disposition or d.rollout or f"equivalent={d.equivalent}") if d else "?"


def _verify_one(console: Console, receipt: Path, public_key: PublicKey, expected: str | None,
                artifact: Path | None, anchor: _Checkpoint | None,
                reference_hmac: str | None = None) -> ExitCode:
    """One receipt: every numbered step, then the last line naming the artifact."""
    try:
        bundle_bytes = _read(receipt)
    except ConfigError as exc:
        return print_error(exc)
    console.print(f"verifying {escape(str(receipt))} with key {public_key_hint(public_key)}")
    report = verify_bundle(bundle_bytes, public_key, artifact_sha256=expected,
                           reference_hmac=reference_hmac)
    _print_steps(console, report)
    ok = report.ok
    included: VerifyStep | None = None
    if anchor is not None:
        included = anchor.step(bundle_bytes, receipt)
        _print_step(console, included)
        ok = included.ok and ok
    about = _about(report, expected, artifact, reference_hmac)
    if ok:
        console.print(
            f"[green]verified[/]: {_outcome(report)} \u2014 {about}; "
            f"receipt sha256:{receipt_digest(bundle_bytes)}{_reference_note(report)}"
        )
        return ExitCode.OK
    failed = report.failed or included
    where = f"step {failed.number} ({failed.name})" if failed else "a step"
    console.print(f"[red]not verified[/]: {where} failed \u2014 {about}")
    return ExitCode.ESCALATE


def _verify_many(console: Console, receipts: Sequence[Path], public_key: PublicKey,
                 expected: str | None, artifact: Path | None,
                 anchor: _Checkpoint | None) -> ExitCode:
    """Several receipts: one line each, naming its artifact, then the summary line."""
    given = (f"--artifact {escape(str(artifact))}" if artifact is not None
             else "--artifact-digest")
    console.print(f"verifying {len(receipts)} receipts with key {public_key_hint(public_key)}")
    verified = failed = 0
    about_it: list[str] = []
    for receipt in receipts:
        name = escape(str(receipt))
        try:
            bundle_bytes = _read(receipt)
        except ConfigError as exc:
            failed += 1
            console.print(f"[red]not verified[/]: {name}: {shown(exc)}")
            continue
        # Each receipt is about its own artifact: step 5 is not asked to compare, and the
        # comparison below only says which of them is about the given one.
        report = verify_bundle(bundle_bytes, public_key)
        failure = report.failed
        if failure is None and anchor is not None:
            included = anchor.step(bundle_bytes, receipt)
            failure = None if included.ok else included
        if report.artifact_id is None or report.artifact_sha256 is None:
            about = "artifact not established (no signed statement was read)"
        else:
            about = (f"artifact {shown(report.artifact_id)} "
                     f"sha256:{shown(report.artifact_sha256)}")
            if expected is not None and report.artifact_sha256 == expected:
                about += f", the digest of {given}"
                about_it.append(name)
        if failure is None and report.ok:
            verified += 1
            logged = "; in the log under --checkpoint" if anchor is not None else ""
            unchecked = ("; reference binding not checked (keyed)"
                         if report.reference_checked is False else "")
            console.print(f"[green]verified[/]: {name}: {_outcome(report)} \u2014 {about}"
                          f"{logged}{unchecked}")
        else:
            failed += 1
            where = (f"step {failure.number} ({failure.name}) failed: {shown(failure.detail)}"
                     if failure else "a step failed")
            console.print(f"[red]not verified[/]: {name}: {where} \u2014 {about}")
    summary = f"{verified} verified, {failed} failed ({len(receipts)} receipts)"
    held = failed == 0
    if expected is not None:
        if about_it:
            summary += f"; about {given}: {', '.join(about_it)}"
        else:
            summary += f"; none of them is about {given}"
            held = False
    console.print(f"[green]{summary}[/]" if held else f"[red]{summary}[/]")
    return ExitCode.OK if held else ExitCode.ESCALATE


def keygen_command(out: Path) -> ExitCode:
    """``jurat keygen --out DIR``: the receipt-signing pair (jurat.key 0600, jurat.pub) and
    the log pair (jurat-log.key 0600, jurat-log.pub); never overwrite any of them."""
    console = _console()
    try:
        priv, pub, log_priv, log_pub = keygen_pairs(Path(out))
        hint = public_key_hint(load_public_key(pub))
    except ConfigError as exc:
        return print_error(exc)
    console.print(f"private key: {escape(str(priv))} (PKCS#8 PEM, mode 0600; keep it secret)")
    console.print(f"public key:  {escape(str(pub))} (SPKI PEM; give it to verifiers)")
    console.print(f"key hint:    {hint}")
    console.print(f"log key:     {escape(str(log_priv))} (Ed25519, mode 0600; signs the "
                  "ledger's checkpoints)")
    console.print(f"log public:  {escape(str(log_pub))} (C2SP verifier key; checks them: "
                  "jurat verify --checkpoint CP --log-key)")
    return ExitCode.OK
