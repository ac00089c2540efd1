package dev.gatewaylb.internal.actuate;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import dev.gatewaylb.request.Cidr;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Keeps web pages out of the management context (the actuator's base path on a shared
 * port, everything on a management port of its own):
 * <ul>
 * <li>a request whose {@code Host} is not a loopback name, an IP literal or one of
 * {@code gateway.lb.actuator.allowed-hosts} is answered 403, reads included. A page on
 * {@code x.attacker.example} whose name was re-pointed at the gateway (DNS rebinding)
 * sends {@code Host: x.attacker.example}, and its {@code Origin} matches that
 * {@code Host}, so the write check alone lets it through;</li>
 * <li>a write (any method but GET, HEAD, OPTIONS, TRACE: a drain, a rollout action,
 * {@code busrefresh}, {@code busenv}, {@code refresh}) that a browser sends for another
 * site is answered 403: it passes when its {@code Sec-Fetch-Site} is {@code same-origin}
 * or {@code none} (or absent: curl, scripts, older browsers) and its {@code Origin}, when
 * present, names the {@code Host}.</li>
 * </ul>
 * The path is compared as Spring's handler mappings see it: decoded, without {@code ;}
 * parameters, repeated slashes ignored, so {@code /actuator/gatewaylb;x=1/api} and
 * {@code /actuator/%67atewaylb/api} are inside too.
 * <p>
 * Ordered first among the web filters, so that no other filter acts on a refused request.
 * It runs for every request on a shared port: the check that a request is outside the
 * management context reads the segments Spring already parsed and allocates nothing.
 * Stateless but for the live settings it reads: safe on every event loop at once.
 */
public final class ManagementGuard implements WebFilter, Ordered {

	private static final String LOOPBACK_NAME = "localhost";

	private static final String LOOPBACK_SUFFIX = ".localhost";

	private final Supplier<List<String>> allowedHosts;

	private final boolean ownPort;

	private final Supplier<@Nullable String> basePath;

	/**
	 * The base path's segments once known; racing first requests compute the same value.
	 */
	private volatile @Nullable String @Nullable [] baseSegments;

	/**
	 * Creates the guard.
	 * @param allowedHosts the live {@code gateway.lb.actuator.allowed-hosts}
	 * @param ownPort whether it guards a management server of its own, every request of
	 * which is in the management context
	 * @param basePath the actuator's base path ({@code /actuator} by default), or
	 * {@code null} while it is not known
	 */
	public ManagementGuard(Supplier<List<String>> allowedHosts, boolean ownPort, Supplier<@Nullable String> basePath) {
		this.allowedHosts = allowedHosts;
		this.ownPort = ownPort;
		this.basePath = basePath;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		if (!this.ownPort && !underBasePath(request.getPath().pathWithinApplication())) {
			return chain.filter(exchange);
		}
		HttpHeaders headers = request.getHeaders();
		if (!hostAllowed(headers.getFirst(HttpHeaders.HOST), this.allowedHosts.get())) {
			return refuse(exchange, "host not allowed (gateway.lb.actuator.allowed-hosts)");
		}
		String refusal = isRead(request.getMethod()) ? null : refusal(headers);
		return (refusal != null) ? refuse(exchange, refusal) : chain.filter(exchange);
	}

	private static Mono<Void> refuse(ServerWebExchange exchange, String reason) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.FORBIDDEN);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		byte[] body = ("{\"status\":403,\"error\":\"" + reason + "\"}").getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/**
	 * Returns whether a {@code Host} header names a host the management context answers:
	 * none at all (not a browser), an IP literal, a loopback name, or an allowed name.
	 * @param host the header's value
	 * @param allowed the allowed names, lower case, {@code *.domain} for those under it
	 * @return whether it may be answered
	 */
	static boolean hostAllowed(@Nullable String host, List<String> allowed) {
		if (host == null) {
			return true;
		}
		String value = host.trim();
		if (value.startsWith("[")) {
			int close = value.indexOf(']');
			return close > 0 && isPortOrNothing(value, close + 1) && Cidr.parseAddress(value, 0, close + 1) != null;
		}
		int colon = value.indexOf(':');
		if (colon >= 0 && !isPortOrNothing(value, colon)) {
			return false;
		}
		String name = ((colon >= 0) ? value.substring(0, colon) : value).toLowerCase(Locale.ROOT);
		if (name.endsWith(".")) {
			name = name.substring(0, name.length() - 1);
		}
		if (name.isEmpty()) {
			return false;
		}
		if (Cidr.parseAddress(name) != null || name.equals(LOOPBACK_NAME) || name.endsWith(LOOPBACK_SUFFIX)) {
			return true;
		}
		for (String pattern : allowed) {
			if (pattern.startsWith("*.") ? name.endsWith(pattern.substring(1)) : name.equals(pattern)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether {@code value} from {@code start} is empty or {@code :} and digits.
	 */
	private static boolean isPortOrNothing(String value, int start) {
		if (start == value.length()) {
			return true;
		}
		if (value.charAt(start) != ':' || start + 1 == value.length() || value.length() - start - 1 > 5) {
			return false;
		}
		for (int i = start + 1; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
		}
		return true;
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

	/**
	 * Returns whether a path is the base path or under it, segment by segment on the
	 * decoded values without parameters, empty segments skipped.
	 */
	boolean underBasePath(PathContainer path) {
		@Nullable String[] base = this.baseSegments;
		if (base == null) {
			base = segments(this.basePath.get());
			if (base == null) {
				return false;
			}
			this.baseSegments = base;
		}
		return startsWith(path, base);
	}

	static boolean startsWith(PathContainer path, @Nullable String[] base) {
		int matched = 0;
		for (PathContainer.Element element : path.elements()) {
			if (matched == base.length) {
				return true;
			}
			if (element instanceof PathContainer.PathSegment segment) {
				String value = segment.valueToMatch();
				if (value.isEmpty()) {
					continue;
				}
				if (!value.equals(base[matched])) {
					return false;
				}
				matched++;
			}
		}
		return matched == base.length;
	}

	/**
	 * Splits a base path into its non-empty segments; {@code null} while it is unknown,
	 * none for the root (every path is under it).
	 */
	static @Nullable String @Nullable [] segments(@Nullable String path) {
		if (path == null) {
			return null;
		}
		return PathContainer.parsePath(path)
			.elements()
			.stream()
			.filter((element) -> element instanceof PathContainer.PathSegment segment
					&& !segment.valueToMatch().isEmpty())
			.map((element) -> ((PathContainer.PathSegment) element).valueToMatch())
			.toArray(String[]::new);
	}

	private static boolean isRead(HttpMethod method) {
		return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method) || HttpMethod.OPTIONS.equals(method)
				|| HttpMethod.TRACE.equals(method);
	}

}
