/**
 * Backend-reported load (ORCA's {@code endpoint-load-metrics}), as pure Java: the report
 * a header carries (TEXT, JSON or the binary proto), and the weights gRPC's weighted
 * round-robin (gRFC A58) derives from reports. Imports the JDK only.
 */
@NullMarked
package dev.gatewaylb.internal.loadreports.core;

import org.jspecify.annotations.NullMarked;
