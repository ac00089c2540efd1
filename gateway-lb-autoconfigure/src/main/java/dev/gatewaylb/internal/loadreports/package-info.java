/**
 * Backend-reported load (ORCA): a service's {@code load-reports} settings, the reports
 * read from its answers, the weights the {@code load-report-weights} job hands its
 * balancer, its report section and its meter.
 */
@NullMarked
package dev.gatewaylb.internal.loadreports;

import org.jspecify.annotations.NullMarked;
