#!/usr/bin/env python3
"""weir benchmarks over the CLI. Prints one JSON line per figure.

Usage: python3 bench/run_bench.py [--weir build/cli/weir] [--runs 3]
           [--only LETTERS] [--limits DIR] [--data-dir DIR]

(a) wall time of `weir run` for a trivial job, process start to exit
(b) word count throughput (MB/s, MB = MiB) on a generated 50 MB text
    (10,000-word vocabulary), parallelism 2; ratio to wordcount.cpp
(c) keyed sum of 10 million records (key = i mod 1000), records/s, on the
    first records (examples/keyed_sum.json); ratio to keyed_sum.cpp
(d) deploy and finish a job of 10,000 subtasks, subtasks/s
(e) session cluster start (jobmanager + 2 taskmanagers) to a trivial job's result
(f) cross-process exchange between two taskmanagers, MiB/s; and of rows of
    3 int64 fields (sequence -> map select -> rebalance -> discard), rows/s;
    both also as ratios to loopback TCP between two processes measured in
    the same run (bench_exchange_transport's TCP part), with the
    jobmanager's CPU seconds during the exchanges as a share of the
    taskmanagers'
(g) word count of the 50 MB text at parallelism 4 over two taskmanager processes
(h) kill -9 a taskmanager during a job: detection, back to RUNNING, slowdown
(i) SIGSTOP a taskmanager during a job: detection
(j) kill -9 the jobmanager during a job and start it again: restart to RUNNING
(k) checkpoints of a job holding 1 million keys (heap state): size, duration
(l) keyed sum throughput with a checkpoint every second vs. without
(m) kill -9 a taskmanager during a checkpointed job: back to RUNNING from the
    checkpoint, total slowdown
(o) false positives under load: two jobs with 2 M keys of state each and a
    checkpoint every 2 s, for --load-seconds (default 300): TaskExecutors
    declared lost, restarts, checkpoints completed, the jobmanager's peak RSS
(p) false positives under load: a running job while four busy loops
    (`yes > /dev/null`) share the cores, for --load-seconds
(q) keyed sum of 10 million records (key = i mod 1000) on typed rows
    (examples/keyed_sum_rows.json --to 9999999), parallelism 2, records/s;
    ratio to keyed_sum.cpp; the sums are checked against the limit's
(r) the log example (examples/log_bytes.json) on a generated 1 GiB access
    log (10,000 users, ~20% of statuses >= 400, 0.1% malformed lines),
    parallelism 2, MiB/s; ratio to bench/limits/log_bytes.cpp; the per-user
    sums and the skipped lines are checked against the limit's
(s) an embedded host program (bench/first_result.cpp, the C++ API): from
    main() to the first row at the host's actor and to the job's result,
    ms; a fresh process each run (--first-result, default
    build/bench/bench_first_result)
(t) high availability through etcd (a real etcd, two jobmanagers and two
    taskmanagers on loopback): kill -9 the leader during a job; ms to the
    standby's recovered job RUNNING, with the default 10 s lease and a 2 s
    one (docs/deployment.md § etcd); needs /usr/bin/etcd
(u) only when named, with a running Slurm (SLURM_CONF set, sbatch on PATH):
    driver mode with resourcemanager.backend=slurm, from the
    ResourceManager's slot request ("starting worker worker-N") to that
    worker's Slurm job registered ("TaskExecutor worker-N registered"),
    ms, from the application's event log; also the sbatch call's share and
    sbatch's answer to the worker process's first log line (Slurm's
    scheduling and job launch)
(x) a tumbling-window count per key (1,000 keys, 1 s windows) on 100 M
    generated events at parallelism 2 (bench/window_count.json),
    records/s; ratio to bench/limits/window_count.cpp, whose rows are
    checked against the job's (--window-records to change the 100 M)
(y) an embedded job's tumbling 100 ms event-time windows: from a window's
    end to its row at the sink, p50/p99 ms, with watermarks after every
    batch and every 200 ms (bench/window_latency.cpp,
    --window-latency, default build/bench/bench_window_latency)
(v) the simulation (weir-sim, --sim) at 10, 100 and 1,000 taskmanagers
    with one job per ten of them and no faults: the real time of a run,
    and the messages to and from TaskExecutors (heartbeats among them) per
    taskmanager per virtual second as the cluster grows
(w) only when named: the data path between two taskmanagers, measured
    three ways between two processes over loopback (bench/
    exchange_transport.cpp, --exchange-transport): TCP bytes alone, framed
    row batches with credits, and CAF messages over weir's guarded
    transport on a direct connection; MiB/s, and the latter two as ratios
    to TCP (docs/architecture.md § Data plane)
(z) a keyed count holding 1,000,000 keys at parallelism 2, stopped with a
    savepoint and started from it at parallelism 3 (docs/state.md §
    Rescaling): the stop's wall time, and from the new submission to the
    job's RUNNING and to its first completed checkpoint (every subtask has
    restored its key groups by then)
Each figure is the median of --runs runs; the JSON also holds every run.

Figures b, c, q and r are reported as a ratio to a one-thread C++ program
that does the same work with no framework (a "limit"), measured in the same
run, each weir run followed by a limit run: absolute numbers move with the
machine and its load. The limits keyed_sum.cpp and wordcount.cpp are in
--limits (default ../shared/limits beside the checkout), log_bytes.cpp is
bench/limits/; each is compiled with g++ -O2 into the run's temporary
folder. Their JSON holds: value (weir's rate by wall time, process start to
exit) and value_job_runtime (by the "Job Runtime: N ms" weir prints), the
limit's rate (by its own timer), ratio_wall and ratio_job_runtime against
it, target_ratio, cpu_ratio (the limit's CPU time over weir's, both whole
processes: how much more CPU weir spends on the same work, which the load of
the machine moves far less than the rates), weir's peak RSS (os.wait4 of the
weir process: the embedded cluster runs in it), the 1-minute load average
before each run and others_cores, how many cores other processes kept busy
during each run (the machine is shared: 0 is a quiet machine, 2 both cores
busy with others). Generated inputs of r are kept in --data-dir (default
$TMPDIR/weir-bench-data) and reused.
"""
import argparse
import atexit
import datetime
import json
import os
import random
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every process the bench starts, so that each ends with it: a figure that
# times out (SystemExit) or fails, or a bench that is interrupted, leaves
# no jobmanager, taskmanager or etcd behind.
STARTED = []


def popen(cmd, **kwargs):
    """subprocess.Popen, remembered for end_all()."""
    proc = subprocess.Popen(cmd, **kwargs)
    STARTED.append(proc)
    return proc


def end_all():
    """Kills what the bench started and still runs (stopped ones too)."""
    for proc in STARTED:
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass


