"""The pass/fail tally of the tool tests: check() counts a check and prints it when
it fails (every check with `verbose` set); finish() prints the counts and returns the
exit code (1 on any failure)."""

verbose = False
counts = {"passed": 0, "failed": 0}


def check(name, cond, detail=""):
    counts["passed" if cond else "failed"] += 1
    if not cond:
        print(f"FAIL {name}: {detail}", flush=True)
    elif verbose:
        print(f"ok {name}", flush=True)
    return cond


def finish():
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0
