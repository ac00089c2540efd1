/**
 * Endpoint snapshots, the balancing algorithms, slow start, the stable hash and in-flight
 * accounting. Pure Java: nothing here knows Spring, Reactor or a socket.
 */
@NullMarked
package dev.gatewaylb.internal.balance;

import org.jspecify.annotations.NullMarked;
