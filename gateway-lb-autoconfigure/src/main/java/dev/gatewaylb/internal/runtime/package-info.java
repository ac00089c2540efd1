/**
 * The per-service runtime: one immutable
 * {@link dev.gatewaylb.internal.runtime.ServiceRuntime} per service, built on the control
 * thread when configuration or discovery changes and never on the request path; the
 * registry the request path reads; the factory that carries state from one runtime to the
 * next; the retirement of replaced pools; the jobs over every runtime (latency ejection,
 * the hedge window, active health probes); Spring Cloud LoadBalancer's view of it; split
 * counters.
 */
@NullMarked
package dev.gatewaylb.internal.runtime;

import org.jspecify.annotations.NullMarked;
