#!/usr/bin/env bash
# Load benchmarks of gateway-lb on loopback (docs/benchmarks.md). Real processes, bounded
# in time, traffic to 127.0.0.1 only; everything started here is stopped on exit.
#
#   benchmarks/load/run.sh [all|throughput|slow|tail|overload|locality|mirror|soak]
#                         (default: all; tail, overload, locality, mirror and soak are separate)
#   benchmarks/load/run.sh --unpinned [throughput]        (the unpinned comparison, below)
#
# Processes: a fast backend (nginx answering "ok" on three ports), three delay backends
# (one JVM: two ports answer after FAST_MS, one after SLOW_MS), nginx as a proxy with an
# upstream block, and two gateways from the sample app's jar with benchmarks/load/gateway.yml:
# (b) plain Spring Cloud Gateway, lb:// and Spring Cloud LoadBalancer round-robin
# (gateway.lb.enabled=false), and (c) the same gateway with gateway-lb. (e) is (b)'s
# gateway on its /direct/ route: a plain URL to one fast backend port, no balancing.
#
# throughput: the same wrk load, round after interleaved round, against (a) the backend
#   directly, (b), (c), (d) nginx, and (e) the plain gateway without balancing; prints the
#   median requests/s and p50/p99/p99.9 of the rounds, the ratios c/b, c/d and b/d, and
#   c/b, c/e and b/e of requests/s, p99 and CPU per request.
# slow: the same load through a gateway to the three delay backends, once per balancer
#   (gateway-lb round-robin, least-requests, power-of-two-choices, peak-ewma on (c);
#   Spring Cloud LoadBalancer round-robin on (b)); prints p50/p99/p99.9 and each
#   backend's share of the requests.
# tail: tail latency, at 4, 16 and 64 clients, in three scenarios on their own delay
#   backends: healthy (three at FAST_MS), one slow (FAST_MS, FAST_MS, SLOW_MS) and
#   sporadic (all SPORADIC_MS, but SPORADIC_PERCENT% of answers, a seeded draw, take
#   SPORADIC_SLOW_MS). Rows: Spring Cloud LoadBalancer round-robin on (b), and each of
#   gateway-lb's algorithms on (c) without either, with hedging (max-extra-load
#   HEDGE_LOAD) and with latency ejection (latency-factor LATENCY_FACTOR); prints
#   requests/s, p50/p99/p99.9, extra load (backend requests per client request), the slow
#   backend's share and the hedge delay; after each one-slow and sporadic table, the
#   targets (docs/benchmarks.md) met or missed. Routes and services come from a generated
#   $WORK/tail.properties. The load comes from ClosedLoopClient (benchmarks jar), not wrk:
#   wrk corrects latencies for coordinated omission, which counts one 500 ms answer
#   many times over; these targets are about answers, each counted once.
# overload: more requests than the backends can serve, offered at a fixed rate (issue 24).
#   Its own processes: three worker backends (WorkerBackend, one JVM: OVERLOAD_WORKERS
#   workers x OVERLOAD_SERVICE_MS each and a queue nothing bounds, like a thread-pool
#   server; a request given up keeps its place) and the two gateways, (b) and (c), with the
#   routes of a generated $WORK/overload.properties: /overload/VARIANT/ to service
#   overload-VARIANT on the three backends, round-robin. Rows: Spring Cloud LoadBalancer
#   round-robin on (b); gateway-lb on (c) with each concurrency.limit of OVERLOAD_LIMITS
#   (none: the default pool limits only; fixed at FIXED_LIMIT); and gradient2 again from
#   initial-limit OVERLOAD_GRADIENT2_INITIAL (OverloadIT's start; empty: no such row);
#   and partitioned, OVERLOAD_PARTITIONED with partitions critical 0.8 and batch 0.2 by
#   X-Class and max-wait OVERLOAD_MAX_WAIT, its requests alternately of either class
#   (empty: no such row).
#   Each gateway first warms up on a route of its own: 5 s at OVERLOAD_UNLOADED_RATE, then
#   OVERLOAD_JIT_WARMUP s at OVERLOAD_WARMUP_PERCENT% of capacity. Then each row, on its
#   own route and service, once the backends have nothing queued, from one OpenLoopClient
#   (benchmarks jar; an open loop, which an overloaded gateway cannot slow down as it
#   slows wrk) whose users give up after OVERLOAD_PATIENCE_MS: OVERLOAD_UNLOADED_RATE
#   requests/s for 2 s unrecorded and OVERLOAD_UNLOADED_DURATION s recorded (the unloaded
#   p50), OVERLOAD_WARMUP s at OVERLOAD_WARMUP_PERCENT%, then OVERLOAD_PERCENT% for
#   OVERLOAD_DURATION s. Prints per row: the 503s at OVERLOAD_WARMUP_PERCENT%, goodput (200s answered before the user gave up,
#   per second and in % of capacity), their p50/p99, p99 over the unloaded p50, 503s in %
#   of the requests sent, the requests given up, each endpoint's limit after the run, and
#   goodput and p99 against (b)'s; the partitioned row's classes apart; then the targets
#   OverloadIT asserted until they moved here, each met or missed. Needs neither wrk nor
#   nginx; 7 to 8 minutes on a quiet machine.
# locality: zones (issue 23). Six worker backends (WorkerBackend, one JVM), each
#   LOCALITY_WORKERS workers x LOCALITY_SERVICE_MS: three in zone-a, the gateway's
#   (spring.cloud.loadbalancer.zone), three in zone-b whose answers leave LOCALITY_HOP_MS
#   later without holding a worker (a zone hop: latency, not work). Why 2 workers x 10 ms:
#   a capacity that load can exceed (a backend that serves any number at once never
#   queues, and no balancer would need to leave its zone), and three client counts on
#   either side of it: zone-a serves 6 requests at a time (600/s), both zones 12; 4 clients
#   fit in zone-a (the low load, where requests should stay local), 16 are 2.7x zone-a's
#   and 1.3x both zones', 64 exceed both (5.3x zone-a). One worker would have put 4
#   clients past zone-a already. Routes and services from a generated
#   $WORK/locality.properties (instance metadata zone: zone-a / zone-b). Rows, for each
#   client count of LOCALITY_CONNECTIONS: (b) the plain gateway with Spring Cloud
#   LoadBalancer's strict zone preference (spring.cloud.loadbalancer.clients.<service>.
#   configurations=zone-preference: its ZonePreferenceServiceInstanceListSupplier, which
#   keeps the instances whose metadata zone is the gateway's while there is any); (b') the
#   plain gateway's zone-agnostic round-robin; gateway-lb on (c), each algorithm of
#   LOCALITY_ALGORITHMS with locality off, on with load-aware false, and on with
#   load-aware true. Each gateway first gets LOCALITY_JIT_WARMUP s of 16 clients; each row
#   LOCALITY_WARMUP s on its own route, then LOCALITY_DURATION s recorded, from one
#   ClosedLoopClient (each answer counted once), once the backends have nothing queued.
#   Prints one table per client count: requests/s, p50/p99, the local share (answers
#   whose X-Backend header names a zone-a backend, as the client counted them), and p99
#   against the zone-agnostic p99s of the same table ((b') and the same algorithm with
#   locality off); above zone-a's concurrency, the target LocalityIT asserted until it
#   moved here (load-aware p99 at most 0.75x load-aware false's), met or missed. Needs
#   neither wrk nor nginx; about 7 minutes on a quiet machine.
# mirror: traffic mirroring (issue 26), unpinned as --unpinned is. One gateway-lb JVM, the
#   fast backend (nginx, three ports) as primary and another nginx answering the same on
#   SHADOW_PORTS as shadow; routes and services from a generated $WORK/mirror.properties:
#   /mirror/off/ (no mirror), /mirror/status/ and /mirror/body/ (mirror.percent
#   MIRROR_PERCENT to shadow-status or shadow-body, mirror.compare status or body). The
#   gateway warms up on the body row until its compiler threads go quiet (as --unpinned),
#   then 2 x JIT_STEP s on each other row; then interleaved rounds (off, status, body...,
#   MIRROR_ROUNDS x MIRROR_DURATION s of wrk -t1 -c$MIRROR_CONNECTIONS): requests/s,
#   p50/p99, CPU per request (the gateway's, /proc, as --unpinned) and the mirror counts
#   the actuator gives over the rounds (compared, mismatched, errors, dropped); ratios to
#   off, medians of the rounds' pairs. wrk saturates the gateway, where a closed loop's
#   latency is its connections over its throughput, so a row that costs more CPU has a
#   higher p99 by construction; then, with MIRROR_RATE_PERCENT above 0, each row again at
#   a fixed rate, MIRROR_RATE_PERCENT% of off's requests/s, from OpenLoopClient (2 s
#   unrecorded, MIRROR_RATE_DURATION s recorded, MIRROR_RATE_ROUNDS interleaved rounds):
#   the latency the primary's clients see when the gateway has room, and CPU per request
#   (higher than at saturation: fewer requests share each wake-up of an event loop), and
#   the target MirrorIT asserted until it moved here (p99 at most 1.1x off's at the fixed
#   rate), met or missed. The rate is low because the client is a JVM on the same two
#   cores: at 25% the machine was full and users gave up. About 8 to 9 minutes.
# soak: the live heap of a gateway with every feature on, before and after SOAK_REQUESTS
#   requests (issue 38: a leak of 70 bytes a request, http.client.requests observations
#   that nothing stopped, ran a mirroring gateway out of heap within hours). One gateway-lb
#   JVM, nothing pinned, the fast backend as primary and the shadow nginx as shadow; one
#   service from a generated $WORK/soak.properties with mirror (100%, compare body),
#   hedging (max-extra-load 0.1), endpoint affinity, a vegas limit with max-wait and
#   partitions, localities (two zones), retries. After SOAK_WARMUP requests, and again
#   after SOAK_REQUESTS more (wrk -t1 -c$SOAK_CONNECTIONS, in SOAK_STEP-second runs until
#   that many were answered) once no request is in flight: the live heap after a full
#   collection (jcmd GC.class_histogram's total, which collects first), and the active
#   http.client.requests observations (the actuator's metrics). Prints both and the heap's
#   growth per request; the target is at most SOAK_MAX_GROWTH_KB between the two.
#
# --unpinned: nothing is pinned; each gateway JVM runs on every core with Reactor Netty's
#   default event loops, as a gateway is deployed. Three gateways from the same jar: (b)
#   plain, (c) the starter with its defaults, and (f) the starter with the plain gateway's
#   effective settings (UNPINNED_SAME_SETTINGS: no header deadline, no retry), which
#   separates what the starter's defaults cost from what its code costs. Each is warmed
#   up under load until its JIT compiler threads go quiet (C1 and C2 CompilerThreads,
#   from /proc/PID/task/*/stat, under JIT_QUIET_PERCENT% of one core over the last
#   JIT_QUIET_SECONDS, at most JIT_WARMUP_MAX seconds), then measured in interleaved
#   rounds (b, c, f, b, c, f...) of wrk -t1 -c$UNPINNED_CONNECTIONS. CPU per request is
#   the gateway's utime + stime over the round (every thread, /proc/PID/stat) divided by
#   the requests wrk counted; "others" is the CPU that processes other than this run's
#   took during the round, in % of the machine. Prints the medians and the ratios c/b,
#   f/b and c/f of requests/s, requests per CPU-second and p99 (median of the rounds' pair
#   ratios, with their range). With PROFILE=cpu (or itimer, wall) one more round per
#   gateway runs under async-profiler (tools.profiler:async-profiler from the local Maven
#   repository, fetched there with mvn dependency:get if missing), written to
#   $WORK/profile-<gateway>.collapsed and .html; PROFILE=jfr records a JDK Flight
#   Recorder file instead. Profiled rounds are not in the table. CANDIDATE_JAR adds (g),
#   the same gateway as (c) from another jar, measured in the same rounds (g/b, g/c).
#   After the rounds, one HANDOFF_DURATION s round per gateway counts the writes handed
#   to another event loop per request (every Netty WriteTask created, through
#   async-profiler's Java-method event), in a table of its own.
#
# Needs java 17+, Maven, wrk, nginx and curl (Debian: apt-get install -y wrk nginx-light curl).
# Builds the sample app's and the benchmarks' jars from the work tree first (SKIP_BUILD=true
# to run the jars already in target/). Settings, all optional, from the environment:
#   CONNECTIONS=32 DURATION=15 ROUNDS=5                      throughput
#   SLOW_CONNECTIONS="16 4" SLOW_DURATION=30 SLOW_WARMUP=10 FAST_MS=20 SLOW_MS=200   slow
#                                   (one table per client count in SLOW_CONNECTIONS)
#   TAIL_CONNECTIONS="4 16 64" TAIL_DURATION=10 TAIL_WARMUP=5 SPORADIC_MS=5
#   SPORADIC_PERCENT=3 SPORADIC_SLOW_MS=500 HEDGE_LOAD=0.05 LATENCY_FACTOR=3    tail
#   OVERLOAD_WORKERS=4 OVERLOAD_SERVICE_MS=20 OVERLOAD_PERCENT=150 OVERLOAD_DURATION=20
#   OVERLOAD_PATIENCE_MS=1000 OVERLOAD_UNLOADED_RATE=60 OVERLOAD_UNLOADED_DURATION=6
#   OVERLOAD_WARMUP=5 OVERLOAD_WARMUP_PERCENT=70 OVERLOAD_JIT_WARMUP=20
#   OVERLOAD_LIMITS="none gradient2 vegas aimd fixed" FIXED_LIMIT=5
#   OVERLOAD_GRADIENT2_INITIAL=8 OVERLOAD_PARTITIONED=vegas OVERLOAD_MAX_WAIT=250ms   overload
#   LOCALITY_CONNECTIONS="4 16 64" LOCALITY_WORKERS=2 LOCALITY_SERVICE_MS=10
#   LOCALITY_HOP_MS=2 LOCALITY_DURATION=8 LOCALITY_WARMUP=3 LOCALITY_JIT_WARMUP=20
#   LOCALITY_ALGORITHMS="round-robin peak-ewma"                          locality
#   LOAD_REPORTS_SMALL=2 LOAD_REPORTS_LARGE=8 LOAD_REPORTS_SERVICE_MS=10 LOAD_REPORTS_PERCENT=80
#   LOAD_REPORTS_LEARN=15 LOAD_REPORTS_WARMUP=30 LOAD_REPORTS_DURATION=30 LOAD_REPORTS_PATIENCE_MS=10000
#   LOAD_REPORTS_ROWS="reports-p2c peak-ewma reports-round-robin round-robin"     load-reports
#   MIRROR_PERCENT=100 MIRROR_CONNECTIONS=64 MIRROR_DURATION=12 MIRROR_ROUNDS=5
#   MIRROR_RATE_PERCENT=10 MIRROR_RATE_DURATION=8 MIRROR_RATE_ROUNDS=3   mirror (and JIT_*)
#   SOAK_REQUESTS=500000 SOAK_WARMUP=100000 SOAK_CONNECTIONS=32 SOAK_STEP=20
#   SOAK_MAX_GROWTH_KB=1024                                              soak
#   WARMUP_MIN=120 WARMUP_MAX=240   a gateway warms up in 10 s steps until requests/s
#                                   holds within 5%, between these bounds (seconds)
#   LOADGEN_CPU=0 SERVER_CPU=1      taskset pinning (when the machine has 2+ CPUs)
#   GATEWAY_JAVA_OPTS="-Xms512m -Xmx512m"
#   QUIET_WAIT=30                   longest wait for an idle machine before each run (seconds)
#   UNPINNED_CONNECTIONS=64 UNPINNED_DURATION=20 UNPINNED_ROUNDS=6       --unpinned
#   JIT_WARMUP_MAX=120 JIT_QUIET_SECONDS=10 JIT_QUIET_PERCENT=1 JIT_STEP=5
#   UNPINNED_SAME_SETTINGS="--gateway.lb.defaults.timeouts.response=0s --gateway.lb.defaults.retry.attempts=0"
#   PROFILE=cpu|itimer|wall|jfr PROFILE_DURATION=20 ASYNC_PROFILER_VERSION=4.2
#   HANDOFF_DURATION=10 (0: no hand-off round)                --unpinned
#   GATEWAY_JAR=path/to/sample-app.jar   every gateway from this jar instead of the work
#                                   tree's (soak: the live heap of another build)
#   CANDIDATE_JAR=path/to/sample-app.jar   --unpinned: a fourth gateway, (g), from another
#                                   build (a change under test) with (c)'s settings
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOAD=$ROOT/benchmarks/load
WORK=$ROOT/benchmarks/target/load
BUILT_SAMPLE_JAR=${GATEWAY_JAR:-$ROOT/sample-app/target/sample-app-0.1.0-SNAPSHOT.jar}
BUILT_BENCH_JAR=$ROOT/benchmarks/target/benchmarks.jar
# Copies, so that a rebuild in the work tree during a run cannot change what runs.
SAMPLE_JAR=$WORK/gateway.jar
BENCH_JAR=$WORK/benchmarks.jar

CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-5}
SLOW_CONNECTIONS=${SLOW_CONNECTIONS:-"16 4"}
SLOW_DURATION=${SLOW_DURATION:-30}
SLOW_WARMUP=${SLOW_WARMUP:-10}
FAST_MS=${FAST_MS:-20}
SLOW_MS=${SLOW_MS:-200}
WARMUP_MIN=${WARMUP_MIN:-120}
WARMUP_MAX=${WARMUP_MAX:-240}
GATEWAY_JAVA_OPTS=${GATEWAY_JAVA_OPTS:-"-Xms512m -Xmx512m"}
QUIET_WAIT=${QUIET_WAIT:-30}
TAIL_CONNECTIONS=${TAIL_CONNECTIONS:-"4 16 64"}
TAIL_DURATION=${TAIL_DURATION:-10}
TAIL_WARMUP=${TAIL_WARMUP:-5}
SPORADIC_MS=${SPORADIC_MS:-5}
SPORADIC_PERCENT=${SPORADIC_PERCENT:-3}
SPORADIC_SLOW_MS=${SPORADIC_SLOW_MS:-500}
HEDGE_LOAD=${HEDGE_LOAD:-0.05}
LATENCY_FACTOR=${LATENCY_FACTOR:-3}
OVERLOAD_WORKERS=${OVERLOAD_WORKERS:-4}
OVERLOAD_SERVICE_MS=${OVERLOAD_SERVICE_MS:-20}
OVERLOAD_PERCENT=${OVERLOAD_PERCENT:-150}
OVERLOAD_DURATION=${OVERLOAD_DURATION:-20}
OVERLOAD_PATIENCE_MS=${OVERLOAD_PATIENCE_MS:-1000}
OVERLOAD_UNLOADED_RATE=${OVERLOAD_UNLOADED_RATE:-60}
OVERLOAD_UNLOADED_DURATION=${OVERLOAD_UNLOADED_DURATION:-6}
OVERLOAD_WARMUP=${OVERLOAD_WARMUP:-5}
OVERLOAD_WARMUP_PERCENT=${OVERLOAD_WARMUP_PERCENT:-70}
OVERLOAD_JIT_WARMUP=${OVERLOAD_JIT_WARMUP:-20}
OVERLOAD_LIMITS=${OVERLOAD_LIMITS:-"none gradient2 vegas aimd fixed"}
# The backends' workers plus one: each worker finds its next request waiting when it
# finishes (no idle gap of a round trip through the gateway), and a request waits at most
# one service time behind it.
FIXED_LIMIT=${FIXED_LIMIT:-5}
OVERLOAD_GRADIENT2_INITIAL=${OVERLOAD_GRADIENT2_INITIAL-8}
# The partitioned row's limit (empty: no such row): partitions critical 0.8 and batch 0.2
# by the header X-Class, half the requests each, and OVERLOAD_MAX_WAIT.
OVERLOAD_PARTITIONED=${OVERLOAD_PARTITIONED-vegas}
OVERLOAD_MAX_WAIT=${OVERLOAD_MAX_WAIT:-250ms}
LOCALITY_CONNECTIONS=${LOCALITY_CONNECTIONS:-"4 16 64"}
LOCALITY_WORKERS=${LOCALITY_WORKERS:-2}
LOCALITY_SERVICE_MS=${LOCALITY_SERVICE_MS:-10}
LOCALITY_HOP_MS=${LOCALITY_HOP_MS:-2}
LOCALITY_DURATION=${LOCALITY_DURATION:-8}
LOCALITY_WARMUP=${LOCALITY_WARMUP:-3}
LOCALITY_JIT_WARMUP=${LOCALITY_JIT_WARMUP:-20}
LOCALITY_ALGORITHMS=${LOCALITY_ALGORITHMS:-"round-robin peak-ewma"}
LOAD_REPORTS_SMALL=${LOAD_REPORTS_SMALL:-2}
LOAD_REPORTS_LARGE=${LOAD_REPORTS_LARGE:-8}
LOAD_REPORTS_SERVICE_MS=${LOAD_REPORTS_SERVICE_MS:-10}
LOAD_REPORTS_PERCENT=${LOAD_REPORTS_PERCENT:-80}
LOAD_REPORTS_WARMUP=${LOAD_REPORTS_WARMUP:-30}
LOAD_REPORTS_DURATION=${LOAD_REPORTS_DURATION:-30}
LOAD_REPORTS_LEARN=${LOAD_REPORTS_LEARN:-15}
LOAD_REPORTS_PATIENCE_MS=${LOAD_REPORTS_PATIENCE_MS:-10000}
LOAD_REPORTS_ROWS=${LOAD_REPORTS_ROWS:-"reports-p2c peak-ewma reports-round-robin round-robin"}
MIRROR_PERCENT=${MIRROR_PERCENT:-100}
MIRROR_CONNECTIONS=${MIRROR_CONNECTIONS:-64}
MIRROR_DURATION=${MIRROR_DURATION:-12}
MIRROR_ROUNDS=${MIRROR_ROUNDS:-5}
MIRROR_RATE_PERCENT=${MIRROR_RATE_PERCENT:-10}
MIRROR_RATE_DURATION=${MIRROR_RATE_DURATION:-8}
MIRROR_RATE_ROUNDS=${MIRROR_RATE_ROUNDS:-3}
SOAK_REQUESTS=${SOAK_REQUESTS:-500000}
SOAK_WARMUP=${SOAK_WARMUP:-100000}
SOAK_CONNECTIONS=${SOAK_CONNECTIONS:-32}
SOAK_STEP=${SOAK_STEP:-20}
SOAK_MAX_GROWTH_KB=${SOAK_MAX_GROWTH_KB:-1024}

BACKEND_PORTS=(18081 18082 18083)
DELAY_PORTS=(18091 18092 18093)
HEALTHY_PORTS=(18094 18095 18096)
SPORADIC_PORTS=(18097 18098 18099)
WORKER_PORTS=(18101 18102 18103)
LOCAL_PORTS=(18111 18112 18113)
REMOTE_PORTS=(18114 18115 18116)
REPORTING_PORTS=(18121 18122 18123 18124)
SHADOW_PORTS=(18121 18122 18123)
TAIL_ALGORITHMS=(round-robin least-requests power-of-two-choices peak-ewma)
# Set by the tail scenario: a second configuration file on top of gateway.yml.
EXTRA_CONFIG=
NGINX_PROXY_PORT=18080
PLAIN_PORT=18181
STARTER_PORT=18182

UNPINNED=false
if [ "${1:-}" = --unpinned ]; then
	UNPINNED=true
	shift
fi
UNPINNED_CONNECTIONS=${UNPINNED_CONNECTIONS:-64}
UNPINNED_DURATION=${UNPINNED_DURATION:-20}
UNPINNED_ROUNDS=${UNPINNED_ROUNDS:-6}
JIT_WARMUP_MAX=${JIT_WARMUP_MAX:-120}
JIT_QUIET_SECONDS=${JIT_QUIET_SECONDS:-10}
JIT_QUIET_PERCENT=${JIT_QUIET_PERCENT:-1}
JIT_STEP=${JIT_STEP:-5}
UNPINNED_SAME_SETTINGS=${UNPINNED_SAME_SETTINGS:-"--gateway.lb.defaults.timeouts.response=0s --gateway.lb.defaults.retry.attempts=0"}
PROFILE=${PROFILE:-}
PROFILE_DURATION=${PROFILE_DURATION:-20}
HANDOFF_DURATION=${HANDOFF_DURATION:-10}
ASYNC_PROFILER_VERSION=${ASYNC_PROFILER_VERSION:-4.2}
CANDIDATE_JAR=${CANDIDATE_JAR:-}
SAME_PORT=18183
CANDIDATE_PORT=18184

# Two cores or more: the load generator on one, the servers on another, so that wrk does
# not take the gateway's CPU. On one core, or unpinned, no pinning.
if [ "$UNPINNED" = true ]; then
	LOADGEN=()
	SERVER=()
elif [ "$(nproc)" -ge 2 ]; then
	LOADGEN_CPU=${LOADGEN_CPU:-0}
	SERVER_CPU=${SERVER_CPU:-1}
	LOADGEN=(taskset -c "$LOADGEN_CPU")
	SERVER=(taskset -c "$SERVER_CPU")
else
	LOADGEN=()
	SERVER=()
fi

PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	PIDS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

require() { # require TOOL...
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk nginx-light curl)" >&2; exit 1; }
	done
	if [ "${SKIP_BUILD:-false}" != true ]; then
		log "building the sample app and benchmark jars"
		# Without the old jar: Maven keeps a jar whose classes did not change, and Spring
		# Boot's repackage leaves an already repackaged jar alone, so the sample app's jar
		# would keep the gateway-lb it was first built with.
		if [ -z "${GATEWAY_JAR:-}" ]; then
			rm -f "$BUILT_SAMPLE_JAR" "$BUILT_SAMPLE_JAR.original"
		fi
		# To stderr: stdout is the results, to paste (Maven -q still prints colour codes).
		(cd "$ROOT" && mvn -B -q -Pbenchmarks -pl benchmarks,sample-app -am package -DskipTests) >&2
	fi
	mkdir -p "$WORK"
	cp "$BUILT_SAMPLE_JAR" "$SAMPLE_JAR"
	cp "$BUILT_BENCH_JAR" "$BENCH_JAR"
}

# Starts a command in the background, logs to $WORK/<name>.log, and leaves its pid in
# LAST_PID (not echoed: a $(start ...) subshell would lose the pid list).
LAST_PID=
start() {
	local name=$1
	shift
	"$@" >"$WORK/$name.log" 2>&1 &
	LAST_PID=$!
	PIDS+=("$LAST_PID")
}

await() {
	local url=$1 name=$2
	for _ in $(seq 1 240); do
		if curl -sf -o /dev/null "$url"; then
			return 0
		fi
		sleep 0.5
	done
	echo "$name did not answer $url within 120 s; see $WORK/$name.log" >&2
	exit 1
}

cpu_busy() { # percent of all CPUs busy over one second
	local a b i total=0
	read -ra a < <(head -1 /proc/stat)
	sleep 1
	read -ra b < <(head -1 /proc/stat)
	for i in 1 2 3 4 5 6 7 8; do
		total=$((total + b[i] - a[i]))
	done
	local idle=$(((b[4] + b[5]) - (a[4] + a[5])))
	echo $((100 - 100 * idle / (total > 0 ? total : 1)))
}

# Waits (at most QUIET_WAIT s) until the machine is idle apart from our idle servers: a
# build or test run of someone else on the same cores would be measured as our latency.
# Leaves the last reading in BUSY, which every result line carries.
BUSY=0
wait_quiet() {
	for _ in $(seq 1 $(((QUIET_WAIT + 1) / 2))); do
		BUSY=$(cpu_busy)
		[ "$BUSY" -lt 15 ] && return 0
		log "machine busy (${BUSY}% CPU) before a run; waiting"
		sleep 1
	done
	log "machine still busy (${BUSY}% CPU); measuring anyway"
}

