package dev.gatewaylb.gateway.discovery;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What an {@link InstanceSource} that keeps its own view of discovery (a watch) says of
 * it: the {@code gatewayLb} health indicator shows it, and is DOWN while it names a
 * problem.
 *
 * @param source what the instances come from, such as {@code kubernetes}
 * @param inSync whether the source's view follows discovery now (its watches are up and
 * have listed everything once)
 * @param lastSync when the view last heard from discovery, or {@code null} before its
 * first answer
 * @param problem why the view may be behind for long enough to matter, or {@code null}
 */
public record SourceStatus(String source, boolean inSync, @Nullable Instant lastSync, @Nullable String problem) {

}
