#!/usr/bin/env python3
"""Runs independent check jobs a few at a time and reports each one whole.

    scripts/lanes.py LANES LOG_DIR JOB_FILE

JOB_FILE holds one job per line: `NAME<TAB>WEIGHT<TAB>SHELL COMMAND`. Jobs
start in the file's order (the first that may start), at most LANES at once.
WEIGHT says what may run beside a job:
  light   anything;
  heavy   at most one other heavy job, and no hog;
  hog     (CPU-bound for its whole run) no heavy job and no other hog;
  alone   nothing at all;
and a weight may add tags, each a resource no two running jobs share:
`+db` (heavy+db) for those that hold many PostgreSQL connections, so that
two of them together do not come near the server's limit; `+cpu` for those
that keep a core busy or time what a core does. Each job's output goes to
LOG_DIR/NAME.log; when a job ends its log is printed: whole if it failed,
its summary lines if it passed. At the end a table gives each job's wall
time, the CPU time it and its waited-for children used, and its result.
Exits 1 if any job failed.

scripts/test runs every test binary (the integration tests' one a job per
module) and its end-to-end checks through it (ACP_TEST_LANES at once, three
by default).
"""

import os
import signal
import subprocess
import sys
import time


def summary_lines(text):
    keep = ("test result:", "running ", "# pass", "# fail", "[fuzz ", "passed", "failed")
    lines = [l for l in text.splitlines() if any(k in l for k in keep)]
    return lines[-12:]


def main():
    lanes, log_dir, job_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.makedirs(log_dir, exist_ok=True)
    jobs = []
    with open(job_file) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            name, weight, command = line.split("\t", 2)
            jobs.append((name, weight, command))

    pending = list(jobs)
    # pid -> (name, weight, started, log file, Popen). The Popen is kept:
    # one dropped while its job runs is polled (waitpid) by subprocess when
    # it is collected and again whenever a new one starts, and a job that
    # ended at such a moment was reaped there, never seen by the wait4
    # below, and left "running" for ever (seen: `runs` never ended, so the
    # fleet job, which waits for an empty machine, never started).
    running = {}
    results = []  # (name, wall, cpu, rc)
    started_all = time.monotonic()

    # Stopped, stop every job too: each runs in its own process group.
    def stop(signum, _frame):
        for pid in running:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def may_start(tagged):
        weight, *tags = tagged.split("+")
        held = [w.split("+") for (_, w, _, _, _) in running.values()]
        if any(t in h[1:] for h in held for t in tags):
            return False
        weights = [h[0] for h in held]
        if "alone" in weights:
            return False
        if weight == "alone":
            return not running
        if weight == "hog":
            return "hog" not in weights and "heavy" not in weights
        if weight == "heavy":
            return "hog" not in weights and weights.count("heavy") < 2
        return True

    while pending or running:
        while len(running) < lanes and pending:
            pick = next((j for j in pending if may_start(j[1])), None)
            if pick is None:
                break
            pending.remove(pick)
            name, weight, command = pick
            log = open(os.path.join(log_dir, name + ".log"), "wb")
            proc = subprocess.Popen(
                ["bash", "-c", command], stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
            running[proc.pid] = (name, weight, time.monotonic(), log, proc)
            print(f"[lanes] {time.monotonic() - started_all:6.0f}s start {name}", flush=True)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        name, weight, started, log, proc = running.pop(pid)
        log.close()
        wall = time.monotonic() - started
        cpu = usage.ru_utime + usage.ru_stime
        rc = os.waitstatus_to_exitcode(status)
        # Reaped here: the Popen must not wait for the pid again (it may
        # belong to another process by now).
        proc.returncode = rc
        results.append((name, wall, cpu, rc))
        with open(os.path.join(log_dir, name + ".log"), errors="replace") as f:
            text = f.read()
        verdict = "ok" if rc == 0 else f"FAILED (exit {rc})"
        print(
            f"[lanes] {time.monotonic() - started_all:6.0f}s end {name}: {verdict}"
            f" in {wall:.0f}s (cpu {cpu:.0f}s)",
            flush=True,
        )
        shown = text.splitlines() if rc != 0 else summary_lines(text)
        for l in shown:
            print(f"    {l}")
        sys.stdout.flush()

    total = time.monotonic() - started_all
    print(f"[lanes] {len(results)} jobs in {total:.0f}s, {lanes} lanes:")
    for name, wall, cpu, rc in sorted(results, key=lambda r: -r[1]):
        print(f"    {name:28} {wall:6.0f}s wall {cpu:6.0f}s cpu  {'ok' if rc == 0 else 'FAILED'}")
    failed = [r[0] for r in results if r[3] != 0]
    if failed:
        print(f"[lanes] failed: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