cpu_ticks() { # cpu_ticks PID... -> user + system clock ticks of the processes, all threads
	local total=0 pid stat
	for pid in "$@"; do
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
		stat=${stat##*) }
		read -ra stat <<<"$stat"
		total=$((total + stat[11] + stat[12]))
	done
	echo "$total"
}

# wrk_run URL CONNECTIONS SECONDS [PID...] -> "RESULT ... busy=N cpu=MICROS"
# cpu: CPU time the given processes spent per request, in microseconds. Unlike
# requests/s it hardly changes when another job shares the machine, so it compares two
# gateways even on a busy machine.
wrk_run() {
	local url=$1 connections=$2 seconds=$3
	shift 3
	wait_quiet
	local line before after
	before=$(cpu_ticks "$@")
	line=$("${LOADGEN[@]}" wrk -t1 -c"$connections" -d"$seconds"s --timeout 10s -s "$LOAD/report.lua" "$url" | grep '^RESULT')
	after=$(cpu_ticks "$@")
	local cpu
	cpu=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$(field requests "$line")" 'BEGIN { printf "%.0f", (n > 0) ? t / hz * 1e6 / n : 0 }')
	echo "$line busy=$BUSY cpu=$cpu"
}

field() { # field NAME "RESULT ..." -> value, one per RESULT line
	sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# A JVM pinned to one core needs minutes of load before C2 has compiled the request path
# (40 s of compiler CPU for the gateway): warm up in 10 s steps until requests/s holds.
warm_up() { # warm_up NAME URL
	local name=$1 url=$2 previous=0 elapsed=0 line rps
	while [ "$elapsed" -lt "$WARMUP_MAX" ]; do
		line=$(wrk_run "$url" "$CONNECTIONS" 10)
		rps=$(field rps "$line")
		elapsed=$((elapsed + 10))
		log "warm-up $name ${elapsed}s: $rps requests/s"
		if [ "$elapsed" -ge "$WARMUP_MIN" ] && awk -v a="$rps" -v b="$previous" 'BEGIN { exit !(b > 0 && a / b > 0.95 && a / b < 1.05) }'; then
			return 0
		fi
		previous=$rps
	done
}

start_nginx() { # start_nginx NAME CONFIG-BODY
	local name=$1 dir=$WORK/$1
	mkdir -p "$dir/logs" "$dir/tmp"
	cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	keepalive_requests 1000000;
	keepalive_timeout 120s;
$2
}
EOF
	start "$name" "${SERVER[@]}" nginx -p "$dir" -c "$dir/nginx.conf"
}

start_gateway() { # start_gateway NAME PORT [ARGS...]
	local name=$1 port=$2
	shift 2
	# shellcheck disable=SC2086
	start "$name" "${SERVER[@]}" java $GATEWAY_JAVA_OPTS -jar "$SAMPLE_JAR" --server.port="$port" \
		--spring.config.additional-location="file:$LOAD/gateway.yml${EXTRA_CONFIG:+,file:$EXTRA_CONFIG}" \
		--bench.port1="${BACKEND_PORTS[0]}" --bench.port2="${BACKEND_PORTS[1]}" --bench.port3="${BACKEND_PORTS[2]}" \
		--bench.slow1="${DELAY_PORTS[0]}" --bench.slow2="${DELAY_PORTS[1]}" --bench.slow3="${DELAY_PORTS[2]}" "$@"
}

# An nginx answering "ok" on three ports: ok_backend NAME PORT PORT PORT
ok_backend() {
	start_nginx "$1" "	server {
		listen 127.0.0.1:$2;
		listen 127.0.0.1:$3;
		listen 127.0.0.1:$4;
		location / { default_type text/plain; return 200 \"ok\n\"; }
	}"
}

# The fast backend every mode routes to.
start_fast_backend() {
	log "fast backend: nginx on ${BACKEND_PORTS[*]}"
	ok_backend backend "${BACKEND_PORTS[@]}"
	BACKEND_PID=$LAST_PID
}

# The shadow of the mirror and soak scenarios: another nginx answering what the fast
# backend answers, on SHADOW_PORTS.
start_shadow_backend() {
	log "shadow backend: nginx on ${SHADOW_PORTS[*]}"
	ok_backend shadow "${SHADOW_PORTS[@]}"
}

start_all() {
	start_fast_backend
	start_nginx proxy "	upstream bench {
		server 127.0.0.1:${BACKEND_PORTS[0]};
		server 127.0.0.1:${BACKEND_PORTS[1]};
		server 127.0.0.1:${BACKEND_PORTS[2]};
		keepalive 64;
	}
	server {
		listen 127.0.0.1:$NGINX_PROXY_PORT;
		location / {
			proxy_pass http://bench;
			proxy_http_version 1.1;
			proxy_set_header Connection \"\";
		}
	}"
	PROXY_PID=$LAST_PID
	log "delay backends: ${DELAY_PORTS[0]} and ${DELAY_PORTS[1]} ${FAST_MS} ms, ${DELAY_PORTS[2]} ${SLOW_MS} ms"
	local sporadic=$SPORADIC_MS:$SPORADIC_PERCENT:$SPORADIC_SLOW_MS
	start delay-backend "${SERVER[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.DelayBackend \
		"${DELAY_PORTS[0]}:$FAST_MS" "${DELAY_PORTS[1]}:$FAST_MS" "${DELAY_PORTS[2]}:$SLOW_MS" \
		"${HEALTHY_PORTS[0]}:$FAST_MS" "${HEALTHY_PORTS[1]}:$FAST_MS" "${HEALTHY_PORTS[2]}:$FAST_MS" \
		"${SPORADIC_PORTS[0]}:$sporadic" "${SPORADIC_PORTS[1]}:$sporadic" "${SPORADIC_PORTS[2]}:$sporadic"
	log "gateways: (b) plain Spring Cloud Gateway on $PLAIN_PORT, (c) with gateway-lb on $STARTER_PORT"
	start_gateway plain "$PLAIN_PORT" --gateway.lb.enabled=false
	PLAIN_PID=$LAST_PID
	start_gateway starter "$STARTER_PORT"
	STARTER_PID=$LAST_PID
	await "http://127.0.0.1:${BACKEND_PORTS[0]}/" backend
	await "http://127.0.0.1:$NGINX_PROXY_PORT/" proxy
	await "http://127.0.0.1:${DELAY_PORTS[0]}/__stats" delay-backend
	await "http://127.0.0.1:$PLAIN_PORT/bench/" plain
	await "http://127.0.0.1:$STARTER_PORT/bench/" starter
	warm_up "(b)" "http://127.0.0.1:$PLAIN_PORT/bench/"
	warm_up "(c)" "http://127.0.0.1:$STARTER_PORT/bench/"
}

describe_machine() {
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "java: $(java -version 2>&1 | head -1)"
	echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo ' (work tree with changes)')"
	if command -v wrk >/dev/null && command -v nginx >/dev/null; then
		echo "wrk: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), nginx: $(nginx -v 2>&1 | cut -d/ -f2)"
	fi
	if [ "$UNPINNED" = true ]; then
		echo "pinning: none (--unpinned): wrk, backends and gateways share all $(nproc) CPUs"
	elif [ ${#SERVER[@]} -gt 0 ]; then
		echo "pinning: the load client (wrk, ClosedLoopClient, OpenLoopClient) on CPU $LOADGEN_CPU; backends, gateways and nginx on CPU $SERVER_CPU"
	else
		echo "pinning: none (one CPU)"
	fi
}

throughput() {
	local -A urls=([a]="http://127.0.0.1:${BACKEND_PORTS[0]}/bench/" [b]="http://127.0.0.1:$PLAIN_PORT/bench/"
		[c]="http://127.0.0.1:$STARTER_PORT/bench/" [d]="http://127.0.0.1:$NGINX_PROXY_PORT/bench/"
		[e]="http://127.0.0.1:$PLAIN_PORT/direct/")
	# CPU per request: the gateway (or nginx worker) itself, the backend excluded
	local -A pids=([a]="$(pgrep -P "$BACKEND_PID" | paste -sd' ')" [b]="$PLAIN_PID" [c]="$STARTER_PID"
		[d]="$(pgrep -P "$PROXY_PID" | paste -sd' ')" [e]="$PLAIN_PID")
	# (e) runs in (b)'s JVM, warm from (b)'s warm-up: 10 s more compile what only its
	# route uses.
	log "warm-up (e) 10s"
	wrk_run "${urls[e]}" "$CONNECTIONS" 10 >/dev/null
	local -A results=()
	for round in $(seq 1 "$ROUNDS"); do
		# Interleaved rounds: a drift of the machine hits every target alike.
		for target in a b c d e; do
			local line
			# shellcheck disable=SC2086
			line=$(wrk_run "${urls[$target]}" "$CONNECTIONS" "$DURATION" ${pids[$target]})
			log "round $round $target: $line"
			results[$target]+="$line"$'\n'
		done
	done

	echo
	echo "## Throughput: wrk -t1 -c$CONNECTIONS, ${DURATION}s x $ROUNDS interleaved rounds (medians)"
	echo
	echo "| target | requests/s | p50 ms | p99 ms | p99.9 ms | CPU us/request | errors | rounds: requests/s (machine busy before, %) |"
	echo "|---|---|---|---|---|---|---|---|"
	local -A rps=() p99=() cpu=() names=([a]="(a) backend direct (nginx)" [b]="(b) Spring Cloud Gateway + SCLB round-robin"
		[c]="(c) Spring Cloud Gateway + gateway-lb round-robin" [d]="(d) nginx upstream (round-robin)"
		[e]="(e) plain Spring Cloud Gateway, no balancing (one backend)")
	for target in a b c d e; do
		local lines=${results[$target]} p50 p999 errors all
		rps[$target]=$(field rps "$lines" | median)
		cpu[$target]=$(field cpu "$lines" | median)
		p99[$target]=$(field p99 "$lines" | median)
		p50=$(field p50 "$lines" | median)
		p999=$(field p999 "$lines" | median)
		errors=$(paste <(field errors "$lines") <(field non2xx "$lines") | awk '{ s += $1 + $2 } END { print s + 0 }')
		all=$(paste -d' ' <(field rps "$lines") <(field busy "$lines") | awk '{ printf "%s%s (%s)", (NR > 1 ? ", " : ""), $1, $2 }')
		echo "| ${names[$target]} | ${rps[$target]} | $(ms "$p50") | $(ms "${p99[$target]}") | $(ms "$p999") | ${cpu[$target]} | $errors | $all |"
	done
	echo
	echo "| ratio | requests/s | p99 | requests per CPU-second |"
	echo "|---|---|---|---|"
	echo "| c/b (gateway-lb / plain gateway) | $(ratio "${rps[c]}" "${rps[b]}") | $(ratio "${p99[c]}" "${p99[b]}") | $(ratio "${cpu[b]}" "${cpu[c]}") |"
	echo "| c/d (gateway-lb / nginx) | $(ratio "${rps[c]}" "${rps[d]}") | $(ratio "${p99[c]}" "${p99[d]}") | $(ratio "${cpu[d]}" "${cpu[c]}") |"
	echo "| b/d (plain gateway / nginx) | $(ratio "${rps[b]}" "${rps[d]}") | $(ratio "${p99[b]}" "${p99[d]}") | $(ratio "${cpu[d]}" "${cpu[b]}") |"
	echo
	echo "| ratio | requests/s | p99 | CPU per request |"
	echo "|---|---|---|---|"
	echo "| c/b (gateway-lb / plain gateway with SCLB) | $(ratio "${rps[c]}" "${rps[b]}") | $(ratio "${p99[c]}" "${p99[b]}") | $(ratio "${cpu[c]}" "${cpu[b]}") |"
	echo "| c/e (gateway-lb / plain gateway, no balancing) | $(ratio "${rps[c]}" "${rps[e]}") | $(ratio "${p99[c]}" "${p99[e]}") | $(ratio "${cpu[c]}" "${cpu[e]}") |"
	echo "| b/e (plain gateway: SCLB / no balancing) | $(ratio "${rps[b]}" "${rps[e]}") | $(ratio "${p99[b]}" "${p99[e]}") | $(ratio "${cpu[b]}" "${cpu[e]}") |"
}

slow() {
	local connections
	# SLOW_CONNECTIONS may list several client counts: one table each, same processes.
	for connections in $SLOW_CONNECTIONS; do
		slow_table "$connections"
	done
}

slow_table() { # slow_table CONNECTIONS
	local connections=$1 rows=()
	for variant in sclb round-robin least-requests power-of-two-choices peak-ewma; do
		local url=http://127.0.0.1:$STARTER_PORT/slow/$variant/ name="gateway-lb $variant"
		if [ "$variant" = sclb ]; then
			url=http://127.0.0.1:$PLAIN_PORT/slow/round-robin/
			name="Spring Cloud LoadBalancer round-robin"
		fi
		log "$name, $connections connections: warm-up ${SLOW_WARMUP}s"
		wrk_run "$url" "$connections" "$SLOW_WARMUP" >/dev/null
		local before after line shares
		before=$(curl -sf "http://127.0.0.1:${DELAY_PORTS[0]}/__stats")
		line=$(wrk_run "$url" "$connections" "$SLOW_DURATION")
		after=$(curl -sf "http://127.0.0.1:${DELAY_PORTS[0]}/__stats")
		log "$name: $line"
		shares=$(paste <(echo "$before") <(echo "$after") | awk '{ d[NR] = $4 - $2; t += $4 - $2 }
			END { for (i = 1; i <= NR; i++) printf "%s%.1f%%", (i > 1 ? " / " : ""), 100 * d[i] / t }')
		rows+=("| $name | $(field rps "$line") | $(ms "$(field p50 "$line")") | $(ms "$(field p90 "$line")") | $(ms "$(field p99 "$line")") | $(ms "$(field p999 "$line")") | $shares | $(($(field errors "$line") + $(field non2xx "$line"))) | $(field busy "$line") |")
	done

	echo
	echo "## One slow backend (${FAST_MS} ms, ${FAST_MS} ms, ${SLOW_MS} ms): wrk -t1 -c$connections, ${SLOW_DURATION}s per balancer after ${SLOW_WARMUP}s on the same route"
	echo
	echo "| balancer | requests/s | p50 ms | p90 ms | p99 ms | p99.9 ms | share fast / fast / slow | errors | machine busy before, % |"
	echo "|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
}

# Writes the tail scenario's routes and services: /tail/SCENARIO/ALGORITHM/VARIANT/ to
# service tail-SCENARIO-ALGORITHM-VARIANT, VARIANT off, hedge or eject. The bench route
# stays, for the gateways' warm-up. A list replaces gateway.yml's whole, so this file
# lists every route.
write_tail_config() {
	local file=$WORK/tail.properties scenario algorithm variant service route=1 i
	local -A ports=([healthy]="${HEALTHY_PORTS[*]}" [slow]="${DELAY_PORTS[*]}" [sporadic]="${SPORADIC_PORTS[*]}")
	{
		echo "spring.cloud.gateway.server.webflux.routes[0].id=bench"
		echo "spring.cloud.gateway.server.webflux.routes[0].uri=lb://bench"
		echo "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/bench/**"
		for scenario in healthy slow sporadic; do
			for algorithm in "${TAIL_ALGORITHMS[@]}"; do
				for variant in off hedge eject; do
					service=tail-$scenario-$algorithm-$variant
					i=0
					for port in ${ports[$scenario]}; do
						echo "spring.cloud.discovery.client.simple.instances.$service[$i].uri=http://127.0.0.1:$port"
						i=$((i + 1))
					done
					echo "spring.cloud.gateway.server.webflux.routes[$route].id=$service"
					echo "spring.cloud.gateway.server.webflux.routes[$route].uri=lb://$service"
					echo "spring.cloud.gateway.server.webflux.routes[$route].predicates[0]=Path=/tail/$scenario/$algorithm/$variant/**"
					route=$((route + 1))
					echo "gateway.lb.services.$service.algorithm=$algorithm"
					case $variant in
						hedge) echo "gateway.lb.services.$service.hedge.max-extra-load=$HEDGE_LOAD" ;;
						eject) echo "gateway.lb.services.$service.health.passive.latency-factor=$LATENCY_FACTOR" ;;
					esac
				done
			done
		done
	} >"$file"
	EXTRA_CONFIG=$file
}

# client_run URL CONNECTIONS WARMUP SECONDS -> "RESULT ... all=N busy=N": the tail
# scenarios' load, from ClosedLoopClient (each answer counted once; wrk would correct
# for coordinated omission, see the class), pinned where wrk runs.
client_run() {
	wait_quiet
	local line
	line=$("${LOADGEN[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.ClosedLoopClient "$@" | grep '^RESULT')
	echo "$line busy=$BUSY"
}

backend_requests() { # backend_requests PORT... -> requests the ports served so far, each on a line
	local stats port
	stats=$(curl -sf "http://127.0.0.1:${DELAY_PORTS[0]}/__stats")
	for port in "$@"; do
		awk -v p="$port" '$1 == p { print $2 }' <<<"$stats"
	done
}

tail_scenarios() {
	# "SCENARIO CONNECTIONS ALGORITHM VARIANT" -> "p50 p99 extra delay", for the targets.
	declare -gA TAIL_FIGURES=()
	local connections scenario
	for scenario in healthy slow sporadic; do
		for connections in $TAIL_CONNECTIONS; do
			tail_table "$scenario" "$connections"
		done
	done
}

tail_table() { # tail_table SCENARIO CONNECTIONS
	local scenario=$1 connections=$2 rows=() ports description
	case $scenario in
		healthy) ports=("${HEALTHY_PORTS[@]}"); description="all healthy ($FAST_MS ms each)" ;;
		slow) ports=("${DELAY_PORTS[@]}"); description="one slow backend ($FAST_MS, $FAST_MS, $SLOW_MS ms)" ;;
		sporadic) ports=("${SPORADIC_PORTS[@]}")
			description="sporadic slowness (all $SPORADIC_MS ms, $SPORADIC_PERCENT% of answers $SPORADIC_SLOW_MS ms)" ;;
	esac
	local variants=("sclb off")
	local algorithm variant
	for algorithm in "${TAIL_ALGORITHMS[@]}"; do
		for variant in off hedge eject; do
			# All healthy: the baseline the targets compare with, one row per balancer.
			if [ "$scenario" = healthy ] && [ "$variant" != off ]; then
				continue
			fi
			variants+=("$algorithm $variant")
		done
	done
	local entry
	for entry in "${variants[@]}"; do
		read -r algorithm variant <<<"$entry"
		local url=http://127.0.0.1:$STARTER_PORT/tail/$scenario/$algorithm/$variant/ name="gateway-lb $algorithm"
		if [ "$algorithm" = sclb ]; then
			url=http://127.0.0.1:$PLAIN_PORT/tail/$scenario/round-robin/off/
			name="Spring Cloud LoadBalancer round-robin"
		fi
		local before after line all served extra share delay=-
		before=$(backend_requests "${ports[@]}")
		line=$(client_run "$url" "$connections" "$TAIL_WARMUP" "$TAIL_DURATION")
		after=$(backend_requests "${ports[@]}")
		served=$(paste <(echo "$before") <(echo "$after") | awk '{ t += $2 - $1 } END { print t }')
		all=$(field all "$line")
		extra=$(awk -v s="$served" -v r="$all" 'BEGIN { printf "%.3f", (r > 0) ? s / r : 0 }')
		share=$(paste <(echo "$before") <(echo "$after") | awk '{ d[NR] = $2 - $1; t += $2 - $1 } END { printf "%.1f%%", (t > 0) ? 100 * d[NR] / t : 0 }')
		if [ "$variant" = hedge ]; then
			delay=$(curl -sf "http://127.0.0.1:$STARTER_PORT/actuator/gatewaylb/tail-$scenario-$algorithm-hedge" |
				sed -n 's/.*"delayMillis":\([0-9.]*\).*/\1/p')
			delay=${delay:--}
		fi
		log "$scenario c=$connections $name $variant: $line served=$served delay=$delay"
		TAIL_FIGURES["$scenario $connections $algorithm $variant"]="$(field p50 "$line") $(field p99 "$line") $extra $delay"
		rows+=("| $name | $variant | $(field rps "$line") | $(ms "$(field p50 "$line")") | $(ms "$(field p99 "$line")") | $(ms "$(field p999 "$line")") | $extra | $share | $delay | $(($(field errors "$line") + $(field non2xx "$line"))) | $(field busy "$line") |")
	done
	echo
	echo "## Tail, $description: $connections clients (ClosedLoopClient), ${TAIL_DURATION}s per row after ${TAIL_WARMUP}s on the same route"
	echo
	echo "| balancer | variant | requests/s | p50 ms | p99 ms | p99.9 ms | backend requests per request | third backend's share | hedge delay ms | errors | machine busy before, % |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	tail_targets "$scenario" "$connections"
}

