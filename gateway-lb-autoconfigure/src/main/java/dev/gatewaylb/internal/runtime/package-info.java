/**
 * The per-service runtime: one immutable
 * {@link dev.gatewaylb.internal.runtime.ServiceRuntime} per service (its core, and each
 * feature's state), built on the control thread when configuration or discovery changes
 * and never on the request path; the registry the request path reads; the factory that
 * carries state from one runtime to the next; the retirement of replaced pools; the one
 * skeleton of a job run for every service; Spring Cloud LoadBalancer's view of it; split
 * counters. Imports no feature: the features are handed in as
 * {@link dev.gatewaylb.internal.runtime.ServiceFeature}s.
 */
@NullMarked
package dev.gatewaylb.internal.runtime;

import org.jspecify.annotations.NullMarked;
