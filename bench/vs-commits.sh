#!/usr/bin/env bash
# vs-commits.sh BEFORE AFTER: the example relay built at two commits, side by side with the naive relay
# in one run (rounds alternate the order), on the mock upstream and load generator of vs-naive.sh
# (../shared/bench beside the checkout). Run it from the project's root:
#
#   R=3 D=5s bench/vs-commits.sh 53236d4 8593226
#
# It prints, per round and as medians: CPU per request, per streamed event, and p50 at one client,
# after / before (and each against the naive relay). Each commit is built in a temporary worktree.
set -uo pipefail
R=${R:-5} D=${D:-6s} W=${W:-2s} C=${C:-32}
BEFORE=$1 AFTER=$2
ROOT=$(pwd); HERE=$ROOT/../shared/bench
if [ -z "${VS_NETNS:-}" ] && unshare -n true 2>/dev/null; then
  export R D W C; exec unshare -n env VS_NETNS=1 bash "$0" "$@"
fi
[ -n "${VS_NETNS:-}" ] && ip link set lo up
T=$(mktemp -d); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; git -C "$ROOT" worktree remove --force "$T/b" 2>/dev/null; git -C "$ROOT" worktree remove --force "$T/a" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
(cd "$HERE/mockupstream" && go build -o "$T/mock" .) || exit 1
(cd "$HERE/loadgen" && go build -o "$T/loadgen" .) || exit 1
git -C "$ROOT" worktree add -q --detach "$T/b" "$BEFORE" && (cd "$T/b" && go build -o "$T/gk-before" ./examples/relay) || exit 1
git -C "$ROOT" worktree add -q --detach "$T/a" "$AFTER" && (cd "$T/a" && go build -o "$T/gk-after" ./examples/relay) || exit 1
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }
MP=$(port); BP=$(port); AP=$(port); NP=$(port)
"$T/mock" -addr 127.0.0.1:$MP >/dev/null 2>&1 & PIDS+=($!)
"$T/mock" -mode relay -addr 127.0.0.1:$NP -upstream http://127.0.0.1:$MP >/dev/null 2>&1 & PIDS+=($!); NAIVE=$!
(cd "$T" && exec "$T/gk-before" -addr 127.0.0.1:$BP -admin-addr "" -upstream "http://127.0.0.1:$MP/v1" -upstream-key sk-mock) >/dev/null 2>&1 & PIDS+=($!); GB=$!
(cd "$T" && exec "$T/gk-after" -addr 127.0.0.1:$AP -admin-addr "" -upstream "http://127.0.0.1:$MP/v1" -upstream-key sk-mock) >/dev/null 2>&1 & PIDS+=($!); GA=$!
wait_port $MP && wait_port $BP && wait_port $AP && wait_port $NP || exit 1
run() { "$T/loadgen" -base "$3" -key "$4" -model gpt-4o-mini -c "$6" -d "$D" -warmup "$W" -label "$1|$2|$6" $7 -pids "srv=$5" -json "$T/res.jsonl" >/dev/null 2>&1 || echo "loadgen failed on $2" >&2; }
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then order="before after naive"; else order="naive after before"; fi
  for t in $order; do
    case $t in before) b=http://127.0.0.1:$BP; k=sk-demo; p=$GB;; after) b=http://127.0.0.1:$AP; k=sk-demo; p=$GA;; naive) b=http://127.0.0.1:$NP; k=sk-x; p=$NAIVE;; esac
    run "$r" "$t" "$b" "$k" "$p" "$C" ""; run "$r" "$t-stream" "$b" "$k" "$p" "$C" -stream; run "$r" "$t" "$b" "$k" "$p" 1 ""
  done
done
python3 - "$T/res.jsonl" "$R" "$C" <<'PY'
import json, statistics, sys
rows = {json.loads(l)["label"]: json.loads(l) for l in open(sys.argv[1])}
R, C = int(sys.argv[2]), sys.argv[3]
def cpu(d, ev=False):
    n = d["events_per_s"] * d["seconds"] if ev else d["ok"]
    return d["cpu_pct"]["srv"] / 100 * d["seconds"] / max(n, 1) * 1e6
def p50(d): return float(d.get("p50_us", d.get("p50")))
q, e, l, qn, en = [], [], [], [], []
for r in range(1, R + 1):
    g = lambda n, c: rows.get(f"{r}|{n}|{c}")
    b, a, bs, as_, b1, a1, n, ns = g("before", C), g("after", C), g("before-stream", C), g("after-stream", C), g("before", 1), g("after", 1), g("naive", C), g("naive-stream", C)
    if None in (b, a, bs, as_, b1, a1, n, ns): print(f"round {r}: missing"); continue
    q.append(cpu(a) / cpu(b)); e.append(cpu(as_, True) / cpu(bs, True)); l.append(p50(a1) - p50(b1))
    qn.append((cpu(b) / cpu(n), cpu(a) / cpu(n))); en.append((cpu(bs, True) / cpu(ns, True), cpu(as_, True) / cpu(ns, True)))
    print(f"round {r}: after/before CPU/req {q[-1]:.3f} CPU/event {e[-1]:.3f} p50@1 {l[-1]:+.0f} us; vs naive req {qn[-1][0]:.2f}->{qn[-1][1]:.2f}, event {en[-1][0]:.2f}->{en[-1][1]:.2f}")
m = statistics.median
print(f"after / before, median of {len(q)} rounds: CPU per request {m(q):.3f} ({min(q):.3f}-{max(q):.3f}), per streamed event {m(e):.3f} ({min(e):.3f}-{max(e):.3f}), p50 at 1 client {m(l):+.0f} us")
PY
