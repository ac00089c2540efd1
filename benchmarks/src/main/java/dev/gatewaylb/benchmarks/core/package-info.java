/**
 * JMH benchmarks of the pure core: the pick of every algorithm, rebuilds, the split pick
 * and the cookie parse.
 */
@NullMarked
package dev.gatewaylb.benchmarks.core;

import org.jspecify.annotations.NullMarked;
