"""Model-call overhead: labkit + litellm vs calling the engine or server directly, same run.

    .venv/bin/python benchmarks/models.py [--judgments 16] [--requests 64] [--latency 0.05] [--reps 3]

1. Judgments per second on the real model (SmolLM2-135M, in-process): the same pairwise
   arithmetic prompts — "which answer is correct, A or B?", first-token log-probabilities
   of A and B — sent (a) through `labkit.models.gateway.option_probs` (litellm, custom provider,
   Reply, probabilities) and (b) straight to xllamacpp's `handle_chat_completions`.
   Prints both rates and the overhead ratio, and how often the judge picked "A".
2. Batch throughput against a local OpenAI-compatible stub on 127.0.0.1 with a fixed
   artificial latency: `labkit.models.batch.run` at concurrency 1, 8 and 32, against its real
   floor, litellm's own `acompletion` under the same asyncio.Semaphore at the same concurrency
   with the same request (labkit calls models through litellm: goal >= 0.9x, i.e. labkit adds at
   most 10%), and beside a plain httpx client (context only: it skips litellm, whose CPU per
   call, printed, caps any litellm client at cores / CPU-per-call calls per second), which
   does the client-side work labkit must do too (same body, status, JSON decode, reply text).
   The stub runs in its own process (its CPU does not compete with the client's); it sends
   each answer in one write with TCP_NODELAY (a naive server's two writes waited ~40 ms on
   delayed ACKs: that was the "~50 ms per request" both clients used to show).
   The ideal rate is concurrency / latency. labkit's extra per call (litellm's request and
   response machinery, the Reply, budget/ledger bookkeeping when given) shows as CPU ms/call.

Request counts are bounded and the stub stops when the benchmark ends.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from typing import Any

from _common import figure, stub_server, stub_stats

from labkit.models import batch, smollm2
from labkit.models import gateway as models


def _pairs(n: int, seed: int = 0) -> list[list[dict[str, str]]]:
    """Arithmetic pairs, the correct answer shown first in half of them."""
    rng = random.Random(seed)
    prompts = []
    for i in range(n):
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        right, wrong = a + b, a + b + rng.choice([-10, -1, 1, 10])
        first, second = (right, wrong) if i % 2 == 0 else (wrong, right)
        prompts.append(
            [
                {
                    "role": "user",
                    "content": f"What is {a} + {b}?\nAnswer A: {first}\nAnswer B: {second}\n"
                    "Which answer is correct? Reply with A or B.",
                },
                {"role": "assistant", "content": "The correct answer is"},
            ]
        )
    return prompts


def judge_rates(n: int, reps: int) -> None:
    reason = smollm2.available()
    if reason:
        print(f"1. real-model judgments: skipped ({reason})")
        return
    prompts = _pairs(n)
    engine = smollm2.engine()
    body: dict[str, Any] = {
        "max_tokens": 1,
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": 20,
    }

    def direct() -> list[str]:
        picks = []
        for p in prompts:
            out = engine.server.handle_chat_completions({**body, "messages": p})
            top = out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            mass = {o: sum(2.718281828 ** t["logprob"] for t in top if t["token"].strip() == o) for o in "AB"}
            picks.append(max(mass, key=lambda o: mass[o]))
        return picks

    def through_labkit() -> list[str]:
        return [models.option_probs("labkit/smollm2", p).pick for p in prompts]

    through_labkit(), direct()  # warm both: engine start, litellm import, prompt caches
    t_direct, t_labkit = [], []
    for _ in range(reps):
        for fn, times in ((direct, t_direct), (through_labkit, t_labkit)):
            t = time.perf_counter()
            picks = fn()
            times.append(time.perf_counter() - t)
    d, lk = statistics.median(t_direct), statistics.median(t_labkit)
    print(f"1. real model ({engine.path.name}), {n} pairwise judgments x {reps} reps, median:")
    print(f"   straight to xllamacpp   {n / d:7.1f} judgments/s")
    print(f"   through labkit+litellm  {n / lk:7.1f} judgments/s")
    print(f"   overhead ratio          {lk / d:7.2f}x  (labkit time / direct time)")
    print(f"   picked 'A' in {picks.count('A')}/{n} (correct answer first in {(n + 1) // 2}/{n})")


async def _raw(url: str, jobs: list[list[dict[str, str]]], concurrency: int, max_tokens: int) -> list[str]:
    """The floor for any client: httpx + a semaphore, doing the client-side work labkit must do
    too: the same request body, status check, JSON decode, the reply text and token counts."""
    import httpx

    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=concurrency)) as client:

        async def one(messages: list[dict[str, str]]) -> str:
            async with gate:
                r = await client.post(
                    f"{url}/chat/completions",
                    json={"model": "stub", "messages": messages, "max_tokens": max_tokens, "temperature": 0.0},
                )
                r.raise_for_status()
                body = r.json()
                text = body["choices"][0]["message"]["content"]
                assert body["usage"]["total_tokens"] >= 0
                return str(text)

        return await asyncio.gather(*(one(m) for m in jobs))


async def _litellm(url: str, jobs: list[list[dict[str, str]]], concurrency: int, max_tokens: int) -> list[str]:
    """labkit's floor: litellm's own acompletion, the request labkit's batch sends, at most
    `concurrency` in flight (an asyncio.Semaphore, as labkit.models.batch)."""
    import litellm

    gate = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]]) -> str:
        async with gate:
            r = await litellm.acompletion(
                model="openai/stub",
                messages=messages,
                api_base=url,
                api_key="none",
                max_tokens=max_tokens,
                temperature=0.0,
                timeout=60.0,
            )
            return str(r.choices[0].message.content)

    return await asyncio.gather(*(one(m) for m in jobs))


def batch_rates(n: int, latency: float, reps: int) -> None:
    # at least 8 requests per slot, so a high concurrency is measured over several waves, not one
    size = {c: max(n, 8 * c) for c in (1, 8, 32)}
    jobs = [[{"role": "user", "content": f"question {i}"}] for i in range(max(size.values()))]
    print(
        f"2. batch throughput, stub server (its own process) on 127.0.0.1 with {latency * 1000:.0f} ms "
        f"latency, {', '.join(f'{size[c]} requests at {c}' for c in size)}, median of {reps}:"
    )
    print(
        "   concurrency   labkit.batch   litellm   plain httpx   ideal   labkit/litellm   CPU ms/call labkit, litellm, httpx"
    )
    with stub_server(latency) as url:
        kw = {"api_base": url, "api_key": "none", "max_tokens": 8}
        batch.run("openai/stub", jobs[:2], **kw)  # warm: litellm import and clients
        asyncio.run(_litellm(url, jobs[:2], 1, 8))
        asyncio.run(_raw(url, jobs[:2], 1, 8))
        clients = {
            "labkit": lambda c: batch.run("openai/stub", jobs[: size[c]], concurrency=c, **kw).texts(),
            "litellm": lambda c: asyncio.run(_litellm(url, jobs[: size[c]], c, 8)),
            "httpx": lambda c: asyncio.run(_raw(url, jobs[: size[c]], c, 8)),
        }
        rates: dict[int, dict[str, float]] = {}
        cpu_ms: dict[int, dict[str, float]] = {}
        for c in (1, 8, 32):
            wall: dict[str, list[float]] = {k: [] for k in clients}
            cpu: dict[str, list[float]] = {k: [] for k in clients}
            for _ in range(reps):  # interleaved, so a noisy moment hits every client alike
                answers = []
                for name, client in clients.items():
                    c0, t0 = time.process_time(), time.perf_counter()
                    answers.append(client(c))
                    wall[name].append(time.perf_counter() - t0)
                    cpu[name].append(time.process_time() - c0)
                assert len(answers[0]) == size[c] and answers[0] == answers[1] == answers[2]  # same answers
            rates[c] = {k: size[c] / statistics.median(v) for k, v in wall.items()}
            cpu_ms[c] = {k: 1000 * statistics.median(v) / size[c] for k, v in cpu.items()}
            r, m = rates[c], cpu_ms[c]
            print(
                f"   {c:>11}   {r['labkit']:8.1f}/s {r['litellm']:7.1f}/s  {r['httpx']:8.1f}/s  {c / latency:5.0f}/s"
                f"   {r['labkit'] / r['litellm']:10.2f}       {m['labkit']:5.2f}, {m['litellm']:5.2f}, {m['httpx']:5.2f}"
                f"   ({r['labkit'] / rates[1]['labkit']:.1f}x concurrency 1)"
            )
        print(f"   the stub saw at most {stub_stats(url)['max_in_flight']} requests in flight")
    # the stub's latency is not labkit's floor: litellm's own CPU per call comes on top of it for any
    # client built on litellm, so this is shown beside litellm alone, for context
    per_request, floor = 1 / rates[1]["labkit"], 1 / rates[1]["litellm"]
    figure(
        f"batch at concurrency 1: time per request / stub latency (litellm alone: {floor / latency:.2f}x)",
        per_request / latency,
        "context",
        None,
        unit="x",
    )
    for c, r in rates.items():
        m = cpu_ms[c]
        why = (
            f"at concurrency {c} both clients are CPU-bound ({c / latency:.0f}/s ideal, {r['litellm']:.0f}/s "
            f"reached by litellm alone): labkit spent {m['labkit']:.2f} ms CPU per call against litellm's "
            f"{m['litellm']:.2f} ms, i.e. {m['labkit'] - m['litellm']:.2f} ms for its request, Reply and "
            f"records, which caps one event loop at {1000 / m['labkit']:.0f} calls/s (litellm: "
            f"{1000 / m['litellm']:.0f})"
        )
        figure(
            f"labkit.batch / litellm acompletion at concurrency {c}",
            r["labkit"] / r["litellm"],
            ">= 0.9x",
            r["labkit"] / r["litellm"] >= 0.9,
            unit="x",
            why=why,
        )
    scale, floor_scale = rates[32]["labkit"] / rates[1]["labkit"], rates[32]["litellm"] / rates[1]["litellm"]
    figure(
        f"batch throughput, concurrency 32 / 1 (litellm alone: {floor_scale:.1f}x)", scale, "context", None, unit="x"
    )
    for c, r in rates.items():
        figure(f"labkit.batch / plain httpx at concurrency {c}", r["labkit"] / r["httpx"], "context", None, unit="x")
    # litellm's CPU per call caps any client built on it: 2 cores / CPU per call, calls per second
    per_call = min(m["litellm"] for m in cpu_ms.values()) / 1000
    figure(
        f"litellm CPU per call {per_call * 1000:.1f} ms: its ceiling on 2 cores",
        2 / per_call,
        "context",
        None,
        unit=" calls/s",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judgments", type=int, default=16)
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    judge_rates(args.judgments, args.reps)
    batch_rates(args.requests, args.latency, args.reps)


if __name__ == "__main__":
    main()
