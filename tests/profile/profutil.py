"""Helpers shared by the profile test scripts (run_*.py in this folder): the JSON documents
of a report, and the "[stats] cab total" line that -Xstats prints at exit."""
import json
import re

_TOTAL = re.compile(r"\[stats\] cab total: produced (\d+) consumed (\d+) dropped (\d+) chunks (\d+) "
                    r"blocks (\d+) blocked ([0-9.]+) ms waits outside safepoints (\d+)")


def json_docs(text):
    """The JSON documents of a report, in order (a file may hold one per analysis)."""
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        d, i = dec.raw_decode(text, i)
        docs.append(d)


def cab_total(err):
    """The totals of -Xstats in [err] (stderr of a run) as a dict, with the line itself under
    "line"; None when there is no such line."""
    m = _TOTAL.search(err)
    if m is None:
        return None
    keys = ("produced", "consumed", "dropped", "chunks", "blocks")
    t = {k: int(m.group(i + 1)) for i, k in enumerate(keys)}
    t["blocked_ms"] = float(m.group(6))
    t["waits_outside"] = int(m.group(7))
    t["line"] = m.group(0)
    return t


def nothing_lost(t):
    """Exhaustive: every event produced was consumed and none dropped."""
    return t is not None and t["produced"] == t["consumed"] and t["dropped"] == 0