atexit.register(end_all)
# SIGTERM (a CI timeout, kill) ends the bench through atexit as well.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def timed(cmd):
    """Runs a command, returns wall seconds; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    return elapsed


def repeat(cmd, runs):
    return [timed(cmd) for _ in range(runs)]


def generate_text(path, size_bytes, vocabulary=10_000, seed=42):
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10)))
             for _ in range(vocabulary)]
    written = 0
    with open(path, "w") as f:
        while written < size_bytes:
            line = " ".join(rng.choice(vocab) for _ in range(12)) + "\n"
            f.write(line)
            written += len(line)
    return written


# The access log of figure r: statuses with 20 of 100 at or above 400.
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD"]
METHOD_WEIGHTS = [70, 15, 8, 4, 3]
PATHS = ["/index.html", "/login", "/logout", "/search?q=weir", "/img/logo.png",
         "/api/v1/items", "/api/v1/orders", "/static/app.js",
         "/static/app.css", "/cart", "/checkout", "/help"]
STATUSES = ["200", "201", "204", "301", "304", "400", "401", "403", "404",
            "500", "503"]
STATUS_WEIGHTS = [60, 5, 3, 5, 7, 3, 3, 2, 8, 2, 2]
BAD_STATUSES = ["OK", "-", "ERR"]


def generate_access_log(path, size_bytes, users=10_000, seed=7, chunk=50_000):
    """Writes lines like `2026-11-30T10:00:01Z user42 GET /index.html 200
    512` until `size_bytes` (one second apart; bytes 0..100000; 1 line in
    1000 with a non-numeric status), to a temporary name first, so that a
    file at `path` is always whole. Returns its size."""
    rng = random.Random(seed)
    names = [f"user{u}" for u in range(users)]
    clock = [f"{h:02d}:{m:02d}:{s:02d}" for h in range(24) for m in range(60)
             for s in range(60)]
    written = second = 0
    partial = path + ".partial"
    with open(partial, "w") as f:
        while written < size_bytes:
            user = rng.choices(names, k=chunk)
            method = rng.choices(METHODS, METHOD_WEIGHTS, k=chunk)
            where = rng.choices(PATHS, k=chunk)
            status = rng.choices(STATUSES, STATUS_WEIGHTS, k=chunk)
            size = rng.choices(range(100_001), k=chunk)
            for i in rng.sample(range(chunk), chunk // 1000):
                status[i] = rng.choice(BAD_STATUSES)
            lines = []
            for i in range(chunk):
                day, s = divmod(second + i, 86400)
                lines.append(f"2026-11-{1 + day % 30:02d}T{clock[s]}Z {user[i]} "
                             f"{method[i]} {where[i]} {status[i]} {size[i]}\n")
            second += chunk
            text = "".join(lines)
            f.write(text)
            written += len(text)
    os.replace(partial, path)
    return written


JOB_RUNTIME = re.compile(r"Job Runtime: (\d+) ms")


def busy_cpu_s():
    """CPU seconds the machine's cores have been busy since boot
    (/proc/stat)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pids):
    """CPU seconds the processes `pids` have used (/proc/PID/stat)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def measured(cmd, stdout_path=None, cluster=()):
    """Runs a command once. Returns its wall seconds, weir's own "Job
    Runtime" in seconds (None without one), its peak RSS in MiB (os.wait4:
    this process, and any children it waited for), its stderr, its stdout
    (unless written to `stdout_path`), the 1-minute load average before it
    started and others_cores: how many cores other processes kept busy
    meanwhile, on average (the machine's busy time from /proc/stat less the
    CPU time of the command and of the `cluster` processes it runs on, over
    the wall time). Fails loudly on a non-zero exit."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as err, \
            (open(stdout_path, "wb") if stdout_path
             else tempfile.TemporaryFile()) as out:
        busy = busy_cpu_s() - process_cpu_s(cluster)
        start = time.perf_counter()
        proc = popen(cmd, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        others = busy_cpu_s() - process_cpu_s(cluster) - busy \
            - usage.ru_utime - usage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
        out.seek(0)
        printed = None if stdout_path else out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {text}")
    m = JOB_RUNTIME.search(text)
    return {"wall_s": wall, "job_s": int(m.group(1)) / 1000 if m else None,
            "rss_mib": usage.ru_maxrss / 1024, "stderr": text,
            "stdout": printed, "load": load,
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "others_cores": round(max(others, 0) / wall, 2)}


def limit_program(tmp, limits, name):
    """The limit `name` compiled with g++ -O2 into `tmp` (once per run):
    log_bytes from bench/limits/, the others from `limits`."""
    exe = os.path.join(tmp, "limits", name)
    if not os.path.exists(exe):
        folder = os.path.join(ROOT, "bench/limits") \
            if name in ("log_bytes", "window_count") else limits
        src = os.path.join(folder, name + ".cpp")
        if not os.path.exists(src):
            raise SystemExit(f"limit program {src} not found (--limits DIR: "
                             "the folder of keyed_sum.cpp and wordcount.cpp)")
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        subprocess.run(["g++", "-O2", "-std=c++17", src, "-o", exe],
                       check=True)
    return exe


def run_limit(cmd):
    """Runs a limit program once: its JSON line, with the load of the
    machine (as measured() has it)."""
    run = measured(cmd)
    return dict(json.loads(run["stdout"].splitlines()[0]), load=run["load"],
                cpu_s=run["cpu_s"], others_cores=run["others_cores"])


def alternate(runs, weir_run, limit_run):
    """`runs` pairs: a weir run, then a limit run, so that both see the same
    load. Returns the two lists."""
    pairs = [(weir_run(), limit_run()) for _ in range(runs)]
    return [w for w, _ in pairs], [l for _, l in pairs]


def emit_vs_limit(name, unit, work, weir, limits, limit_name,
                  target_ratio=None, target=None, **extra):
    """Prints a figure against its limit. `work`: what both did (records,
    MiB), `weir`: measured() runs, `limits`: run_limit() runs (their
    "seconds" is the limit's own timer). Rates are of the median runs;
    `target` is one for weir's rate by wall time, `target_ratio` for the
    ratios."""
    med = statistics.median
    wall = med(r["wall_s"] for r in weir)
    job = med(r["job_s"] for r in weir)
    limit = med(l["seconds"] for l in limits)
    ratio_wall, ratio_job = limit / wall, limit / job
    figure = {"figure": name, "value": round(work / wall, 3), "unit": unit,
              "value_job_runtime": round(work / job, 3)}
    if target is not None:
        figure.update(target=target, met=work / wall >= target)
    figure.update(
        limit={"program": limit_name, "value": round(work / limit, 3),
               "runs_s": [l["seconds"] for l in limits],
               "cpu_s": [l["cpu_s"] for l in limits],
               "load_avg_1m": [round(l["load"], 2) for l in limits],
               "others_cores": [l["others_cores"] for l in limits]},
        ratio_wall=round(ratio_wall, 3), ratio_job_runtime=round(ratio_job, 3),
        cpu_ratio=round(med(l["cpu_s"] for l in limits)
                        / med(r["cpu_s"] for r in weir), 3))
    if target_ratio is not None:
        figure.update(target_ratio=target_ratio,
                      met_ratio_wall=ratio_wall >= target_ratio,
                      met_ratio_job_runtime=ratio_job >= target_ratio)
    figure.update(
        extra, runs_s=[round(r["wall_s"], 4) for r in weir],
        job_runtime_s=[r["job_s"] for r in weir],
        cpu_s=[r["cpu_s"] for r in weir],
        peak_rss_mib=round(max(r["rss_mib"] for r in weir), 1),
        peak_rss_mib_runs=[round(r["rss_mib"], 1) for r in weir],
        load_avg_1m=[round(r["load"], 2) for r in weir],
        others_cores=[r["others_cores"] for r in weir])
    print(json.dumps(figure), flush=True)


def same_as_limit(figure, runs, limits, fields):
    """Fails loudly unless every weir run found what the limit found: the
    same value of each of `fields`."""
    want = {f: limits[0][f] for f in fields}
    for run in runs:
        got = {f: run[f] for f in fields}
        if got != want:
            raise SystemExit(f"{figure}: weir's result {got} differs from "
                             f"the limit's {want}")


def tab_separated(path):
    """A sink's "key<TAB>value" lines as a dict of int values."""
    with open(path) as f:
        return {k: int(v) for k, v in (line.rstrip("\n").split("\t")
                                       for line in f)}


class Session:
    """A jobmanager on a free port and taskmanagers, as real processes."""

    tails = {}  # process -> its LogTail

    def __init__(self, weir, tmp, workers, slots, extra=(), port="0",
                 node_flags=()):
        self.procs = []
        self.weir = weir
        self.state = os.path.join(tmp, f"state-{time.time_ns()}")
        self.extra = list(extra) + list(node_flags)
        try:
            self.jm = self.start_jobmanager(port)
            self.workers = []
            for i in range(workers):
                self.workers.append(self.spawn(
                    [weir, "taskmanager", "-m", self.address, "--slots",
                     str(slots), "--id", f"tm-{i}"] + list(node_flags)))
                self.wait_for(self.jm, rf"TaskExecutor tm-{i} registered")
        except BaseException:
            # A start that timed out: nothing of it stays.
            self.close()
            raise

    def start_jobmanager(self, port):
        # Workers use the RPC port (address), clients the REST API (rest),
        # both kept when the jobmanager starts again on `port`.
        rest_port = getattr(self, "rest", ":0").rsplit(":", 1)[1]
        jm = self.spawn([self.weir, "jobmanager", "--port", port, "--state-dir",
                         self.state, "-Drest.port=" + rest_port] + self.extra)
        line = self.wait_for(
            jm, r"listening on (\S+):(\d+),.*REST API at https?://([0-9.:]+)")
        self.address = f"{line.group(1)}:{line.group(2)}"
        self.rest = line.group(3)
        return jm

    def spawn(self, cmd):
        proc = popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    @staticmethod
    def wait_for(proc, pattern, timeout=30):
        """The match of the first new stderr line of `proc` matching: read
        from the raw pipe (LogTail), as the jobmanager writes two lines at
        once when it starts."""
        tail = Session.tails.setdefault(proc, LogTail(proc))
        return tail.wait_for(pattern, timeout)[1]

    @staticmethod
    def stamp(proc, pattern, timeout=30):
        """Wall-clock seconds of the log line matching `pattern`."""
        m = Session.wait_for(proc, r"^(\S+)Z .*" + pattern, timeout)
        return time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S")) \
            - time.timezone + float("0" + m.group(1)[19:])

    def close(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def tls_flags(weir, tmp):
    """-D flags of mutual TLS for nodes and for a client, with certificates
    made by `weir cert` (once per run)."""
    d = os.path.join(tmp, "certs")
    if not os.path.exists(d):
        for cmd in (["ca"], ["node", "--name", "node"],
                    ["client", "--name", "client"]):
            subprocess.run([weir, "cert", cmd[0], "--dir", d] + cmd[1:],
                           check=True, stdout=subprocess.DEVNULL)

    def flags(name):
        return ["-Dsecurity.ssl.internal.enabled=true",
                f"-Dsecurity.ssl.internal.certificate={d}/{name}.pem",
                f"-Dsecurity.ssl.internal.key={d}/{name}-key.pem",
                f"-Dsecurity.ssl.internal.trust-certificates={d}/ca.pem"]
    return flags("node"), flags("client")


# Figures e and f run without and with TLS, side by side: (suffix, node
# flags, client flags).
def transports(weir, tmp):
    node, client = tls_flags(weir, tmp)
    return [("", [], []), ("_tls", node, client)]


def emit(name, unit, value, runs, target, higher_is_better, **extra):
    met = value >= target if higher_is_better else value <= target
    print(json.dumps({"figure": name, "value": round(value, 3), "unit": unit,
                      "target": target, "met": met,
                      "runs_s": [round(r, 4) for r in runs], **extra}),
          flush=True)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weir", default=os.path.join(ROOT, "build/cli/weir"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--first-result", default="build/bench/bench_first_result",
                        help="the program of figure s")
    parser.add_argument("--exchange-transport",
                        default="build/bench/bench_exchange_transport",
                        help="the program of figure w")
    parser.add_argument("--sim", default="build/sim/weir-sim",
                        help="the program of figure v")
    parser.add_argument("--only", default="abcdefghijklmnqrstvxyz",
                        help="the figures' letters (o, p, u and w: only "
                        "when named)")
    parser.add_argument("--load-seconds", type=int, default=300)
    parser.add_argument("--window-records", type=int, default=100_000_000,
                        help="events of figure x")
    parser.add_argument("--window-latency",
                        default="build/bench/bench_window_latency",
                        help="the program of figure y")
    parser.add_argument("--limits", default=os.path.join(
        os.path.dirname(ROOT), "shared", "limits"),
        help="folder of keyed_sum.cpp and wordcount.cpp")
    parser.add_argument("--data-dir", default=os.path.join(
        tempfile.gettempdir(), "weir-bench-data"),
        help="generated inputs kept between runs (figure r)")
    args = parser.parse_args()
    weir = args.weir
    with tempfile.TemporaryDirectory() as tmp:
        if "a" in args.only:
            runs = repeat([weir, "run", "examples/collect.json", "--to", "10"],
                          max(args.runs, 10))
            emit("a_trivial_job_wall_time", "ms", statistics.median(runs) * 1000,
                 runs, 50, False)
        if "b" in args.only:
            wordcount_figure(weir, tmp, args)
        if "c" in args.only:
            keyed_sum = limit_program(tmp, args.limits, "keyed_sum")
            runs, limits = alternate(
                args.runs,
                lambda: measured([weir, "run", "examples/keyed_sum.json",
                                  "--to", "10000000", "--modulus", "1000"]),
                lambda: run_limit([keyed_sum, "10000000", "1000"]))
            emit_vs_limit("c_keyed_sum_throughput", "records/s", 10_000_000,
                          runs, limits, "keyed_sum.cpp", target_ratio=1.0,
                          target=30_000_000)
        if "d" in args.only:
            spec = os.path.join(tmp, "wide.json")
            with open(spec, "w") as f:
                json.dump({"name": "wide", "parallelism": 10000,
                           "vertices": [
                               {"id": "numbers", "operator": "sequence",
                                "params": {"from": 1, "to": 10000}},
                               {"id": "sink", "operator": "discard"}],
                           "edges": [{"from": "numbers", "to": "sink",
                                      "partitioning": "forward"}]}, f)
            runs = repeat([weir, "run", spec], args.runs)
            emit("d_subtask_deploy_rate", "subtasks/s",
                 10_000 / statistics.median(runs), runs, 20_000, True)
        if "e" in args.only:
            for suffix, node, client in transports(weir, tmp):
                runs = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    session = Session(weir, tmp, workers=2, slots=1,
                                      node_flags=node)
                    try:
                        timed([weir, "run", "-m", session.rest,
                               "examples/collect.json", "--to", "10"] + client)
                        runs.append(time.perf_counter() - start)
                    finally:
                        session.close()
                emit("e_session_start_to_result" + suffix, "ms",
                     statistics.median(runs) * 1000, runs, 300, False)
        if "f" in args.only:
            lines = os.path.join(tmp, "lines.txt")
            with open(lines, "w") as f:
                row = "x" * 1000 + "\n"
                for _ in range(200_000):
                    f.write(row)
            size = os.path.getsize(lines)
            spec = os.path.join(tmp, "exchange.json")
            # Subtask k of both vertices shares slot k; with one slot per
            # worker, half of each reader's batches cross to the other
            # process (rebalance).
            with open(spec, "w") as f:
                json.dump({"name": "exchange", "parallelism": 2,
                           "vertices": [
                               {"id": "lines", "operator": "text_file",
                                "params": {"path": lines}},
                               {"id": "sink", "operator": "discard"}],
                           "edges": [{"from": "lines", "to": "sink",
                                      "partitioning": "rebalance"}]}, f)
            crossed = size / 2 / (1024 * 1024)
            rows_spec = os.path.join(tmp, "exchange_rows.json")
            with open(rows_spec, "w") as f:
                json.dump(EXCHANGE_ROWS, f)
            for suffix, node, client in transports(weir, tmp):
                # The wire in the same run: loopback TCP between two
                # processes (machines of one kind differ 2x in speed).
                wire = loopback_tcp_mib_s(args.exchange_transport, args.runs)
                session = Session(weir, tmp, workers=2, slots=1,
                                  node_flags=node)
                try:
                    jm, tms = session.jm.pid, [w.pid for w in session.workers]
                    cpu_before = (process_cpu_s([jm]), process_cpu_s(tms))
                    runs = repeat([weir, "run", "-m", session.rest, spec]
                                  + client, args.runs)
                    rows = [measured([weir, "run", "-m", session.rest,
                                      rows_spec] + client,
                                     cluster=[p.pid for p in session.procs])
                            for _ in range(args.runs)]
                    jm_cpu = process_cpu_s([jm]) - cpu_before[0]
                    tm_cpu = process_cpu_s(tms) - cpu_before[1]
                finally:
                    session.close()
                rate = crossed / statistics.median(runs)
                # The goals: half the wire without TLS, 0.3 with.
                emit("f_cross_process_exchange" + suffix, "MiB/s", rate, runs,
                     500, True, crossed_mib=round(crossed, 1),
                     loopback_tcp_mib_s=round(wire, 1),
                     ratio_to_loopback_tcp=round(rate / wire, 3),
                     ratio_target=0.3 if suffix else 0.5,
                     jobmanager_cpu_s=round(jm_cpu, 2),
                     taskmanagers_cpu_s=round(tm_cpu, 2),
                     jobmanager_cpu_share=round(jm_cpu / tm_cpu, 4)
                     if tm_cpu > 0 else None)
                emit_exchange_rows("f_cross_process_exchange_rows" + suffix,
                                   rows, wire)
        if "g" in args.only:
            text = os.path.join(tmp, "words.txt")
            if not os.path.exists(text):
                generate_text(text, 50 * 1024 * 1024)
            size = os.path.getsize(text)
            out = os.path.join(tmp, "counts-g.txt")
            session = Session(weir, tmp, workers=2, slots=2)
            try:
                runs = repeat([weir, "run", "-m", session.rest,
                               "examples/wordcount.json", "-p", "4", "--input",
                               text, "--output", out], args.runs)
            finally:
                session.close()
            mb = size / (1024 * 1024)
            emit("g_wordcount_two_workers", "MB/s", mb / statistics.median(runs),
                 runs, 130, True, input_mb=round(mb, 1))
        if set("hij") & set(args.only):
            failure_figures(weir, tmp, args.only)
        if set("klm") & set(args.only):
            checkpoint_figures(weir, tmp, args.only, args.runs)
        if "n" in args.only:
            driver_figures(weir, tmp, args.runs)
        if set("op") & set(args.only):
            load_figures(weir, tmp, args.only, args.load_seconds)
        if "q" in args.only:
            keyed_sum_rows_figure(weir, tmp, args)
        if "r" in args.only:
            log_bytes_figure(weir, tmp, args)
        if "s" in args.only:
            first_result_figure(args.first_result, max(args.runs, 10))
        if "t" in args.only:
            etcd_failover_figure(weir, tmp, args.runs)
        if "u" in args.only:
            slurm_worker_figure(weir, tmp, args.runs)
        if "v" in args.only:
            simulation_scale_figure(args.sim, args.runs)
        if "w" in args.only:
            exchange_transport_figure(args.exchange_transport, args.runs)
        if "x" in args.only:
            window_count_figure(weir, tmp, args)
        if "y" in args.only:
            window_latency_figure(args.window_latency, args.runs)
        if "z" in args.only:
            rescale_figure(weir, tmp, args.runs)


def rescale_figure(weir, tmp, runs):
    """(z) A keyed count with 1,000,000 keys of state, stopped with a
    savepoint at parallelism 2 and started from it at 3: the stop's wall
    time, then submission to the job's RUNNING and to its first completed
    checkpoint (every subtask has restored its share by then). Then the
    same job rescaled in place back to 2 (`weir rescale`): the command's
    wall time (it returns once every subtask runs at 2) and the time to
    the next completed checkpoint."""
    figures = []
    for run_index in range(runs):
        session = Session(weir, tmp, workers=2, slots=2)
        try:
            spec = os.path.join(tmp, f"rescale-{run_index}.json")
            with open(spec, "w") as f:
                json.dump({"name": "rescale", "parallelism": 2,
                           "config": {"execution.checkpointing.interval": "1 s"},
                           "vertices": [
                               {"id": "events", "operator": "generator",
                                "params": {"keys": 1_000_000}},
                               {"id": "counts", "operator": "count"},
                               {"id": "out", "operator": "discard"}],
                           "edges": [{"from": "events", "to": "counts",
                                      "partitioning": "hash"},
                                     {"from": "counts", "to": "out",
                                      "partitioning": "forward"}]}, f)
            out = subprocess.run([weir, "run", "-m", session.rest, "-d", spec],
                                 cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout
            job = out.strip().splitlines()[-1]
            # Three checkpoints: every key has a count by then (the generator
            # makes millions of records a second).
            session.wait_for(session.jm, r"\(rescale\) completed checkpoint 3 ",
                             timeout=120)
            start = time.perf_counter()
            stopped = subprocess.run(
                [weir, "stop", "-m", session.rest, job, "--savepointPath",
                 os.path.join(tmp, f"savepoints-{run_index}")],
                cwd=ROOT, capture_output=True, text=True, check=True).stdout
            stop_s = time.perf_counter() - start
            savepoint = stopped.split("Savepoint completed. Path: ")[1].split()[0]
            submit_wall = time.time()
            resumed = subprocess.run(
                [weir, "run", "-m", session.rest, "-d", "-p", "3", "-s",
                 savepoint, spec], cwd=ROOT, capture_output=True, text=True,
                check=True).stdout.strip().splitlines()[-1]
            running = Session.stamp(
                session.jm, r"\(rescale\) switched from CREATED to RUNNING",
                timeout=120)
            restored = Session.stamp(
                session.jm, r"\(rescale\) completed checkpoint \d+ ", timeout=120)
            # In place, back to 2 (weir rescale): a checkpoint, every
            # subtask stopped, the round at 2 restoring it; the command
            # returns once every subtask runs, then the next checkpoint.
            start = time.perf_counter()
            rescale_wall = time.time()
            subprocess.run([weir, "rescale", "-m", session.rest, resumed,
                            "-p", "2"], cwd=ROOT, capture_output=True,
                           check=True)
            in_place_s = time.perf_counter() - start
            Session.wait_for(session.jm,
                             r"\(rescale\) is rescaled to parallelism 2",
                             timeout=120)
            # The first checkpoint after it (the log is read in order).
            next_checkpoint = Session.stamp(
                session.jm, r"\(rescale\) completed checkpoint \d+ ",
                timeout=120)
            figures.append({"stop_ms": stop_s * 1000,
                            "savepoint_bytes": os.path.getsize(savepoint),
                            "running_ms": (running - submit_wall) * 1000,
                            "restored_ms": (restored - submit_wall) * 1000,
                            "in_place_ms": in_place_s * 1000,
                            "in_place_checkpoint_ms":
                                (next_checkpoint - rescale_wall) * 1000})
        finally:
            session.close()
    median = {k: statistics.median(f[k] for f in figures) for k in figures[0]}
    print(json.dumps({"figure": "z_rescale_1m_keys_2_to_3",
                      "stop_ms": round(median["stop_ms"], 1),
                      "submit_to_running_ms": round(median["running_ms"], 1),
                      "submit_to_first_checkpoint_ms":
                          round(median["restored_ms"], 1),
                      "stop_to_restored_ms":
                          round(median["stop_ms"] + median["restored_ms"], 1),
                      "savepoint_bytes": int(median["savepoint_bytes"]),
                      "runs": len(figures)}), flush=True)
    print(json.dumps({"figure": "z_rescale_in_place_1m_keys_3_to_2",
                      "rescale_ms": round(median["in_place_ms"], 1),
                      "rescale_to_next_checkpoint_ms":
                          round(median["in_place_checkpoint_ms"], 1),
                      "runs": len(figures)}), flush=True)


def simulation_scale_figure(program, runs):
    """(v) weir-sim at 10, 100 and 1,000 taskmanagers of 4 slots (one job
    per 10 taskmanagers, no faults): the real time of one seed's run, and
    the control plane's cost per taskmanager per virtual second (messages
    to and from TaskExecutors, heartbeats among them) as the cluster
    grows (docs/simulation.md § Scale)."""
    stats = re.compile(r"(\d+) messages, ([\d.]+) s virtual in (\d+) ms real, "
                       r"(\d+)/(\d+) jobs ended; per taskmanager per virtual "
                       r"second: ([\d.]+) TaskExecutor messages \(([\d.]+) "
                       r"heartbeats\)")
    for tms in (10, 100, 1000):
        results = []
        for seed in range(1, runs + 1):
            out = subprocess.run(
                [program, "--seed", str(seed), "--taskmanagers", str(tms),
                 "--jobs", str(tms // 10), "--faults", "none", "--stats"],
                check=True, capture_output=True, text=True,
                timeout=600).stdout
            m = stats.search(out)
            results.append([float(x) for x in m.groups()])
        med = statistics.median
        emit(f"v_sim_{tms}_taskmanagers_real_time", "ms",
             med(r[2] for r in results), [r[2] / 1000 for r in results],
             10_000, False,
             messages=med(r[0] for r in results),
             virtual_s=med(r[1] for r in results),
             jobs_ended=min(r[3] for r in results), jobs=tms // 10,
             te_messages_per_tm_per_s=med(r[5] for r in results),
             heartbeats_per_tm_per_s=med(r[6] for r in results))


def window_latency_figure(program, runs):
    """(y) A window's end to its row at the sink: `runs` runs of 10 s
    each, with watermarks after every batch (interval 0) and at Flink's
    default 200 ms; the medians of the runs' p50 and p99."""
    for interval in ("0", "200"):
        results = []
        for _ in range(runs):
            out = subprocess.run([program, "10", interval], check=True,
                                 capture_output=True, text=True,
                                 timeout=120).stdout
            results.append(json.loads(out))
        med = statistics.median
        emit(f"y_window_latency_interval_{interval}ms", "ms p99",
             med(r["p99_ms"] for r in results),
             [r["p99_ms"] / 1000 for r in results], 10, False,
             p50_ms=med(r["p50_ms"] for r in results),
             max_ms=max(r["max_ms"] for r in results),
             windows_rows=sum(r["rows"] for r in results))


def window_count_figure(weir, tmp, args):
    """(x) Tumbling-window counts of --window-records events against
    bench/limits/window_count.cpp; every run's rows (how many, and a sum
    over them of (key + 1) * (window start in s + 1) * count) are checked
    against the limit's."""
    n = args.window_records
    limit = limit_program(tmp, args.limits, "window_count")
    out = os.path.join(tmp, "windows-x.txt")

    def weir_run():
        run = measured([weir, "run", "bench/window_count.json",
                        "--to", str(n - 1), "--half", str(n // 2)],
                       stdout_path=out)
        rows = 0
        check = 0
        with open(out) as f:
            for line in f:
                k, start, count = (int(x) for x in line.split("\t"))
                rows += 1
                check += (k + 1) * (start + 1) * count
        return dict(run, windows=rows, check=check)
    runs, limits = alternate(args.runs, weir_run,
                             lambda: run_limit([limit, str(n)]))
    same_as_limit("x", runs, limits, ["windows", "check"])
    emit_vs_limit("x_window_count_throughput", "records/s", n, runs, limits,
                  "window_count.cpp", target_ratio=1.0)


def exchange_transport_figure(program, runs):
    """(w) The data path between two taskmanagers: each run of `program`
    measures TCP, framed batches and CAF messages back to back, so their
    ratios hold while the machine's speed drifts; the medians of `runs`."""
    results = []
    for _ in range(runs):
        out = subprocess.run([program, "256"], check=True, capture_output=True,
                             text=True, timeout=600).stdout
        results.append(json.loads(out))
    med = statistics.median
    # The target is the exchange's in the data-plane issue: half the wire.
    emit("w_exchange_framed_ratio", "ratio to TCP",
         med(r["framed_ratio"] for r in results),
         [r["framed_ratio"] for r in results], 0.5, True,
         tcp_mib_s=med(r["tcp"] for r in results),
         framed_mib_s=med(r["framed"] for r in results),
         caf_direct_mib_s=med(r["caf_direct"] for r in results),
         caf_direct_ratio=med(r["caf_direct_ratio"] for r in results))


def first_result_figure(program, runs):
    """(s) An embedded host program's time to its first result: the median
    of `runs` fresh processes; every run also says how long building the
    job took (build_us), what the builder adds to a submission."""
    results = []
    for _ in range(runs):
        out = subprocess.run([program], check=True, capture_output=True,
                             text=True).stdout
        results.append(json.loads(out))
    med = statistics.median
    emit("s_embedded_first_row", "ms", med(r["first_row_ms"] for r in results),
         [r["first_row_ms"] / 1000 for r in results], 100, False,
         result_ms=med(r["result_ms"] for r in results),
         cluster_started_ms=med(r["cluster_started_ms"] for r in results),
         build_us=med(r["build_us"] for r in results))


def wordcount_figure(weir, tmp, args):
    """(b) Word count of 50 MB against wordcount.cpp; every run's counts
    (words, distinct words) are checked against the limit's."""
    text = os.path.join(tmp, "words.txt")
    size = generate_text(text, 50 * 1024 * 1024)
    out = os.path.join(tmp, "counts.txt")
    wordcount = limit_program(tmp, args.limits, "wordcount")

    def weir_run():
        run = measured([weir, "run", "examples/wordcount.json", "-p", "2",
                        "--input", text, "--output", out])
        counts = tab_separated(out)
        return dict(run, words=sum(counts.values()), distinct=len(counts))
    runs, limits = alternate(args.runs, weir_run,
                             lambda: run_limit([wordcount, text]))
    same_as_limit("b", runs, limits, ["words", "distinct"])
    mb = size / (1024 * 1024)
    emit_vs_limit("b_wordcount_throughput", "MB/s", mb, runs, limits,
                  "wordcount.cpp", target_ratio=1.6, target=130,
                  input_mb=round(mb, 1), words=limits[0]["words"],
                  distinct=limits[0]["distinct"])


def keyed_sum_rows_figure(weir, tmp, args):
    """(q) The keyed sum of figure c on typed rows (records 0..9,999,999, as
    keyed_sum.cpp sums them) against keyed_sum.cpp; every run's sums are
    checked against the limit's: as many keys, the same XOR of the sums."""
    keyed_sum = limit_program(tmp, args.limits, "keyed_sum")
    out = os.path.join(tmp, "sums-q.txt")

    def weir_run():
        run = measured([weir, "run", "examples/keyed_sum_rows.json", "-p", "2",
                        "--to", "9999999"], stdout_path=out)
        sums = tab_separated(out)
        check = 0
        for v in sums.values():
            check ^= v
        return dict(run, keys=len(sums), check=check)
    runs, limits = alternate(
        args.runs, weir_run,
        lambda: run_limit([keyed_sum, "10000000", "1000"]))
    same_as_limit("q", runs, limits, ["keys", "check"])
    emit_vs_limit("q_keyed_sum_rows_throughput", "records/s", 10_000_000,
                  runs, limits, "keyed_sum.cpp", target_ratio=1.0)


def log_bytes_figure(weir, tmp, args):
    """(r) The log example on a 1 GiB access log (generated once into
    --data-dir and reused) against bench/limits/log_bytes.cpp. Every run's
    per-user sums and skipped lines are checked against the limit's."""
    os.makedirs(args.data_dir, exist_ok=True)
    # v1: a new name whenever generate_access_log writes other lines.
    log = os.path.join(args.data_dir, "access-1gib-seed7-v1.log")
    if not os.path.exists(log):
        generate_access_log(log, 1024 * 1024 * 1024)
    # Read once, so that every run reads it from the page cache.
    with open(log, "rb") as f:
        while f.read(16 * 1024 * 1024):
            pass
    log_bytes = limit_program(tmp, args.limits, "log_bytes")
    want_path = os.path.join(tmp, "log-sums-limit.txt")
    out = os.path.join(tmp, "log-sums.txt")

    def weir_run():
        run = measured([weir, "run", "examples/log_bytes.json", "-p", "2",
                        "--input", log, "--output", out])
        skipped = re.search(r"Skipped: (\d+) record", run["stderr"])
        return dict(run, sums=tab_separated(out),
                    skipped=int(skipped.group(1)) if skipped else 0)
    runs, limits = alternate(args.runs, weir_run,
                             lambda: run_limit([log_bytes, log, want_path]))
    want = tab_separated(want_path)
    for run in runs:
        got = run.pop("sums")
        if got != want:
            wrong = sorted(k for k in set(got) | set(want)
                           if got.get(k) != want.get(k))
            raise SystemExit(
                f"r: weir's sums differ from log_bytes.cpp's for {len(wrong)} "
                f"users, e.g. " + ", ".join(
                    f"{k}: weir {got.get(k)}, limit {want.get(k)}"
                    for k in wrong[:5]))
    same_as_limit("r", runs, limits, ["skipped"])
    mib = os.path.getsize(log) / (1024 * 1024)
    emit_vs_limit("r_log_bytes_1gib", "MiB/s", mib, runs, limits,
                  "bench/limits/log_bytes.cpp", input_mib=round(mib, 1),
                  lines=limits[0]["lines"], kept=limits[0]["kept"],
                  skipped=limits[0]["skipped"], users=len(want))


# Figure f's rows: three int64 fields (24 bytes of values a row) made from a
# sequence by the expression engine; like f's lines, subtask k of both
# vertices shares slot k of worker k, so half of the rows cross to the other
# process (rebalance).
EXCHANGE_ROWS_COUNT = 50_000_000
EXCHANGE_ROWS = {
    "name": "exchange_rows", "parallelism": 2,
    "vertices": [
        {"id": "numbers", "operator": "sequence",
         "params": {"from": 0, "to": EXCHANGE_ROWS_COUNT - 1}},
        {"id": "rows", "operator": "map",
         "params": {"select": "value as a, value * 2 as b, value % 7 as c"}},
        {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "numbers", "to": "rows", "partitioning": "forward"},
              {"from": "rows", "to": "sink", "partitioning": "rebalance"}]}


def loopback_tcp_mib_s(program, runs):
    """Loopback TCP between two processes, MiB/s: the median of `runs`
    runs of bench_exchange_transport's TCP part (1 GiB each)."""
    results = []
    for _ in range(runs):
        out = subprocess.run([program, "1024", "tcp"], check=True,
                             capture_output=True, text=True,
                             timeout=600).stdout
        results.append(json.loads(out)["tcp"])
    return statistics.median(results)


def emit_exchange_rows(name, runs, wire):
    """Prints figure f's rows variant: rows/s through the job by wall time
    (the client's process start to exit) and by weir's Job Runtime, and by
    wall time the rows and values' MiB/s that crossed between the processes
    (half of them), also as a ratio to loopback TCP (`wire`, MiB/s)."""
    wall = statistics.median(r["wall_s"] for r in runs)
    job = statistics.median(r["job_s"] for r in runs)
    crossed = EXCHANGE_ROWS_COUNT / 2
    print(json.dumps({
        "figure": name, "value": round(EXCHANGE_ROWS_COUNT / wall),
        "unit": "rows/s",
        "value_job_runtime": round(EXCHANGE_ROWS_COUNT / job),
        "crossed_rows_per_s": round(crossed / wall),
        "crossed_mib_per_s": round(crossed * 24 / 2**20 / wall, 1),
        "crossed_mib_per_s_job_runtime": round(crossed * 24 / 2**20 / job, 1),
        "ratio_to_loopback_tcp": round(crossed * 24 / 2**20 / wall / wire, 3),
        "rows": EXCHANGE_ROWS_COUNT, "fields": "a: int64, b: int64, c: int64",
        "runs_s": [round(r["wall_s"], 4) for r in runs],
        "job_runtime_s": [r["job_s"] for r in runs],
        "load_avg_1m": [round(r["load"], 2) for r in runs],
        "others_cores": [r["others_cores"] for r in runs]}), flush=True)


PACED = {"name": "paced", "parallelism": 2,
         "vertices": [
             {"id": "events", "operator": "generator",
              "params": {"count": 6000, "rate": 1000, "keys": 7}},
             {"id": "counts", "operator": "count"},
             {"id": "out", "operator": "collect", "parallelism": 1}],
         "edges": [{"from": "events", "to": "counts", "partitioning": "hash"},
                   {"from": "counts", "to": "out", "partitioning": "rebalance"}]}


def run_and_hit(weir, session, spec, pause_s, sig):
    """Starts `spec` attached in the background, waits until it runs, lets
    it run `pause_s` (benchmark pacing, not a test wait) and sends `sig` to
    the first taskmanager. Returns (the run process, start time, hit time)."""
    start = time.perf_counter()
    run = popen([weir, "run", "-m", session.rest, spec],
                           cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    session.wait_for(session.jm, r"\(paced\) switched from CREATED to RUNNING")
    time.sleep(pause_s)
    hit = time.time()
    session.workers[0].send_signal(sig)
    return run, start, hit


def failure_figures(weir, tmp, only):
    spec = os.path.join(tmp, "paced.json")
    with open(spec, "w") as f:
        json.dump(PACED, f)
    restart = ["-Drestart-strategy.type=fixed-delay",
               "-Drestart-strategy.fixed-delay.delay=50 ms"]
    baseline = None
    for sig, name in ((signal.SIGKILL, "h"), (signal.SIGSTOP, "i")):
        if name not in only:
            continue
        session = Session(weir, tmp, workers=2, slots=2, extra=restart)
        try:
            if baseline is None:
                baseline = timed([weir, "run", "-m", session.rest, spec])
            run, start, hit = run_and_hit(weir, session, spec, 1.0, sig)
            lost = Session.stamp(session.jm, r"TaskExecutor tm-0 lost")
            again = Session.stamp(session.jm, r"switched from RESTARTING to RUNNING")
            run.wait(timeout=60)
            total = time.perf_counter() - start
            if sig == signal.SIGSTOP:
                session.workers[0].send_signal(signal.SIGCONT)
            if name == "h":
                print(json.dumps({"figure": "h_taskmanager_kill9",
                                  "detection_ms": round((lost - hit) * 1000, 1),
                                  "running_again_ms": round((again - hit) * 1000, 1),
                                  "job_s": round(total, 3),
                                  "baseline_job_s": round(baseline, 3),
                                  "slowdown_s": round(total - baseline, 3)}),
                      flush=True)
            else:
                print(json.dumps({"figure": "i_taskmanager_sigstop",
                                  "detection_ms": round((lost - hit) * 1000, 1),
                                  "target_ms": 5000,
                                  "met": (lost - hit) * 1000 <= 5000}),
                      flush=True)
        finally:
            session.close()
    if "j" in only:
        for adopt in (True, False):
            jobmanager_kill_figure(weir, tmp, restart, adopt)


def all_subtasks_running(rest, job):
    """Whether every subtask of `job` runs, by the REST API (False while
    the jobmanager does not answer)."""
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://{rest}/jobs/{job}",
                                    timeout=1) as r:
            body = json.load(r)
    except OSError:
        return False
    vertices = body.get("vertices", [])
    return body.get("state") == "RUNNING" and len(vertices) > 0 and all(
        v.get("tasks", {}).get("RUNNING") == v.get("parallelism")
        for v in vertices)


def jobmanager_kill_figure(weir, tmp, restart, adopt):
    """Figure j: kill -9 of the jobmanager while an exactly-once keyed job
    runs, a new jobmanager at once on the same state directory and port;
    the time from the kill until the REST API shows every subtask RUNNING
    again. With `adopt` the workers keep their subtasks and the new
    JobMaster adopts them; without, the workers cancel them
    (taskmanager.failover.keep-tasks-timeout=0) and the job restarts from
    its newest checkpoint."""
    out = os.path.join(tmp, f"j-out-{adopt}")
    spec = os.path.join(tmp, f"j-{adopt}.json")
    with open(spec, "w") as f:
        json.dump({"name": "kept", "parallelism": 2,
                   "config": {"execution.checkpointing.interval": "200 ms"},
                   "vertices": [
                       {"id": "events", "operator": "generator",
                        "params": {"count": 16000, "rate": 1000, "keys": 7}},
                       {"id": "counts", "operator": "count"},
                       {"id": "out", "operator": "text_file",
                        "params": {"path": out, "delivery": "exactly-once"}}],
                   "edges": [
                       {"from": "events", "to": "counts",
                        "partitioning": "hash"},
                       {"from": "counts", "to": "out",
                        "partitioning": "forward"}]}, f)
    node = [] if adopt else ["-Dtaskmanager.failover.keep-tasks-timeout=0"]
    extra = list(restart) + (
        [] if adopt else ["-Djobmanager.failover.reconcile-timeout=0"])
    session = Session(weir, tmp, workers=2, slots=2, extra=extra,
                      node_flags=node)
    try:
        port = session.address.split(":")[1]
        submitted = subprocess.run([weir, "run", "-d", "-m", session.rest,
                                    spec], cwd=ROOT, capture_output=True,
                                   text=True, check=True)
        job = submitted.stdout.split()[-1]
        session.wait_for(session.jm, r"\(kept\) completed checkpoint 3 ")
        killed = time.time()
        session.jm.send_signal(signal.SIGKILL)
        session.jm.wait()
        session.jm = session.start_jobmanager(port)
        listening = time.time()
        while not all_subtasks_running(session.rest, job):
            time.sleep(0.005)  # polling the REST API, not a test wait
        running = time.time()
        session.wait_for(session.jm, r"\(kept\) FINISHED", timeout=60)
        name = ("j_jobmanager_kill_to_running_adopted" if adopt
                else "j_jobmanager_kill_to_running_restarted")
        print(json.dumps({"figure": name,
                          "ms": round((running - killed) * 1000, 1),
                          "new_jobmanager_listening_ms":
                              round((listening - killed) * 1000, 1)}),
              flush=True)
    finally:
        session.close()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LogTail:
    """Lines of a process's stderr as they come: reads the raw pipe (mixing
    select with Python's buffered readline loses lines that arrived
    together)."""

    def __init__(self, proc):
        self.fd = proc.stderr.fileno()
        self.pending = b""

    def wait_for(self, pattern, timeout=60):
        """The (UTC epoch seconds, match) of the first new line matching."""
        deadline = time.time() + timeout
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                text = line.decode(errors="replace")
                match = re.search(pattern, text)
                if match:
                    try:
                        return log_time(text), match
                    except ValueError:  # not weir's event log (etcd's)
                        return None, match
            if time.time() >= deadline:
                raise SystemExit(f"timed out waiting for {pattern}")
            ready, _, _ = select.select([self.fd], [], [], 1)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise SystemExit(f"the process ended before {pattern}")
                self.pending += chunk


def etcd_failover_figure(weir, tmp, runs):
    """Figure t: kill -9 of the etcd-elected leader to the standby's
    recovered job RUNNING."""
    spec = os.path.join(tmp, "paced.json")
    with open(spec, "w") as f:
        json.dump(PACED, f)
    for lease in ("10 s", "2 s"):
        results = []
        for _ in range(runs):
            client_port, peer_port = free_port(), free_port()
            data = os.path.join(tmp, f"etcd-{time.time_ns()}")
            url = f"http://127.0.0.1:{client_port}"
            peer = f"http://127.0.0.1:{peer_port}"
            etcd = popen(
                ["/usr/bin/etcd", "--data-dir", data, "--listen-client-urls",
                 url, "--advertise-client-urls", url, "--listen-peer-urls",
                 peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", "default=" + peer],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            ha = ["-Dhigh-availability.type=etcd",
                  f"-Dhigh-availability.etcd.endpoints=127.0.0.1:{client_port}",
                  f"-Dhigh-availability.storageDir={data}-ha",
                  f"-Dhigh-availability.etcd.lease-ttl={lease}",
                  "-Drest.port=0", "-Drestart-strategy.type=fixed-delay",
                  "-Drestart-strategy.fixed-delay.delay=50 ms"]
            session = Session.__new__(Session)
            session.procs, session.weir = [], weir
            try:
                LogTail(etcd).wait_for("ready to serve client requests")
                leader = session.spawn([weir, "jobmanager", "--port", "0"] + ha)
                leader_log = LogTail(leader)
                leader_log.wait_for(r"leads cluster default: published")
                standby = session.spawn([weir, "jobmanager", "--port", "0"] + ha)
                standby_log = LogTail(standby)
                standby_log.wait_for(r"waiting to take over")
                for i in range(2):
                    session.spawn([weir, "taskmanager", "-m",
                                   f"etcd://127.0.0.1:{client_port}",
                                   "--slots", "2", "--id", f"tm-{i}",
                                   "-Dcluster.registration.max-timeout=500 ms"])
                    leader_log.wait_for(rf"TaskExecutor tm-{i} registered")
                run = session.spawn([weir, "run", "-m",
                                     f"etcd://127.0.0.1:{client_port}", spec])
                leader_log.wait_for(r"\(paced\) switched from CREATED to RUNNING")
                time.sleep(1.0)  # benchmark pacing, not a test wait
                killed = time.time()
                leader.send_signal(signal.SIGKILL)
                leader.wait()
                took_over, _ = standby_log.wait_for(r"took over cluster")
                running, _ = standby_log.wait_for(
                    r"\(paced\) switched from CREATED to RUNNING")
                deployed, _ = standby_log.wait_for(r"TaskExecutor tm-1 registered")
                run.wait(timeout=120)
                results.append({
                    "took_over_ms": round((took_over - killed) * 1000, 1),
                    "running_ms": round((running - killed) * 1000, 1),
                    "workers_back_ms": round((deployed - killed) * 1000, 1),
                    "client_exit": run.returncode})
            finally:
                session.close()
                etcd.send_signal(signal.SIGTERM)
                etcd.wait(timeout=30)
        print(json.dumps({
            "figure": "t_etcd_leader_kill9_to_running",
            "unit": "ms", "lease_ttl": lease,
            "value": statistics.median(r["running_ms"] for r in results),
            "took_over_ms": statistics.median(r["took_over_ms"] for r in results),
            "workers_back_ms": statistics.median(
                r["workers_back_ms"] for r in results),
            "runs": results,
            "settings": "retry-period 500 ms, heartbeat.timeout 3 s, "
                        "cluster.registration.max-timeout 500 ms"}),
              flush=True)


def files_under(path):
    """Every file under `path` with its size."""
    sizes = {}
    for root, _, names in os.walk(path):
        for n in names:
            full = os.path.join(root, n)
            try:
                sizes[full] = os.path.getsize(full)
            except OSError:
                pass  # deleted meanwhile (a dropped checkpoint)
    return sizes


def checkpoint_size_figure(weir, tmp, figure, extra, to):
    """A keyed sum over 1 M keys with checkpoints every second: per
    checkpoint, its duration (trigger to completion, including writing the
    files), its size as the JobMaster counts it (state sent to it: all of the
    heap state, only file names for RocksDB), and the bytes of files it added
    under the checkpoint directory (RocksDB: with incremental checkpoints,
    only the files the previous one did not have)."""
    with open(os.path.join(ROOT, "examples/keyed_sum.json")) as f:
        spec = json.load(f)
    # A discard sink: the job's checkpoints are stored (a stdout sink's job
    # restarts from its sources and keeps none).
    spec["vertices"][-1]["operator"] = "discard"
    spec_path = os.path.join(tmp, f"keyed_sum_discard_{figure}.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    session = Session(weir, tmp, workers=1, slots=2, extra=extra)
    try:
        run = popen(
            [weir, "run", "-m", session.rest, spec_path,
             "--to", str(to), "--modulus", "1000000"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        checkpoints = os.path.join(session.state, "checkpoints")
        sizes, durations, written = [], [], []
        seen = {}
        for _ in range(5):
            m = session.wait_for(
                session.jm, r"completed checkpoint \d+ \((\d+) bytes in (\d+) ms\)",
                timeout=120)
            sizes.append(int(m.group(1)))
            durations.append(int(m.group(2)))
            # The job store writes the checkpoint file just after this line;
            # a pause of the benchmark (not a test wait) lets it land.
            time.sleep(0.3)
            now = files_under(checkpoints)
            written.append(sum(v for k, v in now.items() if k not in seen))
            seen = now
        run.terminate()
        run.wait(timeout=60)
        # The first checkpoints may come before every key was seen.
        print(json.dumps({"figure": figure, "keys": 1_000_000,
                          "duration_ms": statistics.median(durations[2:]),
                          "bytes_sent_to_jobmaster": sizes[-1],
                          "bytes_written": statistics.median(written[2:]),
                          "all_ms": durations, "all_written": written}),
              flush=True)
    finally:
        session.close()


def log_time(line):
    """The UTC timestamp that starts an event-log line, as epoch seconds."""
    stamp = line.split(" ", 1)[0]
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def processes_mentioning(text):
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def driver_figures(weir, tmp, runs):
    """(n) Driver mode in a CLI-created cluster: from `weir run -D` to the
    driver's first job RUNNING (read from the application's event log), and
    from the application's end to every one of its processes gone. Run
    detached so that the logs stay to be read; plus the attached command's
    whole time (it returns once every process is gone)."""
    build = os.path.dirname(os.path.dirname(weir))
    ops = os.path.join(build, "examples/user_code/libweir_example_ops.so")
    driver = os.path.join(build, "examples/user_code/libweir_example_driver.so")
    cmd = [weir, "run", "-D", "-c", "top_words", "--libjars", ops, driver,
           "examples/data/sample.txt", "5"]
    first, gone, attached = [], [], []
    for i in range(runs):
        apps = os.path.join(tmp, f"apps-{i}")
        os.makedirs(apps)
        env = dict(os.environ, TMPDIR=apps)
        t0 = time.time()
        subprocess.run(cmd[:3] + ["-d"] + cmd[3:], cwd=ROOT, env=env,
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        app = os.path.join(apps, os.listdir(apps)[0])
        log = os.path.join(app, "logs", "jobmanager.log")
        running = ended = None
        deadline = time.time() + 60
        while ended is None and time.time() < deadline:
            with open(log) as f:
                for line in f:
                    if running is None and "(top words: count) switched from CREATED to RUNNING" in line:
                        running = log_time(line)
                    if "the application finished" in line:
                        ended = log_time(line)
            time.sleep(0.005)  # benchmark polling of a log
        while processes_mentioning(app) and time.time() < deadline:
            time.sleep(0.001)  # benchmark polling of the process table
        gone.append((time.time() - ended) * 1000)
        first.append((running - t0) * 1000)
        t1 = time.time()
        subprocess.run(cmd, cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        attached.append((time.time() - t1) * 1000)
    print(json.dumps({"figure": "n_driver_mode_cli_cluster",
                      "to_first_job_running_ms": round(statistics.median(first), 1),
                      "end_to_all_processes_gone_ms": round(statistics.median(gone), 1),
                      "attached_whole_command_ms": round(statistics.median(attached), 1),
                      "all_first_ms": [round(x, 1) for x in first],
                      "all_gone_ms": [round(x, 1) for x in gone]}),
          flush=True)


def slurm_worker_figure(weir, tmp, runs):
    """(u) Workers from Slurm: for each worker of a detached driver-mode
    application (top_words: the driver's worker-1, its jobs' worker-2), the
    time from the ResourceManager's slot request to the worker registered,
    and to sbatch's answer, from the application's event log."""
    build = os.path.dirname(os.path.dirname(weir))
    ops = os.path.join(build, "examples/user_code/libweir_example_ops.so")
    driver = os.path.join(build, "examples/user_code/libweir_example_driver.so")
    cmd = [weir, "run", "-D", "-d", "-Dresourcemanager.backend=slurm",
           "-Dresourcemanager.slurm.memory-per-slot=256m", "-c", "top_words",
           "--libjars", ops, driver, "examples/data/sample.txt", "5"]
    registered, submitted, scheduled = [], [], []
    for i in range(runs):
        apps = os.path.join(tmp, f"slurm-apps-{i}")
        os.makedirs(apps)
        env = dict(os.environ, TMPDIR=apps)
        subprocess.run(cmd, cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        app = os.path.join(apps, next(d for d in os.listdir(apps)
                                      if d.startswith("weir-app-")))
        log = os.path.join(app, "logs", "jobmanager.log")
        deadline = time.time() + 120
        lines = []
        while time.time() < deadline:
            with open(log) as f:
                lines = f.readlines()
            if any("the application finished" in l for l in lines):
                break
            time.sleep(0.05)  # benchmark polling of a log
        for worker in ("worker-1", "worker-2"):
            times = {}
            for line in lines:
                for key, text in (("asked", f"starting worker {worker} with"),
                                  ("sbatch", f"started worker {worker} (Slurm job"),
                                  ("up", f"TaskExecutor {worker} registered")):
                    if key not in times and text in line:
                        times[key] = log_time(line)
            # The worker process's first event-log line: Slurm started it.
            with open(os.path.join(app, "logs", f"{worker}.log")) as f:
                times["process"] = log_time(f.readline())
            if len(times) == 4:
                registered.append((times["up"] - times["asked"]) * 1000)
                submitted.append((times["sbatch"] - times["asked"]) * 1000)
                scheduled.append((times["process"] - times["sbatch"]) * 1000)
    print(json.dumps({"figure": "u_slurm_slot_request_to_worker_registered",
                      "value": round(statistics.median(registered), 1),
                      "unit": "ms",
                      "sbatch_ms": round(statistics.median(submitted), 1),
                      "sbatch_to_worker_process_ms":
                          round(statistics.median(scheduled), 1),
                      "all_ms": [round(x, 1) for x in registered],
                      "all_sbatch_ms": [round(x, 1) for x in submitted],
                      "all_sbatch_to_worker_process_ms":
                          [round(x, 1) for x in scheduled]}),
          flush=True)


def checkpoint_figures(weir, tmp, only, runs):
    every_second = "-Dexecution.checkpointing.interval=1 s"
    if "k" in only:
        checkpoint_size_figure(weir, tmp, "k_checkpoint_1m_keys_heap",
                               [every_second], to=400_000_000)
        checkpoint_size_figure(weir, tmp, "k_checkpoint_1m_keys_rocksdb_full",
                               [every_second, "-Dstate.backend.type=rocksdb"],
                               to=40_000_000)
        checkpoint_size_figure(weir, tmp,
                               "k_checkpoint_1m_keys_rocksdb_incremental",
                               [every_second, "-Dstate.backend.type=rocksdb",
                                "-Dexecution.checkpointing.incremental=true"],
                               to=40_000_000)
    if "l" in only:
        cmd = [weir, "run", "examples/keyed_sum.json", "--to", "200000000",
               "--modulus", "1000"]
        plain = repeat(cmd, runs)
        checkpointed = repeat(cmd + [every_second], runs)
        overhead = statistics.median(checkpointed) / statistics.median(plain) - 1
        print(json.dumps({"figure": "l_checkpoint_overhead",
                          "records_per_s_without": round(200e6 / statistics.median(plain)),
                          "records_per_s_with": round(200e6 / statistics.median(checkpointed)),
                          "overhead_pct": round(overhead * 100, 1),
                          "target_pct": 10, "met": overhead <= 0.10}),
              flush=True)
    if "m" in only:
        spec = os.path.join(tmp, "paced-checkpointed.json")
        paced = dict(PACED)
        paced["config"] = {"execution.checkpointing.interval": "200 ms"}
        with open(spec, "w") as f:
            json.dump(paced, f)
        restart = ["-Drestart-strategy.type=fixed-delay",
                   "-Drestart-strategy.fixed-delay.delay=50 ms"]
        session = Session(weir, tmp, workers=2, slots=2, extra=restart)
        try:
            baseline = timed([weir, "run", "-m", session.rest, spec])
            run, start, hit = run_and_hit(weir, session, spec, 1.5,
                                          signal.SIGKILL)
            resumed = Session.stamp(session.jm, r"resumes from checkpoint")
            again = Session.stamp(session.jm, r"switched from RESTARTING to RUNNING")
            run.wait(timeout=60)
            total = time.perf_counter() - start
            print(json.dumps({"figure": "m_recovery_from_checkpoint",
                              "resumed_ms": round((resumed - hit) * 1000, 1),
                              "running_again_ms": round((again - hit) * 1000, 1),
                              "job_s": round(total, 3),
                              "baseline_job_s": round(baseline, 3),
                              "slowdown_s": round(total - baseline, 3)}),
                  flush=True)
        finally:
            session.close()




def watch_for(session, seconds):
    """Reads every process's log for `seconds` (so that no pipe fills up)
    and counts what matters in the jobmanager's: losses, restarts, failed
    jobs, completed checkpoints. Also the jobmanager's peak RSS."""
    counts = {"lost": 0, "restarts": 0, "failed": 0, "checkpoints": 0}
    lost_lines = []
    deadline = time.time() + seconds
    pipes = {p.stderr: p for p in session.procs if p.poll() is None}
    # WEIR_BENCH_LOG=FILE keeps every process's log lines there.
    keep = open(os.environ["WEIR_BENCH_LOG"], "a") if "WEIR_BENCH_LOG" in os.environ else None
    while time.time() < deadline:
        ready, _, _ = select.select(list(pipes), [], [], 1)
        for pipe in ready:
            line = pipe.readline()
            if not line:
                del pipes[pipe]
                continue
            if keep is not None:
                keep.write(f"[{pipes[pipe].pid}] {line}")
            if pipes[pipe] is not session.jm:
                continue
            if " lost" in line:
                counts["lost"] += 1
                lost_lines.append(line.strip()[:200])
            if "restarts in" in line:
                counts["restarts"] += 1
            if "FAILED" in line:
                counts["failed"] += 1
            if "completed checkpoint" in line:
                counts["checkpoints"] += 1
    with open(f"/proc/{session.jm.pid}/status") as f:
        hwm = [l for l in f if l.startswith("VmHWM")][0].split()[1]
    counts["jobmanager_peak_rss_mb"] = round(int(hwm) / 1024, 1)
    counts["lost_lines"] = lost_lines[:5]
    return counts


def load_figures(weir, tmp, only, seconds):
    restart = ["-Drestart-strategy.type=fixed-delay",
               "-Drestart-strategy.fixed-delay.delay=1 s",
               "-Drestart-strategy.fixed-delay.attempts=1000"]
    if "o" in only:
        with open(os.path.join(ROOT, "examples/keyed_sum.json")) as f:
            spec = json.load(f)
        spec["vertices"][-1]["operator"] = "discard"
        spec_path = os.path.join(tmp, "keyed_sum_2m.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        session = Session(weir, tmp, workers=2, slots=2, extra=restart + [
            "-Dexecution.checkpointing.interval=2 s"])
        runs = []
        try:
            for _ in range(2):
                runs.append(popen(
                    [weir, "run", "-m", session.rest, "-d", spec_path,
                     "--to", str(10**13), "--modulus", "2000000"], cwd=ROOT,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            counts = watch_for(session, seconds)
            sizes = files_under(os.path.join(session.state, "checkpoints"))
            print(json.dumps({"figure": "o_two_2m_key_jobs_checkpoint_2s",
                              "seconds": seconds, **counts,
                              "state_files_mb": round(sum(sizes.values()) / 2**20, 1),
                              "met": counts["lost"] == 0 and counts["restarts"] == 0}),
                  flush=True)
        finally:
            session.close()
            for r in runs:
                r.wait(timeout=30)
    if "p" in only:
        session = Session(weir, tmp, workers=2, slots=2, extra=restart + [
            "-Dexecution.checkpointing.interval=2 s"])
        spec = dict(PACED, name="paced-busy")
        spec["vertices"] = [dict(v) for v in PACED["vertices"]]
        spec["vertices"][0] = dict(spec["vertices"][0], params={
            "count": 10**12, "rate": 5000, "keys": 1000})
        spec["vertices"][-1] = dict(spec["vertices"][-1], operator="discard")
        spec_path = os.path.join(tmp, "paced_busy.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        busy = []
        try:
            subprocess.run([weir, "run", "-m", session.rest, "-d", spec_path],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            busy = [popen(["yes"], stdout=subprocess.DEVNULL)
                    for _ in range(4)]
            counts = watch_for(session, seconds)
            print(json.dumps({"figure": "p_running_job_with_4_busy_loops",
                              "seconds": seconds, **counts,
                              "met": counts["lost"] == 0 and counts["restarts"] == 0}),
                  flush=True)
        finally:
            for b in busy:
                b.kill()
                b.wait()
            session.close()


if __name__ == "__main__":
    main()
