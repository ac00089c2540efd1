/**
 * The load-balancing glue: one immutable
 * {@link dev.gatewaylb.gateway.runtime.ServiceRuntime} per service, built when
 * configuration or discovery changes and never on the request path; the discovery poll
 * that feeds it; Spring Cloud LoadBalancer's view of it; active health checks; split
 * counters.
 */
@NullMarked
package dev.gatewaylb.gateway.runtime;

import org.jspecify.annotations.NullMarked;
