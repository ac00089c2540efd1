/**
 * The seam between the runtime and the features: what a feature hands the runtime (its
 * per-service state, built from the previous one and its settings, and its jobs) and what
 * the runtime shows a feature of a service
 * ({@link dev.gatewaylb.internal.feature.ServiceView}). The runtime builds and runs
 * features through these types without naming any of them; a feature depends on these
 * types and on the pure cores, never on the runtime or the settings root.
 * docs/architecture.md has the recipe for adding a feature.
 */
@NullMarked
package dev.gatewaylb.internal.feature;

import org.jspecify.annotations.NullMarked;