# Prints the tail targets of one table (docs/benchmarks.md, Targets): one slow backend,
# p99 at most 1.5x the all-healthy table's p99 at the same client count; sporadic
# slowness, p99 at most 3x the healthy p50 (a fast answer's: the table's off row) plus
# the hedge delay, at no more than 1.08x backend requests. HedgeIT and LatencyEjectionIT
# compared p99s until this judged them.
tail_targets() { # tail_targets SCENARIO CONNECTIONS
	local scenario=$1 connections=$2 algorithm variant healthy figures p50 p99 extra delay limit off
	[ "$scenario" = healthy ] && return
	echo
	echo "| target | balancer | variant | p99 ms | limit ms | backend requests per request | verdict |"
	echo "|---|---|---|---|---|---|---|"
	for algorithm in "${TAIL_ALGORITHMS[@]}"; do
		healthy=${TAIL_FIGURES["healthy $connections $algorithm off"]:-}
		[ -n "$healthy" ] || continue
		for variant in hedge eject; do
			figures=${TAIL_FIGURES["$scenario $connections $algorithm $variant"]:-}
			[ -n "$figures" ] || continue
			read -r p50 p99 extra delay <<<"$figures"
			if [ "$scenario" = slow ]; then
				limit=$(awk -v h="$(cut -d' ' -f2 <<<"$healthy")" 'BEGIN { printf "%.0f", 1.5 * h }')
				echo "| one ${SLOW_MS} ms backend: p99 <= 1.5x the healthy p99 | $algorithm | $variant | $(ms "$p99") | $(ms "$limit") | $extra |" \
					"$(verdict 'v[1] <= v[2]' "$p99 $limit") |"
			elif [ "$variant" = hedge ]; then
				# The healthy p50 is a fast answer's: the p50 of this table's off row, in
				# microseconds; the delay is in milliseconds.
				off=${TAIL_FIGURES["$scenario $connections $algorithm off"]:-}
				[ -n "$off" ] || continue
				limit=$(awk -v h="$(cut -d' ' -f1 <<<"$off")" -v d="$delay" 'BEGIN { printf "%.0f", 3 * h + ((d == "-") ? 0 : d * 1000) }')
				echo "| ${SPORADIC_PERCENT}% of answers ${SPORADIC_SLOW_MS} ms: p99 <= 3x the healthy p50 + the hedge delay, <= 1.08x requests | $algorithm | $variant | $(ms "$p99") | $(ms "$limit") | $extra |" \
					"$(verdict 'v[1] <= v[2] && v[3] <= 1.08' "$p99 $limit $extra") |"
			fi
		done
	done
}

# --- --unpinned ---------------------------------------------------------------------

