/**
 * JMH benchmarks of a Spring-level {@code choose}: Spring Cloud LoadBalancer's own
 * balancers beside gateway-lb's, through the same API.
 */
@NullMarked
package dev.gatewaylb.benchmarks.spring;

import org.jspecify.annotations.NullMarked;
