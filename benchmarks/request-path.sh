#!/usr/bin/env bash
# Runs RequestPathBenchmark: what one exchange of one attempt pays gateway-lb on the request
# path (lease, owner, look-up, pick, attempt, the client's callbacks, release), beside Spring
# Cloud LoadBalancer's RoundRobinLoadBalancer.choose() in the same run. The benchmark lives in
# gateway-lb-autoconfigure's test tree, beside the package-private classes it measures.
#
#   benchmarks/request-path.sh                 # every row, with the allocation profiler
#   benchmarks/request-path.sh -p endpoints=3  # more JMH options are passed on
set -euo pipefail
cd "$(dirname "$0")/.."
module=gateway-lb-autoconfigure
mvn -B -q -pl "$module" test-compile dependency:build-classpath \
	-Dmdep.includeScope=test -Dmdep.outputFile="$PWD/$module/target/request-path.classpath"
java -cp "$module/target/test-classes:$module/target/classes:$(cat "$module/target/request-path.classpath")" \
	org.openjdk.jmh.Main 'dev.gatewaylb.internal.exchange.RequestPathBenchmark' -prof gc \
	-rf csv -rff "$module/target/request-path.csv" "$@"