compiler_ticks() { # compiler_ticks PID -> user + system clock ticks of the JVM's C1/C2 compiler threads
	local total=0 task comm stat
	for task in /proc/"$1"/task/*; do
		comm=$(cat "$task/comm" 2>/dev/null) || continue
		case $comm in
			C1\ CompilerThre* | C2\ CompilerThre*) ;;
			*) continue ;;
		esac
		stat=$(cat "$task/stat" 2>/dev/null) || continue
		stat=${stat##*) }
		read -ra stat <<<"$stat"
		total=$((total + stat[11] + stat[12]))
	done
	echo "$total"
}

machine_ticks() { # machine_ticks -> "BUSY TOTAL" clock ticks of all CPUs since boot
	local a i total=0
	read -ra a < <(head -1 /proc/stat)
	for i in 1 2 3 4 5 6 7 8; do
		total=$((total + a[i]))
	done
	echo "$((total - a[4] - a[5])) $total"
}

# children_ticks: sets CHILDREN_TICKS to the user + system clock ticks of this shell's
# waited-for children (the load client). Called as a command, never in $(...) or a pipe:
# those run in a new process, whose children's times start at zero (before, "others"
# counted the load client's CPU for that reason).
CHILDREN_TICKS=0
children_ticks() {
	times >"$WORK/times.out"
	CHILDREN_TICKS=$(awk -v hz="$(getconf CLK_TCK)" 'END { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] } printf "%.0f", t * hz }' "$WORK/times.out")
}

# unpinned_run URL SECONDS PID -> "RESULT ... busy=N cpu=MICROS jit=PERCENT others=PERCENT"
# cpu: the gateway's CPU per request over this run only; jit: its compiler threads, in %
# of one core; others: CPU of processes that are not this run's (not the gateways, the
# backend or wrk), in % of the machine, during the run.
unpinned_run() {
	local url=$1 seconds=$2 pid=$3
	wait_quiet
	local out=$WORK/wrk.out before after jit0 jit1 m0 m1 ours0 ours1 w0 w1
	before=$(cpu_ticks "$pid")
	jit0=$(compiler_ticks "$pid")
	ours0=$(cpu_ticks "${OUR_PIDS[@]}")
	m0=$(machine_ticks)
	children_ticks
	w0=$CHILDREN_TICKS
	local t0 t1
	t0=$(date +%s%N)
	wrk -t1 -c"$UNPINNED_CONNECTIONS" -d"$seconds"s --timeout 10s -s "$LOAD/report.lua" "$url" >"$out"
	t1=$(date +%s%N)
	children_ticks
	w1=$CHILDREN_TICKS
	m1=$(machine_ticks)
	ours1=$(cpu_ticks "${OUR_PIDS[@]}")
	jit1=$(compiler_ticks "$pid")
	after=$(cpu_ticks "$pid")
	local line
	line=$(grep '^RESULT' "$out")
	awk -v t=$((after - before)) -v j=$((jit1 - jit0)) -v hz="$(getconf CLK_TCK)" -v n="$(field requests "$line")" \
		-v ns=$((t1 - t0)) -v mb="${m1% *}" -v mb0="${m0% *}" -v mt="${m1#* }" -v mt0="${m0#* }" \
		-v ours=$((ours1 - ours0 + w1 - w0)) -v line="$line" -v busy="$BUSY" 'BEGIN {
			others = (mt > mt0) ? 100 * ((mb - mb0) - ours) / (mt - mt0) : 0
			printf "%s busy=%d cpu=%.1f jit=%.1f others=%.0f\n", line, busy, (n > 0) ? t / hz * 1e6 / n : 0,
				100 * j / hz / (ns / 1e9), (others > 0) ? others : 0 }'
}

# Loads a gateway in JIT_STEP rounds until its compiler threads used less than
# JIT_QUIET_PERCENT of one core over the last JIT_QUIET_SECONDS, or JIT_WARMUP_MAX passed.
warm_up_jit() { # warm_up_jit NAME URL PID
	local name=$1 url=$2 pid=$3 elapsed=0 line quiet_needed recent=()
	quiet_needed=$(((JIT_QUIET_SECONDS + JIT_STEP - 1) / JIT_STEP))
	while [ "$elapsed" -lt "$JIT_WARMUP_MAX" ]; do
		line=$(unpinned_run "$url" "$JIT_STEP" "$pid")
		elapsed=$((elapsed + JIT_STEP))
		recent+=("$(field jit "$line")")
		log "warm-up $name ${elapsed}s: $(field rps "$line") requests/s, $(field cpu "$line") us/request, compiler $(field jit "$line")% of a core"
		if [ "${#recent[@]}" -ge "$quiet_needed" ] &&
			printf '%s\n' "${recent[@]: -$quiet_needed}" | awk -v q="$JIT_QUIET_PERCENT" '{ s += $1 } END { exit !(s / NR < q) }'; then
			log "warm-up $name: compiler quiet after ${elapsed}s"
			WARMED[$name]=$elapsed
			return 0
		fi
	done
	log "warm-up $name: compiler still busy after ${JIT_WARMUP_MAX}s; measuring anyway"
	WARMED[$name]="${elapsed} (not quiet)"
}

async_profiler_lib() { # -> path of libasyncProfiler.so, extracted from the local Maven repository
	local jar=$HOME/.m2/repository/tools/profiler/async-profiler/$ASYNC_PROFILER_VERSION/async-profiler-$ASYNC_PROFILER_VERSION.jar
	local arch
	arch=$(uname -m | sed 's/x86_64/x64/;s/aarch64/arm64/')
	if [ ! -f "$jar" ]; then
		log "fetching tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION into the local Maven repository"
		mvn -B -q dependency:get -Dartifact="tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION" >&2
	fi
	mkdir -p "$WORK/async-profiler"
	(cd "$WORK/async-profiler" && unzip -o -q "$jar" "linux-$arch/libasyncProfiler.so")
	echo "$WORK/async-profiler/linux-$arch/libasyncProfiler.so"
}

# One more round of load under the profiler: async-profiler attached with jcmd (no agent
# at start-up, so the measured rounds run without it), or a JFR recording.
profile_round() { # profile_round NAME URL PID
	local name=$1 url=$2 pid=$3 line
	case $PROFILE in
		jfr)
			jcmd "$pid" JFR.start name=bench settings=profile filename="$WORK/profile-$name.jfr" >/dev/null
			line=$(unpinned_run "$url" "$PROFILE_DURATION" "$pid")
			jcmd "$pid" JFR.stop name=bench >/dev/null
			;;
		*)
			local lib
			lib=$(async_profiler_lib)
			# Quoted: jcmd would take the options' '=' for arguments of its own.
			jcmd "$pid" JVMTI.agent_load "$lib" "\"start,event=$PROFILE,interval=1ms,cstack=vm\"" >/dev/null
			line=$(unpinned_run "$url" "$PROFILE_DURATION" "$pid")
			jcmd "$pid" JVMTI.agent_load "$lib" "\"stop,collapsed,file=$WORK/profile-$name.collapsed\"" >/dev/null
			jcmd "$pid" JVMTI.agent_load "$lib" "\"flamegraph,file=$WORK/profile-$name.html\"" >/dev/null
			;;
	esac
	log "profiled $name ($PROFILE): $line"
	echo "| $name | $(field rps "$line") | $(field cpu "$line") | $(field others "$line") | $WORK/profile-$name.$([ "$PROFILE" = jfr ] && echo jfr || echo collapsed) |"
}

# One more round of load counting the writes handed to another event loop: every call of
# Netty's AbstractChannelHandlerContext$WriteTask.newInstance, which a write made off its
# channel's loop creates (async-profiler's Java-method event, every call counted,
# attached after the measured rounds). Prints "requests handoffs handoffs-per-request".
handoff_round() { # handoff_round NAME URL PID
	local name=$1 url=$2 pid=$3 line lib file=$WORK/handoffs-$1.collapsed
	lib=$(async_profiler_lib)
	# Quoted: jcmd would take the options' '=' for arguments of its own.
	jcmd "$pid" JVMTI.agent_load "$lib" "\"start,event=io.netty.channel.AbstractChannelHandlerContext\$WriteTask.newInstance,interval=1\"" >/dev/null
	line=$(unpinned_run "$url" "$HANDOFF_DURATION" "$pid")
	jcmd "$pid" JVMTI.agent_load "$lib" "\"stop,collapsed,file=$file\"" >/dev/null
	local requests handoffs
	requests=$(field requests "$line")
	handoffs=$(awk '{ s += $NF } END { print s + 0 }' "$file" 2>/dev/null || echo 0)
	log "hand-offs $name: $handoffs writes handed to another loop over $requests requests"
	awk -v r="$requests" -v h="$handoffs" 'BEGIN { printf "%d %d %.3f\n", r, h, (r > 0) ? h / r : 0 }'
}

unpinned() {
	start_fast_backend
	log "gateways: (b) plain on $PLAIN_PORT, (c) the starter on $STARTER_PORT, (f) the starter with $UNPINNED_SAME_SETTINGS on $SAME_PORT"
	local -A pid=() url=()
	local targets=(b c f)
	start_gateway plain "$PLAIN_PORT" --gateway.lb.enabled=false
	pid[b]=$LAST_PID
	start_gateway starter "$STARTER_PORT"
	pid[c]=$LAST_PID
	# shellcheck disable=SC2086
	start_gateway same "$SAME_PORT" $UNPINNED_SAME_SETTINGS
	pid[f]=$LAST_PID
	url[b]=http://127.0.0.1:$PLAIN_PORT/bench/
	url[c]=http://127.0.0.1:$STARTER_PORT/bench/
	url[f]=http://127.0.0.1:$SAME_PORT/bench/
	if [ -n "$CANDIDATE_JAR" ]; then
		# A change measured beside the work tree's: the same settings as (c), another jar.
		cp "$CANDIDATE_JAR" "$WORK/candidate.jar"
		SAMPLE_JAR=$WORK/candidate.jar start_gateway candidate "$CANDIDATE_PORT"
		pid[g]=$LAST_PID
		url[g]=http://127.0.0.1:$CANDIDATE_PORT/bench/
		targets+=(g)
	fi
	await "http://127.0.0.1:${BACKEND_PORTS[0]}/" backend
	for target in "${targets[@]}"; do
		await "${url[$target]}" "gateway-$target"
	done
	OUR_PIDS=("$BACKEND_PID" $(pgrep -P "$BACKEND_PID" || true))
	for target in "${targets[@]}"; do
		OUR_PIDS+=("${pid[$target]}")
	done
	declare -gA WARMED=()
	for target in "${targets[@]}"; do
		warm_up_jit "$target" "${url[$target]}" "${pid[$target]}"
	done
	local -A results=()
	for round in $(seq 1 "$UNPINNED_ROUNDS"); do
		for target in "${targets[@]}"; do
			local line
			line=$(unpinned_run "${url[$target]}" "$UNPINNED_DURATION" "${pid[$target]}")
			log "round $round $target: $line"
			results[$target]+="$line"$'\n'
		done
	done
	local -A handoffs=()
	if [ "$HANDOFF_DURATION" != 0 ]; then
		for target in "${targets[@]}"; do
			handoffs[$target]=$(handoff_round "$target" "${url[$target]}" "${pid[$target]}")
		done
	fi
	local profiled=()
	if [ -n "$PROFILE" ]; then
		for target in "${targets[@]}"; do
			profiled+=("$(profile_round "$target" "${url[$target]}" "${pid[$target]}")")
		done
	fi

	echo
	echo "## Unpinned: wrk -t1 -c$UNPINNED_CONNECTIONS, ${UNPINNED_DURATION}s x $UNPINNED_ROUNDS interleaved rounds (medians), nothing pinned"
	echo
	echo "| target | warm-up s | requests/s | p50 ms | p99 ms | CPU us/request | compiler % of a core | errors | rounds: requests/s, us/request (busy before %, others during %) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	local -A names=([b]="(b) plain Spring Cloud Gateway lb://, SCLB round-robin" [c]="(c) with gateway-lb, defaults"
		[f]="(f) with gateway-lb, $UNPINNED_SAME_SETTINGS" [g]="(g) with gateway-lb from $CANDIDATE_JAR, defaults")
	for target in "${targets[@]}"; do
		local lines=${results[$target]} errors all
		errors=$(paste <(field errors "$lines") <(field non2xx "$lines") | awk '{ s += $1 + $2 } END { print s + 0 }')
		all=$(paste -d' ' <(field rps "$lines") <(field cpu "$lines") <(field busy "$lines") <(field others "$lines") |
			awk '{ printf "%s%s, %s (%s, %s)", (NR > 1 ? "; " : ""), $1, $2, $3, $4 }')
		echo "| ${names[$target]} | ${WARMED[$target]} | $(field rps "$lines" | median) | $(ms "$(field p50 "$lines" | median)") | $(ms "$(field p99 "$lines" | median)") | $(field cpu "$lines" | median) | $(field jit "$lines" | median) | $errors | $all |"
	done
	echo
	echo "| ratio (median of the rounds' pairs, min to max) | requests/s | requests per CPU-second | p99 |"
	echo "|---|---|---|---|"
	local pair
	local pairs=("c b" "f b" "c f")
	if [ -n "$CANDIDATE_JAR" ]; then
		pairs+=("g b" "g c")
	fi
	for pair in "${pairs[@]}"; do
		read -r x y <<<"$pair"
		echo "| $x/$y | $(pair_ratios rps "${results[$x]}" "${results[$y]}") | $(pair_ratios cpu "${results[$y]}" "${results[$x]}") | $(pair_ratios p99 "${results[$x]}" "${results[$y]}") |"
	done
	if [ ${#handoffs[@]} -gt 0 ]; then
		echo
		echo "Writes handed to another event loop (one more ${HANDOFF_DURATION}s round each, after the table's, counted by async-profiler):"
		echo
		echo "| target | requests | writes handed to another loop | per request |"
		echo "|---|---|---|---|"
		for target in "${targets[@]}"; do
			read -r r h per <<<"${handoffs[$target]}"
			echo "| $target | $r | $h | $per |"
		done
	fi
	if [ ${#profiled[@]} -gt 0 ]; then
		echo
		echo "Profiled rounds ($PROFILE, ${PROFILE_DURATION}s each, after the table's rounds):"
		echo
		echo "| target | requests/s | CPU us/request | others % | profile |"
		echo "|---|---|---|---|---|"
		printf '%s\n' "${profiled[@]}"
	fi
}

pair_ratios() { # pair_ratios FIELD LINES-A LINES-B -> "median (min-max)" of A/B per round
	paste <(field "$1" "$2") <(field "$1" "$3") | awk '$2 > 0 { print $1 / $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } printf "%.3f (%.3f-%.3f)", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}

# --- overload -----------------------------------------------------------------------

# Writes the overload scenario's routes and services: /overload/VARIANT/ to service
# overload-VARIANT on the three worker backends, round-robin; VARIANT warm (the gateways'
# JIT warm-up, no limit), sclb (the plain gateway's row), each of OVERLOAD_LIMITS, and
# gradient2-initial. The plain gateway (gateway.lb.enabled=false) ignores the gateway.lb
# keys: every service is Spring Cloud LoadBalancer's round-robin there. The pool keys keep their defaults (256
# connections, 256 pending, 5 s): the static limits the issue compares with.
write_overload_config() {
	local file=$WORK/overload.properties route=0 variant service i
	local variants=(warm sclb $OVERLOAD_LIMITS)
	if [ -n "$OVERLOAD_GRADIENT2_INITIAL" ]; then
		variants+=(gradient2-initial)
	fi
	if [ -n "$OVERLOAD_PARTITIONED" ]; then
		variants+=(partitioned)
	fi
	{
		for variant in "${variants[@]}"; do
			service=overload-$variant
			for i in 0 1 2; do
				echo "spring.cloud.discovery.client.simple.instances.$service[$i].uri=http://127.0.0.1:${WORKER_PORTS[$i]}"
			done
			echo "spring.cloud.gateway.server.webflux.routes[$route].id=$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].uri=lb://$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].predicates[0]=Path=/overload/$variant/**"
			route=$((route + 1))
			echo "gateway.lb.services.$service.algorithm=round-robin"
			case $variant in
				warm | sclb) ;;
				gradient2-initial)
					echo "gateway.lb.services.$service.concurrency.limit=gradient2"
					echo "gateway.lb.services.$service.concurrency.initial-limit=$OVERLOAD_GRADIENT2_INITIAL"
					;;
				fixed)
					echo "gateway.lb.services.$service.concurrency.limit=fixed"
					echo "gateway.lb.services.$service.concurrency.initial-limit=$FIXED_LIMIT"
					;;
				partitioned)
					echo "gateway.lb.services.$service.concurrency.limit=$OVERLOAD_PARTITIONED"
					echo "gateway.lb.services.$service.concurrency.partition-by=header:X-Class"
					echo "gateway.lb.services.$service.concurrency.partitions.critical=0.8"
					echo "gateway.lb.services.$service.concurrency.partitions.batch=0.2"
					echo "gateway.lb.services.$service.concurrency.max-wait=$OVERLOAD_MAX_WAIT"
					# One load client stands for many users: its header names the
					# partition only from a trusted peer, and its waiters may fill the
					# queue (max-wait-per-client, issue 40).
					echo "gateway.lb.trusted-proxies=127.0.0.1/32,::1/128"
					echo "gateway.lb.services.$service.concurrency.max-wait-per-client=1"
					;;
				*) echo "gateway.lb.services.$service.concurrency.limit=$variant" ;;
			esac
		done
	} >"$file"
	EXTRA_CONFIG=$file
}

overload_capacity() { echo $((3 * OVERLOAD_WORKERS * 1000 / OVERLOAD_SERVICE_MS)); }

# Waits (at most 60 s) until the worker backends have nothing queued or in service: the
# requests a row gave up on are still in their queues, and would be the next row's wait.
backends_idle() { # backends_idle [PORT]: any port of the WorkerBackend JVM (default: the overload one's)
	local stats= port=${1:-${IDLE_PORT:-${WORKER_PORTS[0]}}}
	for _ in $(seq 1 120); do
		stats=$(curl -sf "http://127.0.0.1:$port/__stats") || stats=
		if [ -n "$stats" ] && awk '$3 + $4 > 0 { exit 1 }' <<<"$stats"; then
			return 0
		fi
		sleep 0.5
	done
	log "worker backends still busy after 60 s (port served queued busy): $(echo $stats)"
}

# open_loop_run URL PHASE... -> one RESULT line per phase, each with "busy=N others=N":
# the machine's CPU before (%) and, during the run, the CPU of processes that are not this
# run's (not the backends, the gateways or the client), in % of the machine.
open_loop_run() {
	local url=$1
	shift
	backends_idle
	wait_quiet
	local out=$WORK/open-loop.out m0 m1 ours0 ours1 w0 w1
	ours0=$(cpu_ticks "${OUR_PIDS[@]}")
	m0=$(machine_ticks)
	children_ticks
	w0=$CHILDREN_TICKS
	"${LOADGEN[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.OpenLoopClient \
		"$url" "$OVERLOAD_PATIENCE_MS" "$@" >"$out"
	children_ticks
	w1=$CHILDREN_TICKS
	m1=$(machine_ticks)
	ours1=$(cpu_ticks "${OUR_PIDS[@]}")
	local others
	others=$(awk -v mb="${m1% *}" -v mb0="${m0% *}" -v mt="${m1#* }" -v mt0="${m0#* }" -v ours=$((ours1 - ours0 + w1 - w0)) \
		'BEGIN { o = (mt > mt0) ? 100 * ((mb - mb0) - ours) / (mt - mt0) : 0; printf "%.0f", (o > 0) ? o : 0 }')
	grep '^RESULT' "$out" | sed "s/\$/ busy=$BUSY others=$others/"
}

phase() { grep " phase=$1 " <<<"$2"; } # phase NAME LINES -> that phase's RESULT line

limits_after() { # limits_after SERVICE -> each endpoint's concurrencyLimit, "6/5/6", or "-"
	local body limits
	body=$(curl -sf "http://127.0.0.1:$STARTER_PORT/actuator/gatewaylb/$1") || { echo "?"; return; }
	limits=$(grep -o '"concurrencyLimit":[0-9][0-9]*' <<<"$body" | cut -d: -f2 | paste -sd/) || true
	echo "${limits:--}"
}

overload() {
	local capacity rate warm_rate
	capacity=$(overload_capacity)
	rate=$((capacity * OVERLOAD_PERCENT / 100))
	warm_rate=$((capacity * OVERLOAD_WARMUP_PERCENT / 100))
	local specs=()
	for port in "${WORKER_PORTS[@]}"; do
		specs+=("$port:$OVERLOAD_WORKERS:$OVERLOAD_SERVICE_MS")
	done
	log "worker backends: ${specs[*]} (port:workers:milliseconds), $capacity requests/s together"
	start worker-backend "${SERVER[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.WorkerBackend "${specs[@]}"
	local backend_pid=$LAST_PID
	log "gateways: (b) plain Spring Cloud Gateway on $PLAIN_PORT, (c) with gateway-lb on $STARTER_PORT"
	start_gateway plain "$PLAIN_PORT" --gateway.lb.enabled=false
	PLAIN_PID=$LAST_PID
	start_gateway starter "$STARTER_PORT"
	STARTER_PID=$LAST_PID
	OUR_PIDS=("$backend_pid" "$PLAIN_PID" "$STARTER_PID")
	await "http://127.0.0.1:${WORKER_PORTS[0]}/__stats" worker-backend
	await "http://127.0.0.1:$PLAIN_PORT/overload/warm/" plain
	await "http://127.0.0.1:$STARTER_PORT/overload/warm/" starter
	local port line
	for port in "$PLAIN_PORT" "$STARTER_PORT"; do
		log "JIT warm-up of the gateway on $port: 5s at $OVERLOAD_UNLOADED_RATE, ${OVERLOAD_JIT_WARMUP}s at $warm_rate requests/s"
		# Gently first: a gateway just started serves a few hundred requests a second
		# only once compiled, and its backlog would be the warm-up.
		line=$(open_loop_run "http://127.0.0.1:$port/overload/warm/" "jit-start:$OVERLOAD_UNLOADED_RATE:5" \
			"jit:$warm_rate:$OVERLOAD_JIT_WARMUP")
		log "$(phase jit "$line" | cut -d' ' -f2-)"
	done

	local rows=("sclb" $OVERLOAD_LIMITS)
	if [ -n "$OVERLOAD_GRADIENT2_INITIAL" ]; then
		rows+=(gradient2-initial)
	fi
	local -A results=() limits=()
	local row
	for row in "${rows[@]}"; do
		local url=http://127.0.0.1:$STARTER_PORT/overload/$row/
		if [ "$row" = sclb ]; then
			url=http://127.0.0.1:$PLAIN_PORT/overload/sclb/
		fi
		log "$row: $((2 + OVERLOAD_UNLOADED_DURATION))s at $OVERLOAD_UNLOADED_RATE, ${OVERLOAD_WARMUP}s at $warm_rate, ${OVERLOAD_DURATION}s at $rate requests/s"
		# The first 2 s are not recorded: this client's first requests (a cold JVM, new
		# connections) took 300 ms and more, and would be the unloaded p90.
		results[$row]=$(open_loop_run "$url" "client:$OVERLOAD_UNLOADED_RATE:2" \
			"unloaded:$OVERLOAD_UNLOADED_RATE:$OVERLOAD_UNLOADED_DURATION" \
			"warmup:$warm_rate:$OVERLOAD_WARMUP" "overload:$rate:$OVERLOAD_DURATION")
		limits[$row]=-
		if [ "$row" != sclb ]; then
			limits[$row]=$(limits_after "overload-$row")
		fi
		log "$row: $(phase unloaded "${results[$row]}" | cut -d' ' -f2-)"
		log "$row: $(phase overload "${results[$row]}" | cut -d' ' -f2-) limits=${limits[$row]}"
	done
	local partitioned=
	if [ -n "$OVERLOAD_PARTITIONED" ]; then
		log "partitioned: the same phases, critical and batch in turns"
		partitioned=$(open_loop_run "http://127.0.0.1:$STARTER_PORT/overload/partitioned/" --classes=critical,batch \
			"client:$OVERLOAD_UNLOADED_RATE:2" "unloaded:$OVERLOAD_UNLOADED_RATE:$OVERLOAD_UNLOADED_DURATION" \
			"warmup:$warm_rate:$OVERLOAD_WARMUP" "overload:$rate:$OVERLOAD_DURATION")
		log "partitioned: $(phase overload "$partitioned" | cut -d' ' -f2- | tr '\n' ';')"
	fi

	echo
	echo "## Overload: three backends of $OVERLOAD_WORKERS workers x $OVERLOAD_SERVICE_MS ms ($capacity requests/s), $rate requests/s (${OVERLOAD_PERCENT}%) open-loop for ${OVERLOAD_DURATION}s, users give up after $OVERLOAD_PATIENCE_MS ms"
	echo
	echo "Each row, from one OpenLoopClient: 2s at $OVERLOAD_UNLOADED_RATE requests/s unrecorded, ${OVERLOAD_UNLOADED_DURATION}s at $OVERLOAD_UNLOADED_RATE (the unloaded p50), ${OVERLOAD_WARMUP}s at $warm_rate, then the overload."
	echo
	echo "| gateway | concurrency.limit | unloaded p50 ms | 503 at ${OVERLOAD_WARMUP_PERCENT}% | goodput: 200s within $OVERLOAD_PATIENCE_MS ms | goodput % of capacity | p50 ms | p99 ms | p99 / unloaded p50 | 503 (% of sent) | gave up | other answers, errors | limits after | machine busy before / others during, % |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	local -A goodput=() p99=() p50unloaded=() shedwarm=()
	for row in "${rows[@]}"; do
		local loaded unloaded name limit
		loaded=$(phase overload "${results[$row]}")
		unloaded=$(phase unloaded "${results[$row]}")
		case $row in
			sclb) name="(b) plain, SCLB round-robin"; limit="-" ;;
			none) name="(c) gateway-lb round-robin"; limit="none (pool limits)" ;;
			fixed) name="(c) gateway-lb round-robin"; limit="fixed, initial-limit $FIXED_LIMIT" ;;
			gradient2-initial) name="(c) gateway-lb round-robin"; limit="gradient2, initial-limit $OVERLOAD_GRADIENT2_INITIAL" ;;
			*) name="(c) gateway-lb round-robin"; limit=$row ;;
		esac
		goodput[$row]=$(field ok "$loaded")
		p99[$row]=$(field p99 "$loaded")
		p50unloaded[$row]=$(field p50 "$unloaded")
		local sent shed unavailable warm
		warm=$(phase warmup "${results[$row]}")
		shedwarm[$row]=$(($(field shed "$warm") + $(field unavailable "$warm")))
		sent=$(field sent "$loaded")
		shed=$(field shed "$loaded")
		unavailable=$(field unavailable "$loaded")
		echo "| $name | $limit | $(ms "${p50unloaded[$row]}") | ${shedwarm[$row]} of $(field sent "$warm") | $(awk -v ok="${goodput[$row]}" -v d="$OVERLOAD_DURATION" 'BEGIN { printf "%d (%.0f/s)", ok, ok / d }') |" \
			"$(awk -v ok="${goodput[$row]}" -v c="$capacity" -v d="$OVERLOAD_DURATION" 'BEGIN { printf "%.0f%%", 100 * ok / (c * d) }') |" \
			"$(ms "$(field p50 "$loaded")") | $(ms "${p99[$row]}") | $(awk -v a="${p99[$row]}" -v b="$(field p50 "$unloaded")" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }') |" \
			"$(awk -v s="$shed" -v u="$unavailable" -v n="$sent" 'BEGIN { printf "%d (%.1f%%)%s", s + u, 100 * (s + u) / n, (u > 0) ? sprintf(", %d without Retry-After", u) : "" }') |" \
			"$(field gaveup "$loaded") | $(($(field other "$loaded") + $(field errors "$loaded"))) | ${limits[$row]} | $(field busy "$loaded") / $(field others "$loaded") |"
	done
	echo
	echo "| ratio to (b) | goodput | p99 |"
	echo "|---|---|---|"
	for row in "${rows[@]}"; do
		[ "$row" = sclb ] && continue
		echo "| $row / sclb | $(ratio "${goodput[$row]}" "${goodput[sclb]}") | $(ratio "${p99[$row]}" "${p99[sclb]}") |"
	done
	if [ -n "$partitioned" ]; then
		echo
		echo "## Overload with partitions: $OVERLOAD_PARTITIONED, critical 0.8 and batch 0.2 by X-Class, max-wait $OVERLOAD_MAX_WAIT; the same phases, each class half the requests"
		echo
		echo "| class | 503 at ${OVERLOAD_WARMUP_PERCENT}% | sent at ${OVERLOAD_PERCENT}% | answered 200 within $OVERLOAD_PATIENCE_MS ms | % of the class's | shed (503) | gave up | p50 ms | p99 ms |"
		echo "|---|---|---|---|---|---|---|---|---|"
		local class line warm
		for class in critical batch; do
			line=$(phase overload "$partitioned" | grep " class=$class ")
			warm=$(phase warmup "$partitioned" | grep " class=$class ")
			echo "| $class | $(($(field shed "$warm") + $(field unavailable "$warm"))) | $(field sent "$line") | $(field ok "$line") |" \
				"$(awk -v ok="$(field ok "$line")" -v n="$(field sent "$line")" 'BEGIN { printf "%.1f%%", (n > 0) ? 100 * ok / n : 0 }') |" \
				"$(($(field shed "$line") + $(field unavailable "$line"))) | $(field gaveup "$line") | $(ms "$(field p50 "$line")") | $(ms "$(field p99 "$line")") |"
		done
	fi
	overload_targets
}

verdict() { # verdict CONDITION VALUE... -> "met" or "missed": an awk condition on the values, v[1], v[2]...
	local condition=$1
	shift
	awk -v values="$*" "BEGIN { split(values, v, \" \"); exit !($condition) }" && echo met || echo missed
}

# Prints the targets the overload scenario is judged by, each with its verdict in this
# run (docs/benchmarks.md, "Targets moved from the functional tests"): OverloadIT asserted
# them until they moved here. Reads overload()'s locals.
overload_targets() {
	local row value
	echo
	echo "| target (OverloadIT's until moved here) | row | value | verdict |"
	echo "|---|---|---|---|"
	for row in gradient2 gradient2-initial; do
		[ -n "${goodput[$row]:-}" ] || continue
		value=$(awk -v ok="${goodput[$row]}" -v c="$capacity" -v d="$OVERLOAD_DURATION" 'BEGIN { printf "%.1f", 100 * ok / (c * d) }')
		echo "| goodput at ${OVERLOAD_PERCENT}% >= 90% of capacity | $row | $value% | $(verdict 'v[1] >= 90' "$value") |"
		value=$(awk -v a="${p99[$row]}" -v b="${p50unloaded[$row]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
		echo "| p99 at ${OVERLOAD_PERCENT}% <= 3x the unloaded p50 | $row | ${value}x | $(verdict 'v[1] > 0 && v[1] <= 3' "$value") |"
		if [ -n "${p99[none]:-}" ]; then
			value=$(awk -v a="${p99[$row]}" -v b="${p99[none]}" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
			echo "| p99 at ${OVERLOAD_PERCENT}% < 1/4 of the p99 without a limit (none) | $row | ${value}x | $(verdict 'v[1] < 0.25' "$value") |"
		fi
	done
	for row in $OVERLOAD_LIMITS gradient2-initial; do
		[ "$row" = none ] && continue
		[ -n "${shedwarm[$row]:-}" ] || continue
		echo "| nothing shed at ${OVERLOAD_WARMUP_PERCENT}% of capacity | $row | ${shedwarm[$row]} | $(verdict 'v[1] == 0' "${shedwarm[$row]}") |"
	done
	if [ -n "$partitioned" ]; then
		local critical batch
		critical=$(phase overload "$partitioned" | grep " class=critical ")
		batch=$(phase overload "$partitioned" | grep " class=batch ")
		value=$(awk -v ok="$(field ok "$critical")" -v n="$(field sent "$critical")" 'BEGIN { printf "%.1f", (n > 0) ? 100 * ok / n : 0 }')
		echo "| critical answered 200 within $OVERLOAD_PATIENCE_MS ms >= 99% of critical | partitioned | $value% | $(verdict 'v[1] >= 99' "$value") |"
		value="$(($(field shed "$critical") + $(field unavailable "$critical"))) $(($(field shed "$batch") + $(field unavailable "$batch")))"
		echo "| critical shed < 1/20 of batch shed | partitioned | ${value% *} against ${value#* } | $(verdict 'v[1] * 20 < v[2]' "$value") |"
	fi
}

# --- locality -----------------------------------------------------------------------

# Writes the locality scenario's routes and services: /locality/VARIANT/ to service
# loc-VARIANT on the six worker backends, LOCAL_PORTS with instance metadata zone: zone-a
# (the gateway's spring.cloud.loadbalancer.zone) and REMOTE_PORTS with zone: zone-b.
# VARIANT: warm (the gateways' JIT warm-up), sclb-strict (Spring Cloud LoadBalancer's
# zone preference, configured for that client only: spring.cloud.loadbalancer.clients.
# <service>.configurations, which its ZonePreferenceConfigurationCondition reads before
# the default spring.cloud.loadbalancer.configurations), sclb (its round-robin, zone-
# agnostic), and for each of LOCALITY_ALGORITHMS: ALGORITHM-off (no locality),
# ALGORITHM-on (locality, load-aware false) and ALGORITHM-aware (locality, load-aware
# true). The plain gateway ignores the gateway.lb keys; the starter balances every
# service itself, so the sclb variants are measured on the plain gateway only.
write_locality_config() {
	local file=$WORK/locality.properties route=0 variant service algorithm i port zone
	local variants=(warm sclb-strict sclb)
	for algorithm in $LOCALITY_ALGORITHMS; do
		variants+=("$algorithm-off" "$algorithm-on" "$algorithm-aware")
	done
	{
		echo "spring.cloud.loadbalancer.zone=zone-a"
		for variant in "${variants[@]}"; do
			service=loc-$variant
			i=0
			for port in "${LOCAL_PORTS[@]}" "${REMOTE_PORTS[@]}"; do
				zone=zone-b
				if [ "$i" -lt "${#LOCAL_PORTS[@]}" ]; then
					zone=zone-a
				fi
				echo "spring.cloud.discovery.client.simple.instances.$service[$i].uri=http://127.0.0.1:$port"
				echo "spring.cloud.discovery.client.simple.instances.$service[$i].metadata.zone=$zone"
				i=$((i + 1))
			done
			echo "spring.cloud.gateway.server.webflux.routes[$route].id=$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].uri=lb://$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].predicates[0]=Path=/locality/$variant/**"
			route=$((route + 1))
			case $variant in
				sclb-strict) echo "spring.cloud.loadbalancer.clients.$service.configurations=zone-preference" ;;
				sclb) ;;
				warm)
					echo "gateway.lb.services.$service.algorithm=round-robin"
					echo "gateway.lb.services.$service.locality.enabled=true"
					;;
				*-off) echo "gateway.lb.services.$service.algorithm=${variant%-off}" ;;
				*-on)
					echo "gateway.lb.services.$service.algorithm=${variant%-on}"
					echo "gateway.lb.services.$service.locality.enabled=true"
					echo "gateway.lb.services.$service.locality.load-aware=false"
					;;
				*-aware)
					echo "gateway.lb.services.$service.algorithm=${variant%-aware}"
					echo "gateway.lb.services.$service.locality.enabled=true"
					echo "gateway.lb.services.$service.locality.load-aware=true"
					;;
			esac
		done
	} >"$file"
	EXTRA_CONFIG=$file
}

# others_percent "M0" "M1" OURS -> the CPU, in % of the machine, that processes other
# than this run's took between two machine_ticks readings, OURS being this run's ticks.
others_percent() {
	awk -v mb="${2% *}" -v mb0="${1% *}" -v mt="${2#* }" -v mt0="${1#* }" -v ours="$3" \
		'BEGIN { o = (mt > mt0) ? 100 * ((mb - mb0) - ours) / (mt - mt0) : 0; printf "%.0f", (o > 0) ? o : 0 }'
}

# locality_run URL CONNECTIONS -> "RESULT ... backends=PORT:N,... busy=N others=N": one
# ClosedLoopClient run (LOCALITY_WARMUP s unrecorded, then LOCALITY_DURATION s
# recorded) once the worker backends have nothing queued; busy and others as in
# open_loop_run.
locality_run() {
	local url=$1 connections=$2
	backends_idle "${LOCAL_PORTS[0]}"
	wait_quiet
	local out=$WORK/locality.out m0 m1 ours0 ours1 w0 w1
	ours0=$(cpu_ticks "${OUR_PIDS[@]}")
	m0=$(machine_ticks)
	children_ticks
	w0=$CHILDREN_TICKS
	"${LOADGEN[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.ClosedLoopClient \
		"$url" "$connections" "$LOCALITY_WARMUP" "$LOCALITY_DURATION" >"$out"
	children_ticks
	w1=$CHILDREN_TICKS
	m1=$(machine_ticks)
	ours1=$(cpu_ticks "${OUR_PIDS[@]}")
	echo "$(grep '^RESULT' "$out") busy=$BUSY others=$(others_percent "$m0" "$m1" $((ours1 - ours0 + w1 - w0)))"
}

local_share() { # local_share "RESULT ... backends=..." -> % of the recorded answers that came from LOCAL_PORTS
	sed -n 's/.* backends=\([^ ]*\).*/\1/p' <<<"$1" | tr ',' '\n' |
		awk -F: -v ports="${LOCAL_PORTS[*]}" 'BEGIN { n = split(ports, p, " "); for (i = 1; i <= n; i++) here[p[i]] = 1 }
			NF == 2 { t += $2; if ($1 in here) s += $2 } END { if (t > 0) printf "%.1f%%", 100 * s / t; else print "-" }'
}

