"""Load on the browser app's HTTP API: many people playing `greedy` at once, on loopback.

The server runs in its own process (``python -m allfives_env serve``), as it
would for real; this process plays ``--games`` games at once through the API.
Each game is a bounded loop: at most ``--moves`` moves, a person's pause of
about ``--think`` seconds before each (0: every game sends its next move as
soon as the answer comes, which measures the server's saturation instead), a
new match when one ends. It prints requests per second, the p50 and p99
latency of the moves and of every request, and the errors (any answer that
is not 2xx, or a failed request).

    python benchmarks/load_web.py --games 200 --moves 40 --think 1.0

Bar (issue 12): 0 errors, p99 < 100 ms for moves against greedy with 200 games.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time

from allfives_env.help_text import plain_help


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux), to tell the server's own cost from waiting for a core."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def start_server(port: int) -> subprocess.Popen:
    """``serve`` in its own process, as people run it; returns once it answers."""
    command = [sys.executable, "-m", "allfives_env", "serve", "--port", str(port), "--results", os.devnull]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError(f"the server did not start: {server.stdout.read() if server.stdout else ''}")


class Tally:
    def __init__(self) -> None:
        self.moves: list[float] = []
        self.others: list[float] = []
        self.errors: list[str] = []
        self.matches_finished = 0


class Connection:
    """One keep-alive HTTP/1.1 connection, written by hand so the load generator costs little CPU
    (the machine's cores are shared with the server being measured)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: dict | None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = json.dumps(body).encode() if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
        self.writer.write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        return int(status_line.split()[1]), payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def timed(tally: Tally, kind: list[float], conn: Connection, method: str, path: str, body) -> dict | None:
    start = time.perf_counter()
    try:
        status, payload = await conn.request(method, path, body)
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as err:
        tally.errors.append(f"{type(err).__name__}: {err}")
        conn.close()
        conn.writer = None
        return None
    kind.append(time.perf_counter() - start)
    if not 200 <= status < 300:
        tally.errors.append(f"{status}: {payload[:200]!r}")
        return None
    return json.loads(payload)


async def new_match(conn: Connection, tally: Tally, seed: int) -> dict | None:
    body = {"mode": "play", "rules": "pagat", "players": 2, "bots": "greedy", "seed": seed}
    return await timed(tally, tally.others, conn, "POST", "/api/games", body)


async def one_player(host: str, port: int, tally: Tally, index: int, args) -> None:
    rng = random.Random(index)
    conn = Connection(host, port)
    await asyncio.sleep(rng.uniform(0, args.think or 0.0))  # people arrive spread over a moment
    game = await new_match(conn, tally, index)
    for move in range(args.moves):
        if game is None:
            break
        if game["finished"]:
            tally.matches_finished += 1
            game = await new_match(conn, tally, index * 1000 + move)
            continue
        if args.think:
            await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
        action = rng.choice(game["legal"])["action"]
        body = {"version": game["version"], "action": action}
        game = await timed(tally, tally.moves, conn, "POST", f"/api/games/{game['id']}/move", body)
    conn.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args, host: str, port: int) -> tuple[Tally, float]:
    tally = Tally()
    start = time.perf_counter()
    await asyncio.gather(*(one_player(host, port, tally, i, args) for i in range(args.games)))
    return tally, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200, help="games played at once (default 200)")
    parser.add_argument("--moves", type=int, default=40, help="moves each game makes at most (default 40)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds a person pauses per move (default 1)")
    parser.add_argument("--port", type=int, help="use a server already running on 127.0.0.1 at this port")
    args = parser.parse_args(argv)
    server = None
    port = args.port
    if port is None:
        port = free_port()
        server = start_server(port)
    load = os.getloadavg()[0]
    server_cpu = cpu_seconds(server.pid) if server else float("nan")
    own_cpu = time.process_time()
    try:
        tally, seconds = asyncio.run(run(args, "127.0.0.1", port))
        if server is not None:
            server_cpu = cpu_seconds(server.pid) - server_cpu
        own_cpu = time.process_time() - own_cpu
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    requests = len(tally.moves) + len(tally.others)
    print(f"{args.games} games at once, up to {args.moves} moves each, think {args.think} s, against greedy")
    print(f"requests: {requests} in {seconds:.1f} s = {requests / seconds:.0f} requests/s")
    print(f"matches finished: {tally.matches_finished}")
    for name, values in (("moves", tally.moves), ("all requests", tally.moves + tally.others)):
        print(
            f"{name}: p50 {1000 * percentile(values, 0.5):.1f} ms, p99 {1000 * percentile(values, 0.99):.1f} ms, "
            f"mean {1000 * statistics.fmean(values) if values else float('nan'):.1f} ms, max {1000 * max(values, default=0):.1f} ms"
        )
    print(f"errors: {len(tally.errors)}")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} when the run began")
    if server is not None and requests:
        print(
            f"server CPU: {server_cpu:.1f} s = {1000 * server_cpu / requests:.2f} ms a request "
            f"(one core serves about {requests / server_cpu:.0f} requests/s); load generator CPU {own_cpu:.1f} s"
        )
    for line in tally.errors[:5]:
        print(f"  {line}")
    ok = not tally.errors and percentile(tally.moves, 0.99) < 0.100
    print("bar (0 errors, p99 of moves < 100 ms):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
