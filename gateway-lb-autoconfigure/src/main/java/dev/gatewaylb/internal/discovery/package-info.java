/**
 * Where each service's endpoints come from: the instance source's default (Spring Cloud
 * LoadBalancer's supplier chain), the poll that reads it on the control thread, the
 * members it reports as a set, and the services routes name.
 */
@NullMarked
package dev.gatewaylb.internal.discovery;

import org.jspecify.annotations.NullMarked;