locality() {
	local specs=() port
	for port in "${LOCAL_PORTS[@]}"; do
		specs+=("$port:$LOCALITY_WORKERS:$LOCALITY_SERVICE_MS")
	done
	for port in "${REMOTE_PORTS[@]}"; do
		specs+=("$port:$LOCALITY_WORKERS:$LOCALITY_SERVICE_MS:$LOCALITY_HOP_MS")
	done
	log "worker backends: ${specs[*]} (port:workers:milliseconds[:hop]), the first three in zone-a"
	start locality-backend "${SERVER[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.WorkerBackend "${specs[@]}"
	local backend_pid=$LAST_PID
	log "gateways: (b) plain Spring Cloud Gateway on $PLAIN_PORT, (c) with gateway-lb on $STARTER_PORT"
	start_gateway plain "$PLAIN_PORT" --gateway.lb.enabled=false
	PLAIN_PID=$LAST_PID
	start_gateway starter "$STARTER_PORT"
	STARTER_PID=$LAST_PID
	OUR_PIDS=("$backend_pid" "$PLAIN_PID" "$STARTER_PID")
	await "http://127.0.0.1:${LOCAL_PORTS[0]}/__stats" locality-backend
	await "http://127.0.0.1:$PLAIN_PORT/locality/sclb/" plain
	await "http://127.0.0.1:$STARTER_PORT/locality/warm/" starter
	local line
	log "JIT warm-up: ${LOCALITY_JIT_WARMUP}s of 16 clients on each gateway"
	line=$(LOCALITY_WARMUP=0 LOCALITY_DURATION=$LOCALITY_JIT_WARMUP locality_run "http://127.0.0.1:$PLAIN_PORT/locality/sclb/" 16)
	log "warm-up (b): $line"
	line=$(LOCALITY_WARMUP=0 LOCALITY_DURATION=$LOCALITY_JIT_WARMUP locality_run "http://127.0.0.1:$STARTER_PORT/locality/warm/" 16)
	log "warm-up (c): $line"
	local connections
	for connections in $LOCALITY_CONNECTIONS; do
		locality_table "$connections"
	done
}

