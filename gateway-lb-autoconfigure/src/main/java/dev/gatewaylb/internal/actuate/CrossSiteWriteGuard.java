package dev.gatewaylb.internal.actuate;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Refuses a write to the {@code gatewaylb} endpoint (a drain, a rollout action) that a
 * browser sends on behalf of another site: a page elsewhere must not drain endpoints
 * through an operator's browser, whatever CORS settings or DNS rebinding would let
 * through. A write passes when its {@code Sec-Fetch-Site} is {@code same-origin} or
 * {@code none} (or absent: curl, scripts, older browsers) and its {@code Origin}, when
 * present, names the host the request was sent to ({@code Host}); otherwise it is
 * answered 403 before the endpoint sees it. Reads pass untouched.
 * <p>
 * Ordered first among the web filters, so that no other filter acts on a refused write.
 * Stateless: safe on every event loop at once.
 */
public final class CrossSiteWriteGuard implements WebFilter, Ordered {

	private final Supplier<@Nullable String> endpointPath;

	/**
	 * The endpoint's path once known; racing first writes compute the same value.
	 */
	private volatile @Nullable String knownPath;

	/**
	 * Creates the guard.
	 * @param endpointPath the endpoint's path ({@code /actuator/gatewaylb} by default),
	 * or {@code null} while it is not known
	 */
	public CrossSiteWriteGuard(Supplier<@Nullable String> endpointPath) {
		this.endpointPath = endpointPath;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		if (isRead(request.getMethod()) || !underEndpoint(request.getPath().value())) {
			return chain.filter(exchange);
		}
		String refusal = refusal(request.getHeaders());
		if (refusal == null) {
			return chain.filter(exchange);
		}
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.FORBIDDEN);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		byte[] body = ("{\"status\":403,\"error\":\"" + refusal + "\"}").getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/**
	 * Returns why a write is refused, or {@code null} when it may pass.
	 * @param headers the request's headers
	 * @return the reason, for the answer's body
	 */
	static @Nullable String refusal(HttpHeaders headers) {
		String site = headers.getFirst("Sec-Fetch-Site");
		if (site != null && !site.equalsIgnoreCase("same-origin") && !site.equalsIgnoreCase("none")) {
			return "cross-site write refused (Sec-Fetch-Site)";
		}
		String origin = headers.getFirst(HttpHeaders.ORIGIN);
		if (origin != null && !sameHost(origin, headers.getFirst(HttpHeaders.HOST))) {
			return "cross-origin write refused (Origin does not match Host)";
		}
		return null;
	}

	/**
	 * Returns whether an {@code Origin} names the host and port of a {@code Host} header,
	 * the scheme's default port when none is given. An opaque origin ({@code null}) or a
	 * malformed one never matches.
	 */
	private static boolean sameHost(String origin, @Nullable String host) {
		if (host == null) {
			return false;
		}
		URI uri;
		try {
			uri = URI.create(origin.trim());
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		String scheme = uri.getScheme();
		if (uri.getHost() == null || scheme == null) {
			return false;
		}
		int defaultPort = "https".equalsIgnoreCase(scheme) ? 443 : 80;
		int originPort = (uri.getPort() != -1) ? uri.getPort() : defaultPort;
		URI target;
		try {
			target = URI.create(scheme + "://" + host.trim());
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		if (target.getHost() == null) {
			return false;
		}
		int hostPort = (target.getPort() != -1) ? target.getPort() : defaultPort;
		return uri.getHost().toLowerCase(Locale.ROOT).equals(target.getHost().toLowerCase(Locale.ROOT))
				&& originPort == hostPort;
	}

	private boolean underEndpoint(String path) {
		String endpoint = this.knownPath;
		if (endpoint == null) {
			endpoint = this.endpointPath.get();
			this.knownPath = endpoint;
		}
		return endpoint != null && path.startsWith(endpoint)
				&& (path.length() == endpoint.length() || path.charAt(endpoint.length()) == '/');
	}

	private static boolean isRead(HttpMethod method) {
		return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method) || HttpMethod.OPTIONS.equals(method);
	}

}
