/**
 * Benchmarks of gateway-lb, run outside the test build: shared fixtures and the report
 * that turns a JMH result file into the tables of {@code docs/benchmarks.md}.
 */
@NullMarked
package dev.gatewaylb.benchmarks;

import org.jspecify.annotations.NullMarked;