locality_table() { # locality_table CONNECTIONS
	local connections=$1 variant algorithm
	local variants=(sclb-strict sclb)
	for algorithm in $LOCALITY_ALGORITHMS; do
		variants+=("$algorithm-off" "$algorithm-on" "$algorithm-aware")
	done
	local -A lines=()
	for variant in "${variants[@]}"; do
		local url=http://127.0.0.1:$STARTER_PORT/locality/$variant/
		case $variant in
			sclb*) url=http://127.0.0.1:$PLAIN_PORT/locality/$variant/ ;;
		esac
		lines[$variant]=$(locality_run "$url" "$connections")
		log "locality c=$connections $variant: ${lines[$variant]}"
	done
	local capacity=$((${#LOCAL_PORTS[@]} * LOCALITY_WORKERS * 1000 / LOCALITY_SERVICE_MS))
	echo
	echo "## Localities: $connections clients (ClosedLoopClient), ${LOCALITY_DURATION}s per row after ${LOCALITY_WARMUP}s on the same route"
	echo
	echo "Six worker backends of $LOCALITY_WORKERS workers x $LOCALITY_SERVICE_MS ms: three in zone-a, the gateway's ($capacity requests/s, $((${#LOCAL_PORTS[@]} * LOCALITY_WORKERS)) at a time), three in zone-b whose answers leave ${LOCALITY_HOP_MS} ms later. p99 ratios against the zone-agnostic rows of this table: (b') and gateway-lb's same algorithm with locality off."
	echo
	echo "| gateway, balancer | locality | requests/s | p50 ms | p99 ms | local share | p99 / (b') | p99 / same algorithm, off | errors | machine busy before / others during, % |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	local line name locality off p99
	for variant in "${variants[@]}"; do
		line=${lines[$variant]}
		p99=$(field p99 "$line")
		off=-
		case $variant in
			sclb-strict) name="(b) plain, SCLB round-robin"; locality="zone-preference (strict)" ;;
			sclb) name="(b') plain, SCLB round-robin"; locality="none (zone-agnostic)" ;;
			*-off) name="(c) gateway-lb ${variant%-off}"; locality="off" ;;
			*-on) name="(c) gateway-lb ${variant%-on}"; locality="on, load-aware false"
				off=$(ratio "$p99" "$(field p99 "${lines[${variant%-on}-off]}")") ;;
			*-aware) name="(c) gateway-lb ${variant%-aware}"; locality="on, load-aware true"
				off=$(ratio "$p99" "$(field p99 "${lines[${variant%-aware}-off]}")") ;;
		esac
		echo "| $name | $locality | $(field rps "$line") | $(ms "$(field p50 "$line")") | $(ms "$p99") | $(local_share "$line") |" \
			"$(ratio "$p99" "$(field p99 "${lines[sclb]}")") | $off | $(($(field errors "$line") + $(field non2xx "$line"))) |" \
			"$(field busy "$line") / $(field others "$line") |"
	done
	# LocalityIT's until it moved here: where zone-a queues (more clients than it serves at
	# once), load-aware spill at most 0.75x the p99 of the same algorithm's strict
	# preference (load-aware false).
	local workers=$((${#LOCAL_PORTS[@]} * LOCALITY_WORKERS)) value
	if [ "$connections" -gt "$workers" ]; then
		echo
		echo "| target (LocalityIT's until moved here) | algorithm | p99 load-aware / p99 load-aware false | verdict |"
		echo "|---|---|---|---|"
		for algorithm in $LOCALITY_ALGORITHMS; do
			value=$(ratio "$(field p99 "${lines[$algorithm-aware]}")" "$(field p99 "${lines[$algorithm-on]}")")
			echo "| $connections clients, more than zone-a's $workers at once: p99 <= 0.75x strict preference's | $algorithm | $value | $(verdict 'v[1] <= 0.75' "$value") |"
		done
	fi
}

# --- mirror -------------------------------------------------------------------------

# Writes the mirror scenario's routes and services: /mirror/VARIANT/ to service
# mirror-VARIANT on the fast backend's three ports, round-robin; VARIANT off (no
# mirror), status and body (mirror.target shadow-VARIANT, mirror.percent MIRROR_PERCENT,
# mirror.compare VARIANT). shadow-status and shadow-body are the shadow nginx's three
# ports, which answer what the fast backend answers.
write_mirror_config() {
	local file=$WORK/mirror.properties route=0 variant service i
	{
		for variant in off status body; do
			service=mirror-$variant
			for i in 0 1 2; do
				echo "spring.cloud.discovery.client.simple.instances.$service[$i].uri=http://127.0.0.1:${BACKEND_PORTS[$i]}"
			done
			echo "spring.cloud.gateway.server.webflux.routes[$route].id=$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].uri=lb://$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].predicates[0]=Path=/mirror/$variant/**"
			route=$((route + 1))
			echo "gateway.lb.services.$service.algorithm=round-robin"
			if [ "$variant" != off ]; then
				echo "gateway.lb.services.$service.mirror.target=shadow-$variant"
				echo "gateway.lb.services.$service.mirror.percent=$MIRROR_PERCENT"
				echo "gateway.lb.services.$service.mirror.compare=$variant"
				for i in 0 1 2; do
					echo "spring.cloud.discovery.client.simple.instances.shadow-$variant[$i].uri=http://127.0.0.1:${SHADOW_PORTS[$i]}"
				done
				echo "gateway.lb.services.shadow-$variant.algorithm=round-robin"
			fi
		done
	} >"$file"
	EXTRA_CONFIG=$file
}

mirror_counts() { # mirror_counts SERVICE -> "match mismatch error dropped" from the actuator, or "0 0 0 0"
	local body value counts=()
	body=$(curl -sf "http://127.0.0.1:$STARTER_PORT/actuator/gatewaylb/$1") || body=
	for key in match mismatch error dropped; do
		value=$(grep -o "\"mirror\":{[^}]*" <<<"$body" | grep -o "\"$key\":[0-9]*" | head -1 | cut -d: -f2) || true
		counts+=("${value:-0}")
	done
	echo "${counts[*]}"
}

# mirror_rate_run URL RATE PID -> the recorded phase's RESULT line of OpenLoopClient
# (2 s unrecorded, then MIRROR_RATE_DURATION s at RATE requests/s), with "busy=N
# others=N cpu=MICROS": the gateway's CPU over both phases per request sent.
mirror_rate_run() {
	local url=$1 rate=$2 pid=$3
	wait_quiet
	local out=$WORK/mirror-rate.out m0 m1 ours0 ours1 w0 w1 before after
	before=$(cpu_ticks "$pid")
	ours0=$(cpu_ticks "${OUR_PIDS[@]}")
	m0=$(machine_ticks)
	children_ticks
	w0=$CHILDREN_TICKS
	java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.OpenLoopClient "$url" 1000 \
		"client:$rate:2" "fixed:$rate:$MIRROR_RATE_DURATION" >"$out"
	children_ticks
	w1=$CHILDREN_TICKS
	m1=$(machine_ticks)
	ours1=$(cpu_ticks "${OUR_PIDS[@]}")
	after=$(cpu_ticks "$pid")
	local cpu
	cpu=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n=$((rate * (2 + MIRROR_RATE_DURATION))) \
		'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
	echo "$(grep ' phase=fixed ' "$out") busy=$BUSY others=$(others_percent "$m0" "$m1" $((ours1 - ours0 + w1 - w0))) cpu=$cpu"
}

mirror() {
	# unpinned_run's connections
	local UNPINNED_CONNECTIONS=$MIRROR_CONNECTIONS
	start_fast_backend
	start_shadow_backend
	local shadow_pid=$LAST_PID
	log "gateway: (c) with gateway-lb on $STARTER_PORT"
	start_gateway starter "$STARTER_PORT"
	local pid=$LAST_PID
	await "http://127.0.0.1:${BACKEND_PORTS[0]}/" backend
	await "http://127.0.0.1:${SHADOW_PORTS[0]}/" shadow
	await "http://127.0.0.1:$STARTER_PORT/mirror/off/" starter
	OUR_PIDS=("$BACKEND_PID" $(pgrep -P "$BACKEND_PID" || true) "$shadow_pid" $(pgrep -P "$shadow_pid" || true) "$pid")
	local variants=(off status body) variant
	local -A url=()
	local line round
	for variant in "${variants[@]}"; do
		url[$variant]=http://127.0.0.1:$STARTER_PORT/mirror/$variant/
	done
	declare -gA WARMED=()
	# body first: it runs all that the others run, and more.
	warm_up_jit body "${url[body]}" "$pid"
	for variant in status off; do
		line=$(unpinned_run "${url[$variant]}" "$((2 * JIT_STEP))" "$pid")
		log "warm-up $variant $((2 * JIT_STEP))s: $(field rps "$line") requests/s, compiler $(field jit "$line")% of a core"
	done
	local -A results=() before=() after=()
	for variant in status body; do
		before[$variant]=$(mirror_counts "mirror-$variant")
	done
	for round in $(seq 1 "$MIRROR_ROUNDS"); do
		for variant in "${variants[@]}"; do
			line=$(unpinned_run "${url[$variant]}" "$MIRROR_DURATION" "$pid")
			log "round $round $variant: $line"
			results[$variant]+="$line"$'\n'
		done
	done
	for variant in status body; do
		after[$variant]=$(mirror_counts "mirror-$variant")
	done
	local -A fixed=()
	local rate=0
	if [ "$MIRROR_RATE_PERCENT" -gt 0 ]; then
		rate=$(field rps "${results[off]}" | median | awk -v p="$MIRROR_RATE_PERCENT" '{ printf "%d", $1 * p / 100 }')
		for round in $(seq 1 "$MIRROR_RATE_ROUNDS"); do
			for variant in "${variants[@]}"; do
				line=$(mirror_rate_run "${url[$variant]}" "$rate" "$pid")
				log "fixed rate round $round $variant: $line"
				fixed[$variant]+="$line"$'\n'
			done
		done
	fi

	echo
	echo "## Mirroring at ${MIRROR_PERCENT}%: wrk -t1 -c$MIRROR_CONNECTIONS, ${MIRROR_DURATION}s x $MIRROR_ROUNDS interleaved rounds (medians), nothing pinned, one gateway-lb JVM"
	echo
	echo "Primary: nginx answering \"ok\" on three ports; shadow: another nginx answering the same on three more. The gateway was warmed on the body row until its compiler threads went quiet (${WARMED[body]} s), then $((2 * JIT_STEP)) s on each other row."
	echo
	echo "| mirror | requests/s | p50 ms | p99 ms | CPU us/request | requests per CPU-second | errors | mirrored: compared, of them mismatched / errors / dropped | rounds: requests/s, us/request (busy before %, others during %) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	local lines errors all mirrored requests
	for variant in "${variants[@]}"; do
		lines=${results[$variant]}
		errors=$(paste <(field errors "$lines") <(field non2xx "$lines") | awk '{ s += $1 + $2 } END { print s + 0 }')
		all=$(paste -d' ' <(field rps "$lines") <(field cpu "$lines") <(field busy "$lines") <(field others "$lines") |
			awk '{ printf "%s%s, %s (%s, %s)", (NR > 1 ? "; " : ""), $1, $2, $3, $4 }')
		mirrored=-
		if [ "$variant" != off ]; then
			requests=$(field requests "$lines" | awk '{ s += $1 } END { print s + 0 }')
			mirrored=$(paste -d' ' <(tr ' ' '\n' <<<"${before[$variant]}") <(tr ' ' '\n' <<<"${after[$variant]}") |
				awk -v n="$requests" '{ d[NR] = $2 - $1 } END { c = d[1] + d[2] + d[3]
					printf "%d (%.1f%% of %d requests), %d / %d / %d", c, (n > 0) ? 100 * c / n : 0, n, d[2], d[3], d[4] }')
		fi
		echo "| ${variant} | $(field rps "$lines" | median) | $(ms "$(field p50 "$lines" | median)") | $(ms "$(field p99 "$lines" | median)") |" \
			"$(field cpu "$lines" | median) | $(field cpu "$lines" | median | awk '{ printf "%.0f", ($1 > 0) ? 1e6 / $1 : 0 }') | $errors | $mirrored | $all |"
	done
	echo
	echo "| ratio to off (median of the rounds' pairs, min to max) | requests/s | requests per CPU-second | p99 |"
	echo "|---|---|---|---|"
	for variant in status body; do
		echo "| $variant / off | $(pair_ratios rps "${results[$variant]}" "${results[off]}") | $(pair_ratios cpu "${results[off]}" "${results[$variant]}") | $(pair_ratios p99 "${results[$variant]}" "${results[off]}") |"
	done
	if [ "$MIRROR_RATE_PERCENT" -gt 0 ]; then
		echo
		echo "## Mirroring at ${MIRROR_PERCENT}%, a fixed rate: $rate requests/s (${MIRROR_RATE_PERCENT}% of off's requests/s above), OpenLoopClient, ${MIRROR_RATE_DURATION}s x $MIRROR_RATE_ROUNDS interleaved rounds after 2s unrecorded (medians)"
		echo
		echo "| mirror | answered (200) | p50 ms | p90 ms | p99 ms | CPU us/request | other answers, errors, given up | rounds: p99 ms (busy before %, others during %) |"
		echo "|---|---|---|---|---|---|---|---|"
		for variant in "${variants[@]}"; do
			lines=${fixed[$variant]}
			errors=$(paste <(field other "$lines") <(field errors "$lines") <(field gaveup "$lines") <(field shed "$lines") <(field unavailable "$lines") |
				awk '{ s += $1 + $2 + $3 + $4 + $5 } END { print s + 0 }')
			all=$(paste -d' ' <(field p99 "$lines") <(field busy "$lines") <(field others "$lines") |
				awk '{ printf "%s%.2f (%s, %s)", (NR > 1 ? "; " : ""), $1 / 1000, $2, $3 }')
			echo "| $variant | $(field ok "$lines" | median) | $(ms "$(field p50 "$lines" | median)") | $(ms "$(field p90 "$lines" | median)") |" \
				"$(ms "$(field p99 "$lines" | median)") | $(field cpu "$lines" | median) | $errors | $all |"
		done
		echo
		echo "| ratio to off, fixed rate (median of the rounds' pairs, min to max) | p50 | p99 | requests per CPU-second |"
		echo "|---|---|---|---|"
		for variant in status body; do
			echo "| $variant / off | $(pair_ratios p50 "${fixed[$variant]}" "${fixed[off]}") | $(pair_ratios p99 "${fixed[$variant]}" "${fixed[off]}") | $(pair_ratios cpu "${fixed[off]}" "${fixed[$variant]}") |"
		done
		# MirrorIT's until it moved here: the primary's clients see at most 1.1x the p99
		# of no mirror, where the gateway has room (at saturation a mirrored request's
		# extra CPU is extra queueing for every request: docs/benchmarks.md).
		local value
		echo
		echo "| target (MirrorIT's until moved here) | mirror | p99 / off's, fixed rate, median of the rounds | verdict |"
		echo "|---|---|---|---|"
		for variant in status body; do
			value=$(pair_ratios p99 "${fixed[$variant]}" "${fixed[off]}" | cut -d' ' -f1)
			echo "| p99 at ${MIRROR_PERCENT}% mirrored <= 1.1x no mirror's | $variant | $value | $(verdict 'v[1] != "-" && v[1] <= 1.1' "$value") |"
		done
	fi
}

# --- soak ---------------------------------------------------------------------------

# Writes the soak scenario's route and services: /soak/ to service soak on the fast
# backend's three ports (zone-a, zone-a, zone-b; the gateway in zone-a) with every feature
# on, and its shadow on the shadow nginx's.
write_soak_config() {
	local file=$WORK/soak.properties i zones=(zone-a zone-a zone-b)
	{
		for i in 0 1 2; do
			echo "spring.cloud.discovery.client.simple.instances.soak[$i].uri=http://127.0.0.1:${BACKEND_PORTS[$i]}"
			echo "spring.cloud.discovery.client.simple.instances.soak[$i].metadata.zone=${zones[$i]}"
			echo "spring.cloud.discovery.client.simple.instances.soak-shadow[$i].uri=http://127.0.0.1:${SHADOW_PORTS[$i]}"
		done
		echo "spring.cloud.loadbalancer.zone=zone-a"
		echo "spring.cloud.gateway.server.webflux.routes[0].id=soak"
		echo "spring.cloud.gateway.server.webflux.routes[0].uri=lb://soak"
		echo "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/soak/**"
		echo "gateway.lb.services.soak.algorithm=peak-ewma"
		echo "gateway.lb.services.soak.mirror.target=soak-shadow"
		echo "gateway.lb.services.soak.mirror.percent=100"
		echo "gateway.lb.services.soak.mirror.compare=body"
		echo "gateway.lb.services.soak.hedge.max-extra-load=0.1"
		echo "gateway.lb.services.soak.affinity.cookie=GWLB_EP"
		echo "gateway.lb.services.soak.affinity.secret=soak-secret-of-thirty-two-bytes-or-more"
		echo "gateway.lb.services.soak.concurrency.limit=vegas"
		echo "gateway.lb.services.soak.concurrency.max-wait=250ms"
		echo "gateway.lb.services.soak.concurrency.partition-by=header:X-Priority"
		echo "gateway.lb.services.soak.concurrency.partitions.critical=0.8"
		echo "gateway.lb.services.soak.concurrency.partitions.batch=0.2"
		echo "gateway.lb.trusted-proxies=127.0.0.1/32,::1/128"
		echo "gateway.lb.services.soak.concurrency.max-wait-per-client=1"
		echo "gateway.lb.services.soak.locality.enabled=true"
		echo "gateway.lb.services.soak.retry.attempts=1"
		echo "management.endpoints.web.exposure.include=gatewaylb,metrics,health"
	} >"$file"
	EXTRA_CONFIG=$file
}

live_heap() { # live_heap PID -> bytes of live objects, after the full collection the histogram runs first
	jcmd "$1" GC.class_histogram | awk '$1 == "Total" { print $3 }'
}

active_observations() { # active_observations -> http.client.requests observations still running
	local body
	body=$(curl -sf "http://127.0.0.1:$STARTER_PORT/actuator/metrics/http.client.requests.active") || body=
	grep -o '"statistic":"ACTIVE_TASKS","value":[0-9.]*' <<<"$body" | head -1 | cut -d: -f3 | cut -d. -f1 | sed 's/^$/0/'
}

in_flight() { # in_flight -> the soak service's requests in flight, every endpoint's, from the actuator
	curl -sf "http://127.0.0.1:$STARTER_PORT/actuator/gatewaylb/soak" | grep -o '"inFlight":[0-9]*' |
		cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'
}

soak_requests() { # soak_requests COUNT -> sends at least COUNT requests, SOAK_STEP-second wrk runs
	local count=$1 sent=0 line
	while [ "$sent" -lt "$count" ]; do
		line=$(wrk_run "http://127.0.0.1:$STARTER_PORT/soak/" "$SOAK_CONNECTIONS" "$SOAK_STEP")
		sent=$((sent + $(field requests "$line")))
		log "soak: $sent of $count requests ($(field rps "$line") requests/s, errors $(field errors "$line"), non-2xx $(field non2xx "$line"))"
	done
	SOAK_SENT=$sent
}

soak_settle() { # waits until the soak service has no request in flight (mirrors included)
	for _ in $(seq 1 60); do
		if [ "$(in_flight)" = 0 ]; then
			return 0
		fi
		sleep 0.5
	done
	log "soak: requests still in flight after 30 s"
}

soak() {
	start_fast_backend
	start_shadow_backend
	log "gateway: (c) with gateway-lb on $STARTER_PORT, every feature on"
	start_gateway starter "$STARTER_PORT"
	local pid=$LAST_PID
	await "http://127.0.0.1:${BACKEND_PORTS[0]}/" backend
	await "http://127.0.0.1:${SHADOW_PORTS[0]}/" shadow
	await "http://127.0.0.1:$STARTER_PORT/soak/" starter
	soak_requests "$SOAK_WARMUP"
	soak_settle
	local heap0 active0 heap1 active1
	heap0=$(live_heap "$pid")
	active0=$(active_observations)
	log "soak: after the warm-up, live heap $heap0 bytes, active observations $active0"
	soak_requests "$SOAK_REQUESTS"
	local sent=$SOAK_SENT
	soak_settle
	heap1=$(live_heap "$pid")
	active1=$(active_observations)
	log "soak: after $sent more requests, live heap $heap1 bytes, active observations $active1"
	echo
	echo "## Soak: every feature on (mirror 100% compare body, hedging 0.1, affinity, vegas with max-wait and partitions, localities, retries), wrk -t1 -c$SOAK_CONNECTIONS, nothing pinned"
	echo
	echo "| | requests | live heap after a full collection, bytes | active http.client.requests observations |"
	echo "|---|---|---|---|"
	echo "| after the warm-up | $SOAK_WARMUP | $heap0 | $active0 |"
	echo "| after the soak | $sent more | $heap1 | $active1 |"
	echo
	awk -v a="$heap0" -v b="$heap1" -v n="$sent" -v max="$SOAK_MAX_GROWTH_KB" 'BEGIN {
		d = b - a
		printf "Growth: %d bytes (%.3f bytes a request); target at most %d KB: %s\n", d, d / n, max, (d <= max * 1024) ? "met" : "missed"
	}'
}

# The load-reports scenario (issue 42): four worker backends of unequal capacity, two of
# LOAD_REPORTS_SMALL workers and two of LOAD_REPORTS_LARGE, LOAD_REPORTS_SERVICE_MS a
# request, each reporting its busy workers as application_utilization; one gateway-lb
# with a route per row: round-robin and peak-ewma (which read no report), and
# round-robin and power-of-two-choices weighed by the reports. Each row, one
# OpenLoopClient at LOAD_REPORTS_PERCENT% of the backends' total capacity:
# LOAD_REPORTS_WARMUP s unrecorded, then LOAD_REPORTS_DURATION s recorded. Before the
# rows, each row's service learns at a quarter of that rate for LOAD_REPORTS_LEARN s
# (longer than blackout-period, 10 s): a service starts cold, and round-robin by reports
# runs unweighted through its blackout. At the full rate that queues the small backends
# by thousands (400 requests/s each for 200 they serve), a backlog they work off at 50 a
# second under their weighted share, which is the start-up and not the steady state the
# rows compare; peak-EWMA, too, starts without samples. The round-robin rows come last:
# without reports round-robin queues the small backends by tens of seconds, and weighed
# by reports it can spiral at this load on one core (docs/benchmarks.md); the backlog and
# the gateway's piled connections would be the next row's start.
write_load_reports_config() {
	local file=$WORK/load-reports.properties route=0 row service i
	{
		for row in warm $LOAD_REPORTS_ROWS; do
			service=reports-$row
			for i in 0 1 2 3; do
				echo "spring.cloud.discovery.client.simple.instances.$service[$i].uri=http://127.0.0.1:${REPORTING_PORTS[$i]}"
			done
			echo "spring.cloud.gateway.server.webflux.routes[$route].id=$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].uri=lb://$service"
			echo "spring.cloud.gateway.server.webflux.routes[$route].predicates[0]=Path=/reports/$row/**"
			route=$((route + 1))
			case $row in
				# The warm-up's route must not queue on the small backends: in-flight
				# counts spread it by capacity.
				warm) echo "gateway.lb.services.$service.algorithm=power-of-two-choices" ;;
				round-robin) echo "gateway.lb.services.$service.algorithm=round-robin" ;;
				peak-ewma) echo "gateway.lb.services.$service.algorithm=peak-ewma" ;;
				reports-round-robin)
					echo "gateway.lb.services.$service.algorithm=round-robin"
					echo "gateway.lb.services.$service.load-reports.enabled=true"
					;;
				reports-p2c)
					echo "gateway.lb.services.$service.algorithm=power-of-two-choices"
					echo "gateway.lb.services.$service.load-reports.enabled=true"
					;;
			esac
		done
	} >"$file"
	EXTRA_CONFIG=$file
}

