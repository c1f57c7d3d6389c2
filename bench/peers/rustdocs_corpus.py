#!/usr/bin/env python3
# Kept in the repository so that a clone reproduces the figures of docs/performance.md
# (bench/run.sh runs it); the peers' settings here are the ones those figures used.
"""Build a JSONL corpus from the Rust HTML documentation of installed toolchains.

Each toolchain's docs act as one 'site' (host), so the same page at two versions is a
cross-site near-duplicate, and rustdoc's per-type pages give same-site near-duplicates.
Usage: make_rustdocs_corpus.py OUT.jsonl [--text] [--limit N] TOOLCHAIN...
Each record: {"id", "url", "html"} or, with --text, {"id", "url", "text"}.
"""
import json, os, re, subprocess, sys, html as htmlmod

def sysroot(tc):
    return subprocess.check_output(["rustc", f"+{tc}", "--print", "sysroot"], text=True).strip()

TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.S | re.I)
def to_text(h):
    return re.sub(r"\s+", " ", htmlmod.unescape(TAG.sub(" ", h))).strip()

def main():
    args = sys.argv[1:]
    out = args.pop(0)
    text = "--text" in args
    if text: args.remove("--text")
    limit = None
    if "--limit" in args:
        i = args.index("--limit"); limit = int(args[i + 1]); del args[i:i + 2]
    n = 0
    with open(out, "w") as f:
        for tc in args:
            root = os.path.join(sysroot(tc), "share/doc/rust/html")
            ver = subprocess.check_output(["rustc", f"+{tc}", "--version"], text=True).split()[1]
            host = f"doc-{ver}.rust.example"
            paths = []
            for d, _, files in os.walk(root):
                for fn in files:
                    if fn.endswith(".html"):
                        paths.append(os.path.join(d, fn))
            paths.sort()
            for p in paths:
                rel = os.path.relpath(p, root)
                if rel.startswith("src/"):   # source listings are code, not pages
                    continue
                with open(p, encoding="utf-8", errors="replace") as fh:
                    h = fh.read()
                rec = {"id": f"{ver}/{rel}", "url": f"https://{host}/{rel}"}
                if text: rec["text"] = to_text(h)
                else: rec["html"] = h
                f.write(json.dumps(rec) + "\n")
                n += 1
                if limit and n >= limit: return
    print(n, "records", file=sys.stderr)

main()
