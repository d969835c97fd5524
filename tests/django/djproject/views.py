"""One view that caches what it computes: the second request is served from the cache."""
from django.core.cache import cache
from django.http import HttpResponse

computed = {"count": 0}


def _compute() -> dict:
    computed["count"] += 1
    return {"answer": 42, "computed": computed["count"]}


def answer(request):
    value = cache.get_or_set("answer", _compute, timeout=60)
    return HttpResponse(f"answer={value['answer']} computed={value['computed']}")
