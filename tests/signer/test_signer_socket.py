"""The signer's socket under slow and greedy clients (issue 30): connections are read
concurrently under a whole-line deadline, at most ``--max-clients`` at once, and the
decisions stay one at a time (the same receipt sent on many connections at once is
granted once)."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

from tests.signer.world import World


def _connect(path: Path) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX)
    conn.settimeout(30)
    conn.connect(str(path))
    return conn


def _answer(conn: socket.socket) -> dict[str, Any]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        assert chunk, f"closed without an answer: {data[:200]!r}"
        data += chunk
    answer: dict[str, Any] = json.loads(data)
    return answer


def _ended(conn: socket.socket) -> bool:
    try:
        return conn.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_dripping_client_is_cut_off_while_another_is_served(
    world: World, start_signer: Any
) -> None:
    signer = start_signer(extra=("--request-timeout", "3"))
    line = json.dumps({"receipt": json.loads(world.receipt("ok1").read_bytes()),
                       "proof": json.loads(world.proof("ok1").read_bytes())}).encode()
    dripping = _connect(signer.socket)
    stop = threading.Event()

    def drip() -> None:
        dripping.sendall(b"{")
        while not stop.wait(0.2):
            try:
                dripping.sendall(b" ")
            except OSError:
                return

    dripper = threading.Thread(target=drip, daemon=True)
    dripper.start()
    try:
        # Answered while the other connection drips: the dripper has had no answer yet
        # (a signer serving one connection at a time would have cut it off first, or,
        # before issue 30, waited 60 s per read for as long as it dripped).
        granted = signer.send(line)
        assert "signature" in granted, granted
        dripping.setblocking(False)
        try:
            early = dripping.recv(1)
        except BlockingIOError:
            early = None
        assert early is None, "the dripper was cut off before the other client was served"
        dripping.setblocking(True)
        dripping.settimeout(30)
        cut = _answer(dripping)
        assert cut["refused"] == "request" and "within 3 s" in cut["reason"], cut
        assert _ended(dripping)
    finally:
        stop.set()
        dripper.join(timeout=10)
        dripping.close()
    # The cut-off is no decision: the log holds the grant only.
    from jurat.signer import SignerState

    signer.stop()
    with SignerState(signer.state) as state:
        assert [(d.outcome, d.check) for _, _, d in state.log()] == [("granted", None)]


def test_at_most_max_clients_are_held_and_a_long_line_is_refused(
    world: World, start_signer: Any
) -> None:
    signer = start_signer(extra=("--max-clients", "2", "--request-timeout", "20",
                                 "--max-request-bytes", "4096"))
    held = [_connect(signer.socket), _connect(signer.socket)]
    try:
        for conn in held:  # each has begun a line, so each is surely being read
            conn.sendall(b"{")
        with _connect(signer.socket) as third:
            busy = _answer(third)
            assert busy["refused"] == "request" and "2 connections" in busy["reason"], busy
            assert _ended(third)
        held[0].sendall(b" " * 5000)
        long = _answer(held[0])
        assert long["refused"] == "request" and "longer than 4096 bytes" in long["reason"]
        assert _ended(held[0])
        # The slot is free again: a request is answered.
        deadline = time.monotonic() + 10
        while True:
            answer = signer.send(b"junk")
            if "2 connections" not in answer.get("reason", "") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert answer["refused"] == "request" and "not one strict JSON" in answer["reason"]
        # The other held connection ends its side with only "{" sent: that is decided (and
        # logged) before it is answered, so waiting for the answer orders the log; a bare
        # close would race the signer's stop below.
        held[1].shutdown(socket.SHUT_WR)
        last = _answer(held[1])
        assert last["refused"] == "request" and "not one strict JSON" in last["reason"], last
    finally:
        for conn in held:
            conn.close()
    from jurat.signer import SignerState

    signer.stop()
    with SignerState(signer.state) as state:
        reasons = [d.reason or "" for _, _, d in state.log()]
    # The long line, "junk", and the "{" the other held connection left as it ended.
    assert len(reasons) == 3 and "longer than 4096 bytes" in reasons[0], reasons


def test_one_receipt_on_many_connections_at_once_is_granted_once(
    world: World, start_signer: Any
) -> None:
    signer = start_signer()
    line = json.dumps({"receipt": json.loads(world.receipt("ok1").read_bytes()),
                       "proof": json.loads(world.proof("ok1").read_bytes())}).encode()
    conns = [_connect(signer.socket) for _ in range(8)]
    answers: list[dict[str, Any]] = []
    try:
        # Everything but the newline first, then the eight newlines together.
        for conn in conns:
            conn.sendall(line)
        for conn in conns:
            conn.sendall(b"\n")
        answers = [_answer(conn) for conn in conns]
    finally:
        for conn in conns:
            conn.close()
    granted = [a for a in answers if "signature" in a]
    assert len(granted) == 1, answers
    assert sorted(a.get("refused", "") for a in answers) == [""] + ["replay"] * 7