load_reports() {
	local capacity rate specs=()
	capacity=$(((2 * LOAD_REPORTS_SMALL + 2 * LOAD_REPORTS_LARGE) * 1000 / LOAD_REPORTS_SERVICE_MS))
	rate=$((capacity * LOAD_REPORTS_PERCENT / 100))
	specs=("${REPORTING_PORTS[0]}:$LOAD_REPORTS_SMALL:$LOAD_REPORTS_SERVICE_MS" "${REPORTING_PORTS[1]}:$LOAD_REPORTS_SMALL:$LOAD_REPORTS_SERVICE_MS"
		"${REPORTING_PORTS[2]}:$LOAD_REPORTS_LARGE:$LOAD_REPORTS_SERVICE_MS" "${REPORTING_PORTS[3]}:$LOAD_REPORTS_LARGE:$LOAD_REPORTS_SERVICE_MS")
	log "reporting worker backends: ${specs[*]} (port:workers:milliseconds), $capacity requests/s together"
	start reporting-backend "${SERVER[@]}" java -Xms256m -Xmx256m -cp "$BENCH_JAR" dev.gatewaylb.benchmarks.load.WorkerBackend --report-load "${specs[@]}"
	local backend_pid=$LAST_PID
	start_gateway starter "$STARTER_PORT"
	STARTER_PID=$LAST_PID
	OUR_PIDS=("$backend_pid" "$STARTER_PID")
	await "http://127.0.0.1:${REPORTING_PORTS[0]}/__stats" reporting-backend
	await "http://127.0.0.1:$STARTER_PORT/reports/warm/" starter
	local line
	OVERLOAD_PATIENCE_MS=$LOAD_REPORTS_PATIENCE_MS
	# What open_loop_run waits on before each run: these backends, not the overload ones.
	IDLE_PORT=${REPORTING_PORTS[0]}
	# A gateway just started serves a few hundred requests a second; compiled, it serves
	# the full rate. Up gently, then 30 s at the rows' rate, on a route that spreads by
	# in-flight counts (nothing queues on the small backends).
	log "JIT warm-up: 10s at 100, then 20s each at a quarter, a half, three quarters and all of $rate requests/s"
	line=$(open_loop_run "http://127.0.0.1:$STARTER_PORT/reports/warm/" "jit-start:100:10" "jit-quarter:$((rate / 4)):20" \
		"jit-half:$((rate / 2)):20" "jit-three-quarters:$((rate * 3 / 4)):20" "jit:$rate:20")
	log "$(phase jit-half "$line" | cut -d' ' -f2-)"
	log "$(phase jit "$line" | cut -d' ' -f2-)"
	local -A results=() served=()
	local row before after
	for row in $LOAD_REPORTS_ROWS; do
		log "$row: learning, ${LOAD_REPORTS_LEARN}s at $((rate / 4)) requests/s"
		line=$(open_loop_run "http://127.0.0.1:$STARTER_PORT/reports/$row/" "learn:$((rate / 4)):$LOAD_REPORTS_LEARN")
		log "$row: $(phase learn "$line" | cut -d' ' -f2-)"
	done
	for row in $LOAD_REPORTS_ROWS; do
		log "$row: ${LOAD_REPORTS_WARMUP}s unrecorded, then ${LOAD_REPORTS_DURATION}s, at $rate requests/s"
		backends_idle
		before=$(curl -sf "http://127.0.0.1:${REPORTING_PORTS[0]}/__stats" | awk '{ print $2 }' | paste -sd' ')
		results[$row]=$(open_loop_run "http://127.0.0.1:$STARTER_PORT/reports/$row/" "warmup:$rate:$LOAD_REPORTS_WARMUP" \
			"measured:$rate:$LOAD_REPORTS_DURATION")
		after=$(curl -sf "http://127.0.0.1:${REPORTING_PORTS[0]}/__stats" | awk '{ print $2 }' | paste -sd' ')
		served[$row]=$(awk -v a="$after" -v b="$before" 'BEGIN { n = split(a, x, " "); split(b, y, " "); t = 0;
			for (i = 1; i <= n; i++) { d[i] = x[i] - y[i]; t += d[i] } for (i = 1; i <= n; i++) printf "%s%.0f%%", (i > 1) ? "/" : "", (t > 0) ? 100 * d[i] / t : 0 }')
		log "$row: $(phase measured "${results[$row]}" | cut -d' ' -f2-) shares=${served[$row]}"
	done
	echo
	echo "## Load reports: two backends of $LOAD_REPORTS_SMALL workers and two of $LOAD_REPORTS_LARGE, $LOAD_REPORTS_SERVICE_MS ms a request ($capacity requests/s), $rate requests/s (${LOAD_REPORTS_PERCENT}%) open-loop"
	echo
	echo "Each row's service first learned for ${LOAD_REPORTS_LEARN}s at $((rate / 4)) requests/s (past its blackout); then each row: ${LOAD_REPORTS_WARMUP}s unrecorded, then ${LOAD_REPORTS_DURATION}s recorded; users give up after $LOAD_REPORTS_PATIENCE_MS ms. Shares: each backend's part of the requests served in the row (small, small, large, large)."
	echo
	echo "| algorithm | load-reports | sent | 200s | gave up | p50 ms | p90 ms | p99 ms | max ms | shares | machine busy before / others during, % |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	local measured reports algorithm
	for row in $LOAD_REPORTS_ROWS; do
		measured=$(phase measured "${results[$row]}")
		reports=off
		algorithm=$row
		case $row in
			reports-round-robin) reports=on; algorithm=round-robin ;;
			reports-p2c) reports=on; algorithm=power-of-two-choices ;;
		esac
		echo "| $algorithm | $reports | $(field sent "$measured") | $(field ok "$measured") | $(field gaveup "$measured") |" \
			"$(ms "$(field p50 "$measured")") | $(ms "$(field p90 "$measured")") | $(ms "$(field p99 "$measured")") | $(ms "$(field max "$measured")") |" \
			"${served[$row]} | $(field busy "$measured") / $(field others "$measured") |"
	done
	echo
	echo "| ratio of p99 | value | target |"
	echo "|---|---|---|"
	local p99rr p99ewma
	p99rr=$(field p99 "$(phase measured "${results[round-robin]:-}")" 2>/dev/null || echo 0)
	p99ewma=$(field p99 "$(phase measured "${results[peak-ewma]:-}")" 2>/dev/null || echo 0)
	for row in reports-round-robin reports-p2c; do
		[ -n "${results[$row]:-}" ] || continue
		local p99
		p99=$(field p99 "$(phase measured "${results[$row]}")")
		if [ -n "$p99ewma" ] && [ "$p99ewma" != 0 ]; then
			echo "| $row / peak-ewma | $(ratio "$p99" "$p99ewma") | at most 0.7 |"
		fi
		if [ -n "$p99rr" ] && [ "$p99rr" != 0 ]; then
			echo "| $row / round-robin | $(ratio "$p99" "$p99rr") | at most 0.5 |"
		fi
	done
}

main() {
	local what=${1:-all}
	if [ "$UNPINNED" = true ]; then
		case "$what" in
			all | throughput) ;;
			*) echo "usage: $0 --unpinned [throughput]" >&2; exit 2 ;;
		esac
		require java wrk nginx curl taskset
		describe_machine
		unpinned
		return
	fi
	case "$what" in
		all | throughput | slow | tail | overload | locality | mirror | soak | load-reports) ;;
		*) echo "usage: $0 [--unpinned] [all|throughput|slow|tail|overload|locality|mirror|soak|load-reports]" >&2; exit 2 ;;
	esac
	if [ "$what" = load-reports ]; then
		# Unpinned: at 1,600 requests/s the gateway and the four backends took about 90% of
		# the one CPU pinning leaves them, and at that edge any burst queued in the CPU,
		# whichever the algorithm (rows of the same run ranged from 29 ms to 3 s at p99).
		UNPINNED=true
		LOADGEN=()
		SERVER=()
		require java curl
		write_load_reports_config
		describe_machine
		load_reports
		return
	fi
	if [ "$what" = locality ]; then
		require java curl taskset
		write_locality_config
		describe_machine
		locality
		return
	fi
	if [ "$what" = mirror ]; then
		# Unpinned, as a gateway is deployed: the CPU per request is what the target is about.
		UNPINNED=true
		LOADGEN=()
		SERVER=()
		require java wrk nginx curl
		write_mirror_config
		describe_machine
		mirror
		return
	fi
	if [ "$what" = soak ]; then
		UNPINNED=true
		LOADGEN=()
		SERVER=()
		require java jcmd wrk nginx curl
		write_soak_config
		describe_machine
		soak
		return
	fi
	if [ "$what" = overload ]; then
		require java curl taskset
		write_overload_config
		describe_machine
		overload
		return
	fi
	require java wrk nginx curl taskset
	if [ "$what" = tail ]; then
		write_tail_config
	fi
	describe_machine
	start_all
	case "$what" in
		throughput) throughput ;;
		slow) slow ;;
		tail) tail_scenarios ;;
		all) throughput; slow ;;
	esac
}

main "$@"
