"""Writes transcript.jsonl: the scripted reflector's replies for the cache-isolation case.

This is authored teaching material, not a model's output: wherever it is shown, it is
labelled "scripted". Each line is {"key": "<branch>/<step>", "reply": "<text>"}; the loop
asks for "<branch>/round-N" (and "<branch>/round-N/obs-K" after K observations).

Branches:
  main      observe the keys first, then the composite key -> keep
  tempting  "disable the cache" -> rolled back by the protective tests; then the composite key
  five      five changes at once -> green but not attributable, rolled back; then the composite key
  invalid   three unusable reflections (no hypothesis, ten causes, a diff that does not apply),
            then the composite key: the loop does not trust the reflector

Run: python data/cache_isolation/author_transcript.py
"""

import json
from pathlib import Path

HERE = Path(__file__).parent
ENV = "pricing v1 · python 3.11 · pytest 8"
ISOLATION = [
    "tests/test_isolation.py::test_user_b_does_not_get_user_a_price",
    "tests/test_isolation.py::test_user_a_does_not_get_user_b_price",
]
HITS = [
    "tests/test_cache_hits.py::test_repeat_request_is_served_from_cache",
    "tests/test_cache_hits.py::test_second_users_repeat_is_a_hit",
]


def diff(name: str) -> str:
    return (HERE / "patches" / f"{name}.diff").read_text()


def record(cause, refuted_if, action, patch, phenomenon=None):
    return {
        "phenomenon": phenomenon
        or "User B reading the same product_id as user A is served A's price (expected 80, got 100).",
        "evidence_ref": ISOLATION[0],
        "environment": ENV,
        "hypothesis": {"cause": cause, "refuted_if": refuted_if},
        "action": action,
        "expected": {"acceptance": ISOLATION, "protective": HITS},
        "diff": patch,
    }


COMPOSITE = record(
    "The cache key is product_id only; it lacks user_id, so users share one entry per product.",
    "With user_id in the key, user B still receives user A's price.",
    "Change only cache_key to return (user_id, product_id).",
    diff("composite_key"),
    phenomenon="User B is served user A's cached price; the observed keys for A and B are both 'p1'.",
)

PROBE = """from pricing import PriceDatabase, PriceService

service = PriceService(PriceDatabase({("alice", "p1"): 100, ("bob", "p1"): 80}))
print("key for alice:", repr(service.cache_key("alice", "p1")))
print("key for bob:  ", repr(service.cache_key("bob", "p1")))
service.price("alice", "p1")
print("cache after alice reads p1:", service._cache)
print("bob reads p1 ->", service.price("bob", "p1"), "(his price is 80)")
"""

REPLIES = {
    "main/round-1": {
        "experiment": {
            "question": "Do users A and B generate the same cache key for the same product?",
            "probe": PROBE,
        }
    },
    "main/round-1/obs-1": COMPOSITE,
    "tempting/round-1": record(
        "Caching per-user prices is unsafe: any cached entry can be served to the wrong user.",
        "With the cache disabled, user B still receives user A's price.",
        "Disable the cache: always read the price from the database.",
        diff("disable_cache"),
    ),
    "tempting/round-2": COMPOSITE,
    "five/round-1": record(
        "The cache key lacks user_id (and the cache layer is fragile overall).",
        "After the rewrite, user B still receives user A's price.",
        "Rewrite the cache: string key with user, TTL, JSON serialisation, keyword query, eviction.",
        diff("five_changes"),
    ),
    "five/round-2": COMPOSITE,
    "invalid/round-1": "Check the code logic.",
    "invalid/round-2": {
        "phenomenon": "User B gets user A's price.",
        "evidence_ref": ISOLATION[0],
        "environment": ENV,
        "hypothesis": [
            "stale cache",
            "race condition",
            "wrong SQL",
            "timezone bug",
            "float rounding",
            "missing index",
            "bad serialisation",
            "TTL too long",
            "wrong user lookup",
            "key lacks user_id",
        ],
        "action": "Look into all of these.",
        "expected": {"acceptance": ISOLATION, "protective": HITS},
    },
    "invalid/round-3": record(
        "The cache key lacks user_id.",
        "With user_id in the key, user B still receives user A's price.",
        "Change cache_key to return (user_id, product_id).",
        "--- a/pricing.py\n+++ b/pricing.py\n@@ -1,2 +1,2 @@\n-def key(product_id):\n+def key(user_id, product_id):\n     return product_id\n",
    ),
    "invalid/round-4": COMPOSITE,
}

LESSON = {
    "lesson": "Multi-tenant cache keys must cover the tenant boundary.",
    "condition": "A cache shared by several users/tenants whose cached values differ per tenant (per-user prices).",
    "failure_mode": "Cross-tenant leak: one tenant is served another tenant's cached value.",
    "signal": "Two users reading the same product get the same price; the logged cache keys omit the user.",
    "strategy": "Put the tenant dimension in the key, (user_id, product_id); verify isolation AND same-user hits.",
    "counterexample": "Public data that is the same for every user (a product catalogue): a per-user key only multiplies entries and lowers the hit rate.",
    "source": "cache-isolation case, composite-key round (isolation 2/2, same-user hit 2/2)",
    "version": ENV,
    "expires": "when the pricing service or its caching layer changes version",
    "rejected": [
        {
            "claim": "Always add user_id to every cache key.",
            "why_wrong": "It drops the condition (multi-tenant, per-tenant values): public-data caches get bloated per user and their hit rate collapses.",
        }
    ],
}


def main() -> None:
    lines = []
    for key, reply in REPLIES.items():
        text = reply if isinstance(reply, str) else json.dumps(reply, indent=1)
        lines.append({"key": key, "reply": text})
    for branch in ("main", "tempting", "five", "invalid"):
        lines.append({"key": f"{branch}/distill", "reply": json.dumps(LESSON, indent=1)})
    out = HERE / "transcript.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"wrote {len(lines)} scripted replies to {out}")


if __name__ == "__main__":
    main()
