/**
 * Spring Cloud LoadBalancer and Gateway glue: the per-service balancers, the filters that
 * account for in-flight requests, and the runtime settings built from configuration.
 */
@NullMarked
package dev.gatewaylb.gateway;

import org.jspecify.annotations.NullMarked;
