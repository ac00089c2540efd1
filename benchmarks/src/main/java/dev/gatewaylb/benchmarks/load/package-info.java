/**
 * The backend of the load benchmarks in {@code benchmarks/load}.
 */
@NullMarked
package dev.gatewaylb.benchmarks.load;

import org.jspecify.annotations.NullMarked;
