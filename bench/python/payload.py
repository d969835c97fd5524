"""Deterministic benchmark payload: 100 users as a nested dict (~23.5 KB as MessagePack)."""
from __future__ import annotations

import random


def users_payload(n: int = 100, seed: int = 1234) -> dict:
    rng = random.Random(seed)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    users = []
    for i in range(n):
        users.append({
            "id": 100000 + i,
            "name": f"{rng.choice(words).title()} {rng.choice(words).title()}",
            "email": f"user{i}@example.com",
            "active": rng.random() > 0.2,
            "score": round(rng.uniform(0, 100), 3),
            "tags": [rng.choice(words) for _ in range(3)],
            "address": {"street": f"{rng.randint(1, 999)} {rng.choice(words).title()} St",
                        "city": rng.choice(words).title(), "zip": f"{rng.randint(10000, 99999)}"},
            "logins": [rng.randint(1_600_000_000, 1_700_000_000) for _ in range(3)],
            "bio": " ".join(rng.choice(words) for _ in range(5)),
            "prefs": {"theme": rng.choice(["dark", "light"]), "lang": rng.choice(["en", "de", "fr"])},
        })
    return {"users": users, "count": n, "page": 1}
