#!/usr/bin/env python3
"""gen.py - write the nccl-tests run folders of this directory (tests only; no GPU here).

Each folder is what a RECIPE=nccl-tests job leaves: nemoperf.json (launch's manifest: "workload": "nccl-tests",
an "nccl_tests" object naming the steps file), nccl-tests/steps.json (the job's list of steps, hosts and output
files) and one output per step in the format nccl-tests v2.16.9 prints (NVIDIA/nccl-tests c2cb96fa
src/common.cu: the preamble l.1010-1017, rank lines l.1019-1047, table head l.1165-1170, rows l.572-585/626,
summary l.1265-1268).  Bandwidths are chosen so that one node and one link are slow, one step has #wrong.
Run: python3 tests/data/nccl-tests-runs/gen.py (rewrites the folders).
     python3 tests/data/nccl-tests-runs/gen.py DIR JOB N3_BUSBW: one more bisect run of 4 nodes in DIR (job JOB, node n3
     at N3_BUSBW GB/s, the others healthy, each figure moved by a few per mille by the job id: repeats of a check)."""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = "NVIDIA H100 80GB HBM3"


def output(binary, hosts, gpn, peak, wrong=0, minb=8, maxb=17179869184):
    n = gpn * len(hosts)
    bf = {"all_reduce_perf": 2 * (n - 1) / n, "sendrecv_perf": 1.0}.get(binary, (n - 1) / n)
    redop = "sum" if binary in ("all_reduce_perf", "reduce_scatter_perf") else "none"
    per = n if binary in ("all_gather_perf", "reduce_scatter_perf", "alltoall_perf") else 1
    out = ["# Collective test starting: %s" % binary,
           "# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
           "validation: 1 graph: 0" % (minb, maxb), "#", "# Using devices"]
    for r in range(n):
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                   % (r, 0, 100000 + r, hosts[r // gpn], r % gpn, 0, 24 + 16 * (r % gpn), 0, GPU))
    out.append("#")
    out.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
               % ("", "", "", "", ""))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s"
               % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                  "busbw", "#wrong"))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s"
               % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    s, total, cnt, errors = minb, 0.0, 0, 0
    while s <= maxb:
        line = "%12d  %12d  %8s  %6s  %6s" % (s, s // 4 // per, "float", redop, "-1")
        for ip in range(2):
            t = 25 + s / (peak / bf * 1e3) * (0.999 if ip else 1)
            ab = s / 1e9 / (t / 1e6)
            bb = ab * bf
            ts = "%7.0f" % t if t >= 10000 else "%7.1f" % t if t >= 100 else "%7.2f" % t
            w = wrong if wrong and s >= 1048576 else 0
            errors += 1 if w else 0
            line += "  %7s  %6.2f  %6.2f  %5g" % (ts, ab, bb, w)
            total += bb
            cnt += 1
        out.append(line)
        s *= 2
    out.append("# Out of bounds values : %d %s" % (errors, "FAILED" if errors else "OK"))
    out.append("# Avg bus bandwidth    : %g " % (total / cnt))
    out.append("#")
    out.append("# Collective test concluded: %s" % binary)
    out.append("")
    return "\n".join(out) + "\n"


def run(name, check, job, gpn, steps, base=HERE):
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "nccl-tests"), exist_ok=True)
    hosts = sorted({h for s in steps for h in s[2]})
    gpus = gpn * len(hosts)
    manifest = {"config": {"recipe": "nccl-tests", "model_size": "nccl", "gpus": gpus, "gpu_type": "h100",
                           "experiment": name},
                "workload": "nccl-tests", "kind": "nccl-tests",
                "nccl_tests": {"check": check, "steps_file": "nccl-tests/steps.json"},
                "submitted": True, "job_id": job, "submit_time": "2026-11-29T06:%02d:00Z" % (int(job) % 60)}
    with open(os.path.join(d, "nemoperf.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    doc = {"check": check, "pairs": "all", "gpu_type": "h100", "gpus_per_node": gpn, "nodes": hosts, "steps": []}
    for rnd, (binary, scope, nodes, peak, wrong) in enumerate(steps):
        nm = "%s-%s" % (binary, "all" if scope == "all" else "-".join(nodes))
        doc["steps"].append({"name": nm, "binary": binary, "collective": binary[:-5], "nodes": nodes,
                             "gpus_per_node": gpn, "scope": scope, "round": 1 + rnd,
                             "file": "nccl-tests/%s.out" % nm})
        if peak is not None:
            with open(os.path.join(d, "nccl-tests", nm + ".out"), "w") as f:
                f.write(output(binary, nodes, gpn, peak, wrong))
    with open(os.path.join(d, "nccl-tests", "steps.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(d, "sbatch_%s_%s.out" % (name, job)), "w") as f:
        f.write("".join("nemoperf: nccl-tests step %s exit %d\n" % (s["name"], 1 if w else 0)
                        for s, (_, _, _, p, w) in zip(doc["steps"], steps) if p is not None))


ar = "all_reduce_perf"
if len(sys.argv) == 4:
    out, job, n3 = sys.argv[1], sys.argv[2], float(sys.argv[3])
    j = lambda x, k: x * (1 + 0.002 * ((int(job) * 7 + k) % 5 - 2))
    run("nccl-tests_bisect_h100_32", "bisect", job, 8,
        [(ar, "intra", ["n1"], j(365, 1), 0), (ar, "intra", ["n2"], j(366, 2), 0), (ar, "intra", ["n3"], j(n3, 3), 0),
         (ar, "intra", ["n4"], j(364, 4), 0), (ar, "inter", ["n1", "n2"], j(371, 5), 0),
         (ar, "inter", ["n3", "n4"], j(369, 6), 0)], base=out)
    sys.exit(0)
# a bisect of 4 nodes: n3 slow alone (212 GB/s), the n2-n4 link slow (150 GB/s across nodes)
run("nccl-tests_bisect_h100_32", "bisect", "4101", 8,
    [(ar, "intra", ["n1"], 365, 0), (ar, "intra", ["n2"], 366, 0), (ar, "intra", ["n3"], 212, 0),
     (ar, "intra", ["n4"], 364, 0), (ar, "inter", ["n1", "n2"], 371, 0), (ar, "inter", ["n3", "n4"], 369, 0),
     (ar, "inter", ["n2", "n3"], 370, 0), (ar, "inter", ["n1", "n4"], 372, 0), (ar, "inter", ["n1", "n3"], 368, 0),
     (ar, "inter", ["n2", "n4"], 150, 0)])
# a full check of 2 nodes with a data error in all_gather and sendrecv's step not run (the job ended)
run("nccl-tests_full_h100_16", "full", "4102", 8,
    [(ar, "all", ["n1", "n2"], 370, 0), ("all_gather_perf", "all", ["n1", "n2"], 360, 3),
     ("alltoall_perf", "all", ["n1", "n2"], 45.5, 0), ("sendrecv_perf", "all", ["n1", "n2"], None, 0)])
