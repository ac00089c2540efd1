package dev.gatewaylb.internal.exchange;

import java.util.Set;

import dev.gatewaylb.internal.settings.RetrySettings;
import dev.gatewaylb.internal.upstream.Outcome;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RetryGatewayFilterFactory;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * Whether a failed attempt is sent again, to another endpoint while one remains: a pure
 * decision; the retry budget and the deadline are asked after it.
 * <ul>
 * <li>A request that never left the gateway (connect failure) is retried whatever its
 * method.</li>
 * <li>An answer with a status in {@code retry.on-statuses}, and a connection lost after
 * the request started (as a 502), are retried only for a replayable request: an
 * idempotent method (GET, HEAD, OPTIONS, PUT, DELETE) without a body.</li>
 * <li>A timeout is never retried: {@code timeouts.response} bounds the whole wait, so
 * none of it is left.</li>
 * <li>A request whose client stopped sending its body is not retried: the part it sent is
 * gone.</li>
 * <li>A saturated pool is not retried: the other endpoints share the load that saturated
 * it, and a fast 503 is the point of the bounded queue.</li>
 * <li>Nothing is retried after {@code retry.attempts} retries.</li>
 * </ul>
 */
final class RetryPolicy {

	/**
	 * The class names of the filters {@code RetryGatewayFilterFactory} makes (its inner
	 * classes).
	 */
	private static final String RETRY_FILTER_PREFIX = RetryGatewayFilterFactory.class.getName() + "$";

	private static final Set<HttpMethod> IDEMPOTENT = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
			HttpMethod.PUT, HttpMethod.DELETE);

	private RetryPolicy() {
	}

	/**
	 * Decides whether an attempt may be retried.
	 * @param outcome how the attempt ended
	 * @param status the upstream's status, for {@link Outcome.Kind#SERVER_ERROR} and
	 * {@link Outcome.Kind#SUCCESS}; ignored otherwise
	 * @param replayable whether the request may be sent twice
	 * @param retriesSoFar retries this exchange has made
	 * @param settings the service's retry settings
	 * @return whether to retry
	 */
	static boolean shouldRetry(Outcome.Kind outcome, int status, boolean replayable, int retriesSoFar,
			RetrySettings settings) {
		if (retriesSoFar >= settings.attempts()) {
			return false;
		}
		return switch (outcome) {
			case CONNECT_FAILED -> true;
			case CONNECTION_LOST -> replayable && settings.onStatuses().contains(502);
			case SERVER_ERROR, SUCCESS -> replayable && settings.onStatuses().contains(status);
			case TIMEOUT, SATURATED, SHED, BODY_FAILED, CLIENT_GONE, CANCELLED, NOT_UPSTREAM -> false;
			// The body read so far went to the endpoint and is gone: nothing to send
			// again.
			case REQUEST_BODY_IDLE -> false;
		};
	}

	/**
	 * Returns whether a request may be sent again after it reached an upstream: an
	 * idempotent method and no body (no content length above 0, no transfer encoding).
	 * @param request the request
	 * @return whether replayable
	 */
	static boolean replayable(ServerHttpRequest request) {
		HttpHeaders headers = request.getHeaders();
		return IDEMPOTENT.contains(request.getMethod()) && headers.getContentLength() <= 0
				&& !headers.containsHeader(HttpHeaders.TRANSFER_ENCODING);
	}

	/**
	 * Returns whether a route carries Spring Cloud Gateway's {@code Retry} filter
	 * ({@code RetryGatewayFilterFactory}'s, from the YAML shortcut, the {@code args} form
	 * or the Java DSL), which runs the chain again for each of its tries. A look through
	 * the route's few filters by their class names: no allocation, no reflection.
	 * @param route the exchange's route, or {@code null}
	 * @return whether the route retries by itself
	 */
	static boolean routeRetries(@Nullable Route route) {
		if (route == null) {
			return false;
		}
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = (filter instanceof OrderedGatewayFilter ordered) ? ordered.getDelegate() : filter;
			if (delegate.getClass().getName().startsWith(RETRY_FILTER_PREFIX)) {
				return true;
			}
		}
		return false;
	}

}
